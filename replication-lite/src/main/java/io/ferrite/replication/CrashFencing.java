package io.ferrite.replication;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.HashMap;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

import org.apache.kafka.common.config.ConfigException;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.controller.Controller;
import org.apache.kafka.controller.ControllerRequestContext;
import org.apache.kafka.metadata.BrokerRegistration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ferrite's own addition to Kafka's fencing ({@value #SETTING}): the active controller fences a broker whose process
 * is gone as soon as it knows, instead of {@code broker.session.timeout.ms} (9 s) after its last heartbeat. A crashed
 * process's sockets are closed by its kernel at once (FIN or RST), so the connection that carried its heartbeats ends;
 * and a connection to its listener is then refused (nothing listens on the port any more). Neither holds for a broker
 * that is alive but slow: a GC pause or a SIGSTOP keeps its connections open and its listener accepting (the kernel
 * completes the handshake into the listen backlog), and a network partition that drops packets closes nothing and
 * refuses nothing. So the fence comes when all three hold: the heartbeat connection closed (or, on a newly active
 * controller, the broker has not heartbeated here yet), no heartbeat came within the grace of {@value #SETTING} ms,
 * and a connection to the broker's registered listener is refused. Anything else (the listener answers, or does not
 * answer within the probe's timeout) leaves the broker to Kafka's session timeout, probed again every grace while it
 * stays silent.
 *
 * <p>The fence itself is Kafka's: a BrokerHeartbeat with {@code wantFence} at the broker's registered epoch, handed to
 * Kafka's controller as a broker's own would be ({@code BrokerHeartbeatManager}: "Unfenced broker N has requested
 * and been granted fencing"), so the controller fences it exactly as at a session timeout — leaders moved to other
 * members of the ISR, the ISR shrunk, no unclean election unless configured, epochs bumped. A broker fenced wrongly
 * (its listener refused while it lived) is unfenced by its next heartbeat, as Kafka unfences a broker whose session
 * had timed out; a broker that re-registered meanwhile has a new epoch, and the controller refuses the stale one.
 *
 * <p>Threads: {@code controller-N-crash-fencing}, which ticks every {@value #TICK_MS} ms (watches the controller
 * become active or not, probes the due suspects: a connect of at most {@link #probeTimeoutMs} each).
 */
final class CrashFencing implements AutoCloseable
{
    /** Ferrite's setting: the grace in ms; -1 turns it off (Kafka's behaviour: only the session timeout fences). */
    static final String SETTING = "ferrite.cluster.crash.fence.ms";
    static final long DEFAULT_GRACE_MS = 500;
    /**
     * How often the due suspects are looked at: 100 ms is a fifth of the default grace, and a tick with nothing due
     * costs one lock and a volatile read.
     */
    static final long TICK_MS = 100;
    /** The probe's connect timeout at most: a refusal on a live host comes within a round trip; no answer is no fence. */
    private static final int MAX_PROBE_TIMEOUT_MS = 1000;
    private static final Logger LOG = LoggerFactory.getLogger(CrashFencing.class);

    /** What a connection attempt to a broker's listener found. */
    enum Probe
    {
        /** Refused: nothing listens there, the process is gone. */
        REFUSED,
        /** Accepted: something listens (the broker, paused or not, or a proxy in front of it). */
        ACCEPTED,
        /** Neither within the timeout, or another failure (no route, ...): nothing can be said. */
        UNKNOWN
    }

    private final int nodeId;
    private final Controller controller;
    private final BooleanSupplier controllerActive;
    private final Supplier<Map<Integer, BrokerRegistration>> brokers;
    private final CrashSuspects suspects;
    private final long graceMs;
    private final int probeTimeoutMs;
    private final ScheduledExecutorService thread;

    private CrashFencing(final int nodeId, final Controller controller, final BooleanSupplier controllerActive,
        final Supplier<Map<Integer, BrokerRegistration>> brokers, final long graceMs)
    {
        this.nodeId = nodeId;
        this.controller = controller;
        this.controllerActive = controllerActive;
        this.brokers = brokers;
        this.graceMs = graceMs;
        this.suspects = new CrashSuspects(graceMs);
        this.probeTimeoutMs = (int)Math.min(Math.max(graceMs, 100), MAX_PROBE_TIMEOUT_MS);
        this.thread = Executors.newSingleThreadScheduledExecutor(r ->
        {
            final Thread t = new Thread(r, "controller-" + nodeId + "-crash-fencing");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The grace {@code settings} give ({@value #SETTING}, default {@value #DEFAULT_GRACE_MS}), or -1: off.
     *
     * @throws ConfigException naming the setting when it is not a whole number of ms, -1 or more
     */
    static long graceMs(final Map<String, String> settings)
    {
        final String value = settings.get(SETTING);
        if (value == null)
        {
            return DEFAULT_GRACE_MS;
        }
        try
        {
            final long grace = Long.parseLong(value.trim());
            if (grace >= -1)
            {
                return grace;
            }
        }
        catch (final NumberFormatException ex)
        {
            // told below
        }
        throw new ConfigException(SETTING, value, "a grace in ms, 0 or more, or -1 (off)");
    }

    /**
     * Starts fencing crashed brokers on {@code controller} (this node's, {@code nodeId}), which is active while
     * {@code controllerActive} says so, the brokers' registrations read from {@code brokers} (the node's metadata
     * image); null when {@code graceMs} is -1 (off).
     */
    static CrashFencing start(final int nodeId, final Controller controller, final BooleanSupplier controllerActive,
        final Supplier<Map<Integer, BrokerRegistration>> brokers, final long graceMs)
    {
        if (graceMs < 0)
        {
            return null;
        }
        final CrashFencing fencing = new CrashFencing(nodeId, controller, controllerActive, brokers, graceMs);
        fencing.thread.scheduleWithFixedDelay(fencing::tickQuietly, TICK_MS, TICK_MS, TimeUnit.MILLISECONDS);
        return fencing;
    }

    /** What the controller listener tells: heartbeats and lost heartbeat connections. */
    CrashSuspects suspects()
    {
        return suspects;
    }

    private void tickQuietly()
    {
        try
        {
            tick(nowMs());
        }
        catch (final RuntimeException ex)
        {
            LOG.warn("crash fencing on node {}: a tick failed (the session timeout still fences)", nodeId, ex);
        }
    }

    /** One duty cycle at {@code nowMs}: follows the controller's activity, probes what is due, fences the refused. */
    void tick(final long nowMs)
    {
        final boolean active = controllerActive.getAsBoolean();
        if (active && !suspects.active())
        {
            suspects.activated(unfencedOthers(), nowMs);
        }
        else if (!active && suspects.active())
        {
            suspects.deactivated();
        }
        for (final CrashSuspects.Suspect suspect : suspects.due(nowMs))
        {
            check(suspect);
        }
    }

    private Map<Integer, Long> unfencedOthers()
    {
        final Map<Integer, Long> unfenced = new HashMap<>();
        brokers.get().forEach((id, broker) ->
        {
            if (id != nodeId && !broker.fenced() && !broker.inControlledShutdown())
            {
                unfenced.put(id, broker.epoch());
            }
        });
        return unfenced;
    }

    private void check(final CrashSuspects.Suspect suspect)
    {
        final BrokerRegistration broker = brokers.get().get(suspect.broker());
        if (broker == null || broker.fenced() || broker.inControlledShutdown() || broker.epoch() != suspect.epoch())
        {
            return; // fenced already, leaving by a controlled shutdown, or registered again: nothing to do
        }
        final var endpoint = broker.listeners().values().stream().findFirst().orElse(null);
        if (endpoint == null)
        {
            return;
        }
        final InetSocketAddress address = new InetSocketAddress(endpoint.host(), endpoint.port());
        final Probe probe = probe(address, probeTimeoutMs);
        if (probe != Probe.REFUSED || !suspects.stands(suspect))
        {
            suspects.rearm(suspect, nowMs());
            return;
        }
        fence(suspect, address);
    }

    private void fence(final CrashSuspects.Suspect suspect, final InetSocketAddress address)
    {
        LOG.warn("broker {} (epoch {}): no heartbeat within {} ms of losing its heartbeat connection (or of this " +
            "controller's activation), and its listener {} refuses connections: its process is gone, fencing it now " +
            "({}={}, instead of broker.session.timeout.ms)", suspect.broker(), suspect.epoch(), graceMs, address, SETTING,
            graceMs);
        final BrokerHeartbeatRequestData fence = new BrokerHeartbeatRequestData().setBrokerId(suspect.broker())
            .setBrokerEpoch(suspect.epoch()).setCurrentMetadataOffset(suspects.lastOffset(suspect.broker()))
            .setWantFence(true).setWantShutDown(false);
        final ControllerRequestContext context = new ControllerRequestContext(new RequestHeaderData()
            .setRequestApiKey(ApiKeys.BROKER_HEARTBEAT.id).setRequestApiVersion(ApiKeys.BROKER_HEARTBEAT.latestVersion())
            .setClientId("ferrite-crash-fencing-" + nodeId), KafkaPrincipal.ANONYMOUS, OptionalLong.empty());
        controller.processBrokerHeartbeat(context, fence).whenComplete((reply, failure) ->
        {
            if (failure != null)
            {
                // STALE_BROKER_EPOCH (registered again), NOT_CONTROLLER (no longer active): the session timeout decides
                LOG.info("fencing broker {} (epoch {}) not done: {}", suspect.broker(), suspect.epoch(), failure.toString());
            }
            else
            {
                LOG.warn("broker {} (epoch {}) fenced: {}", suspect.broker(), suspect.epoch(),
                    reply.isFenced() ? "the controller moved its leaderships" : "the controller did not fence it");
            }
        });
    }

    /** A connection attempt to {@code address} within {@code timeoutMs}, closed at once. */
    static Probe probe(final InetSocketAddress address, final int timeoutMs)
    {
        if (address.isUnresolved())
        {
            return Probe.UNKNOWN;
        }
        try (Socket socket = new Socket())
        {
            socket.connect(address, timeoutMs);
            return Probe.ACCEPTED;
        }
        catch (final ConnectException ex)
        {
            // ECONNREFUSED (a timeout is a SocketTimeoutException, no route a NoRouteToHostException: neither is this)
            return Probe.REFUSED;
        }
        catch (final IOException ex)
        {
            return Probe.UNKNOWN;
        }
    }

    private static long nowMs()
    {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime());
    }

    @Override
    public void close() throws InterruptedException
    {
        thread.shutdownNow();
        thread.awaitTermination(5, TimeUnit.SECONDS);
    }
}
