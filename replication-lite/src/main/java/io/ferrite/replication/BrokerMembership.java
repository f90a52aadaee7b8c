package io.ferrite.replication;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import kafka.server.KafkaConfig;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.metrics.Metrics;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.BrokerState;
import org.apache.kafka.server.BrokerLifecycleManager;
import org.apache.kafka.server.NodeToControllerChannelManagerImpl;
import org.apache.kafka.server.RaftControllerNodeProvider;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The broker's side of membership, Kafka's own: {@link BrokerLifecycleManager} (kafka-server 4.4) registers this node
 * as a broker with its listeners (BrokerRegistration), heartbeats every {@code broker.heartbeat.interval.ms}
 * (BrokerHeartbeat), is unfenced once the controller finds it caught up with the metadata log (its
 * {@link ClusterView}'s last applied offset), and at {@link #close} asks for a controlled shutdown, which moves
 * the leadership of its partitions away before it goes. It talks to the active controller over the controller
 * listener through Kafka's {@link NodeToControllerChannelManagerImpl}, which follows the raft leader
 * ({@link RaftControllerNodeProvider}) and moves on NOT_CONTROLLER.
 *
 * <p>Threads: {@code broker-N-lifecycle-manager-event-handler} and the channel's
 * {@code broker-N-to-controller-heartbeat-channel-manager}; neither is the controller's or KRaft's.
 */
public final class BrokerMembership implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(BrokerMembership.class);
    /** How long {@link #close} waits for the controller to let the broker go before it goes anyway. */
    private static final long CONTROLLED_SHUTDOWN_WAIT_MS = 30_000;

    private final BrokerLifecycleManager lifecycle;
    /** The channel's metrics, ours to close; the channel is the lifecycle manager's to start and stop. */
    private final Metrics metrics;
    /** {@link #unfenced}: the lifecycle manager's, with its give-up turned into a failure that says so. */
    private final CompletableFuture<Void> unfenced = new CompletableFuture<>();
    /** Set by {@link #close} before it stops the lifecycle manager: a cancel after it is ours, not a give-up. */
    private volatile boolean closing;

    private BrokerMembership(final BrokerLifecycleManager lifecycle, final Metrics metrics, final int nodeId,
        final long registrationTimeoutMs)
    {
        this.lifecycle = lifecycle;
        this.metrics = metrics;
        lifecycle.initialUnfenceFuture().whenComplete((done, failure) ->
        {
            if (failure == null)
            {
                unfenced.complete(null);
            }
            else if (closing)
            {
                unfenced.completeExceptionally(failure);
            }
            else
            {
                unfenced.completeExceptionally(new IllegalStateException("broker " + nodeId + " was not registered " +
                    "within initial.broker.registration.timeout.ms (" + registrationTimeoutMs + " ms): Kafka's lifecycle " +
                    "manager shut itself down (state " + lifecycle.state() + "); this node is no broker until restarted", failure));
            }
        });
    }

    /**
     * Registers this node as a broker reachable at {@code brokerListener} (listener {@code PLAINTEXT}) and keeps it
     * registered. {@code settings}: {@code broker.heartbeat.interval.ms} (2000), {@code broker.session.timeout.ms}
     * (9000), {@code rack}; {@code logDir} and {@code directoryId} are the directory its replicas live in.
     *
     * <p>{@code brokerListener} is both the listener and the endpoint advertised to the cluster: pass the address
     * others reach this node at (KafkaConfig refuses an advertised {@code 0.0.0.0}). {@code directoryId} must be the
     * log directory's persistent id (Kafka keeps it as {@code directory.id} in the directory's
     * {@code meta.properties}): a new id at each start registers a new directory, and the partitions' directories
     * recorded under the old one point at an unknown one. (Not yet done by {@code ClusterMember}, which passes a
     * random id.) The registration must succeed within {@code initial.broker.registration.timeout.ms}: see
     * {@link #unfenced}.
     */
    public static BrokerMembership start(final MetadataQuorum quorum, final ClusterView view,
        final InetSocketAddress brokerListener, final Path logDir, final Uuid directoryId, final Map<String, String> settings)
    {
        final KafkaConfig config = NodeConfig.broker(quorum, settings, brokerListener, logDir);
        final String prefix = "broker-" + quorum.nodeId() + "-";
        final Metrics metrics = new Metrics();
        final NodeToControllerChannelManagerImpl channel = new NodeToControllerChannelManagerImpl(
            RaftControllerNodeProvider.create(quorum.raftManager(), config), Time.SYSTEM, metrics, config,
            "heartbeat", prefix, (long)config.brokerSessionTimeoutMs() / 2); // Kafka's (KAFKA-14392)
        // started by the lifecycle manager's own startup (starting it here too fails that startup)
        final BrokerLifecycleManager lifecycle = new BrokerLifecycleManager(config, Time.SYSTEM, prefix,
            Map.of(logDir.toString(), directoryId));
        final BrokerRegistrationRequestData.ListenerCollection listeners = new BrokerRegistrationRequestData.ListenerCollection();
        listeners.add(new BrokerRegistrationRequestData.Listener().setName("PLAINTEXT")
            .setHost(brokerListener.getHostString()).setPort(brokerListener.getPort())
            .setSecurityProtocol(SecurityProtocol.PLAINTEXT.id));
        lifecycle.start(view::lastAppliedOffset, channel, quorum.clusterId(), listeners,
            ClusterController.supportedFeatures(), OptionalLong.empty());
        // Kafka's broker publishes its first image before it asks to be unfenced; the view publishes as it catches up
        lifecycle.initialCatchUpFuture().thenRun(lifecycle::setReadyToUnfence);
        return new BrokerMembership(lifecycle, metrics, quorum.nodeId(), config.initialRegistrationTimeoutMs());
    }

    /** Kafka's broker state: STARTING, RECOVERY (registered, fenced), RUNNING (unfenced), PENDING_CONTROLLED_SHUTDOWN, ... */
    public BrokerState state()
    {
        return lifecycle.state();
    }

    /** The epoch the controller gave this incarnation's registration, -1 before. */
    public long brokerEpoch()
    {
        return lifecycle.brokerEpoch();
    }

    /**
     * Completes when the controller has unfenced this broker the first time; Kafka's lifecycle manager completes it
     * just before its {@link #state()} moves from RECOVERY to RUNNING. Fails (IllegalStateException) if the broker was
     * not registered within {@code initial.broker.registration.timeout.ms} (60000): Kafka's lifecycle manager then
     * shuts itself down for good ({@link #state()} SHUTTING_DOWN) and Kafka's broker fails its startup, so the process
     * exits; the embedder should do the same (hand the failure to its fatal fault handler), or it keeps a node that is
     * a voter but never a broker again. Cancelled by {@link #close} before the unfence.
     */
    public CompletableFuture<Void> unfenced()
    {
        return unfenced;
    }

    /** The channel's metrics (Kafka's NetworkClient and selector metrics), for tests. */
    Metrics channelMetrics()
    {
        return metrics;
    }

    /** A controlled shutdown (leadership moved away, then fenced), waited for at most 30 s, then the threads stop. */
    @Override
    public void close() throws InterruptedException
    {
        final boolean gaveUp = unfenced.isCompletedExceptionally(); // its event queue is shut: nobody would answer
        closing = true;
        try
        {
            if (!gaveUp)
            {
                lifecycle.beginControlledShutdown();
                lifecycle.controlledShutdownFuture().get(CONTROLLED_SHUTDOWN_WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
        catch (final TimeoutException | java.util.concurrent.ExecutionException ex)
        {
            LOG.warn("broker {}: controlled shutdown not granted; going anyway", lifecycle.brokerEpoch(), ex);
        }
        finally
        {
            lifecycle.beginShutdown();
            lifecycle.close(); // shuts the channel down too
            metrics.close();
        }
    }
}
