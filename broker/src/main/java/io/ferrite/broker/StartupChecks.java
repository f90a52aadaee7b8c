package io.ferrite.broker;

import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ListenerEndpoints;
import io.ferrite.broker.config.ListenerSecurity;
import io.ferrite.broker.config.TlsSettings;
import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CountersFile;
import io.ferrite.broker.metrics.MetricsExports;
import io.ferrite.broker.net.Acceptor;
import io.ferrite.broker.net.Acceptors;
import io.ferrite.broker.net.Listener;
import io.ferrite.broker.acl.Authorizer;
import io.ferrite.broker.quota.ClientQuotas;
import io.ferrite.broker.scram.ScramCredentials;
import io.ferrite.broker.net.NetworkThread;
import io.ferrite.broker.net.TlsEngines;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The checks of what the user gave the broker to run on, made before anything is opened so that a
 * mistake is one line naming the setting (see {@link StartupException}) rather than an exception
 * from deep inside the log manager.
 */
final class StartupChecks
{
    private static final Logger LOG = LoggerFactory.getLogger(StartupChecks.class);

    private StartupChecks()
    {
    }

    /**
     * Every log directory exists (created if need be), is a directory, and takes a new file: the
     * broker writes {@code meta.properties}, a lock file and segments there, and a directory that
     * refuses them would otherwise fail half-way through opening the logs. Writability is tried
     * rather than asked, because {@code access(2)} answers yes to root on file systems (sysfs, some
     * read-only mounts) that then refuse the write.
     */
    static void logDirs(final BrokerConfig config) throws StartupException
    {
        final String setting = logDirSetting(config);
        for (final Path dir : config.logDirs())
        {
            if (Files.exists(dir) && !Files.isDirectory(dir))
            {
                throw new StartupException(setting + ": " + dir + " is not a directory");
            }
            try
            {
                Files.createDirectories(dir);
            }
            catch (final IOException ex)
            {
                throw new StartupException(setting + ": cannot create the directory " + dir + ": " + StartupException.reason(ex), ex);
            }
            try
            {
                Files.delete(Files.createTempFile(dir, ".ferrite-write-check", null));
            }
            catch (final IOException ex)
            {
                throw new StartupException(setting + ": " + dir + " is not writable: " + StartupException.reason(ex), ex);
            }
        }
    }

    /**
     * Reads the SCRAM credentials of the first log directory (once the broker holds its lock, before a connection is
     * served); a file that cannot be read whole stops the start — one line naming it, never its content — since starting
     * without it would refuse every SCRAM user.
     */
    static void scramCredentials(final ScramCredentials scram, final Path firstDir) throws StartupException
    {
        try
        {
            scram.load(firstDir);
        }
        catch (final IOException ex)
        {
            throw new StartupException(ScramCredentials.fileIn(firstDir) + ": " + StartupException.reason(ex), ex);
        }
    }

    /** Reads the client quotas' file (single node), or stops the start naming it: a damaged one would lift every quota. */
    static void clientQuotas(final ClientQuotas quotas, final Path firstDir) throws StartupException
    {
        try
        {
            quotas.load(firstDir);
        }
        catch (final IOException ex)
        {
            throw new StartupException(ClientQuotas.fileIn(firstDir) + ": " + StartupException.reason(ex), ex);
        }
    }

    /**
     * Reads the ACLs of the first log directory, as {@link #scramCredentials} reads the credentials: a file that cannot be
     * read whole stops the start, since starting without it would change who may do what without a word.
     */
    static void acls(final Authorizer authorizer, final Path firstDir) throws StartupException
    {
        try
        {
            authorizer.load(firstDir);
        }
        catch (final IOException ex)
        {
            throw new StartupException(Authorizer.fileIn(firstDir) + ": " + StartupException.reason(ex), ex);
        }
    }

    /** The setting the log directories came from, to name it in a message. */
    static String logDirSetting(final BrokerConfig config)
    {
        return config.values().containsKey(BrokerConfig.LOG_DIRS) ? BrokerConfig.LOG_DIRS : BrokerConfig.LOG_DIR;
    }

    /**
     * Binds every broker listener of {@code listeners} (each its own acceptor, all on {@code networkThreads}), naming the
     * listener setting when an address cannot be had; what was bound before a failure is closed.
     */
    static Acceptors bind(final BrokerConfig config, final NetworkThread[] networkThreads, final ScramCredentials scram) throws IOException
    {
        final Acceptors acceptors = new Acceptors();
        try
        {
            for (final ListenerEndpoints.Endpoint e : ListenerSecurity.brokerListeners(config))
            {
                final Listener listener = listener(config, e, scram);
                acceptors.add(listener, bind(e, networkThreads, listener));
            }
            return acceptors;
        }
        catch (final IOException | RuntimeException ex)
        {
            try
            {
                acceptors.close();
            }
            catch (final IOException closing)
            {
                ex.addSuppressed(closing);
            }
            throw ex;
        }
    }

    private static Listener listener(final BrokerConfig config, final ListenerEndpoints.Endpoint e, final ScramCredentials scram)
    {
        final boolean sasl = e.protocol().startsWith("SASL_");
        TlsEngines tls = null;
        if (e.protocol().endsWith("SSL"))
        {
            if (TlsSettings.brokerClientAuthIgnored(config, e))
            {
                LOG.warn(TlsSettings.CLIENT_AUTH_IGNORED + " (listener {})", e.name());
            }
            final TlsSettings.Server server = TlsSettings.server(config, e);
            tls = new TlsEngines(server.context(), server.protocols(), server.cipherSuites(), server.clientAuth());
        }
        return new Listener(e.name(), e.protocol(), sasl ? ListenerSecurity.mechanisms(config, e) : List.of(),
            sasl ? ListenerSecurity.plainUsers(config, e) : Map.of(), scram, config.getInt(ListenerSecurity.FAILED_AUTHENTICATION_DELAY_MS), tls,
            idleMs(config.getLong(ListenerSecurity.CONNECTIONS_MAX_IDLE_MS)), saslMaxReceiveSize(config),
            sasl ? ListenerSecurity.reauthMs(config, e) : Map.of());
    }

    /**
     * {@code sasl.server.max.receive.size}: -1 is Kafka's NetworkReceive.UNLIMITED, here bounded as every frame by
     * {@code socket.request.max.bytes} (tls review 1, L1: it refused every SASL login); another value as given.
     */
    private static int saslMaxReceiveSize(final BrokerConfig config)
    {
        final int setting = config.getInt(ListenerSecurity.SASL_SERVER_MAX_RECEIVE_SIZE);
        return setting == -1 ? config.getInt(BrokerConfig.SOCKET_REQUEST_MAX_BYTES) : setting;
    }

    /** {@code connections.max.idle.ms}: negative is never, as Kafka's Selector then keeps no idle expiry. */
    private static long idleMs(final long setting)
    {
        return setting < 0 ? Long.MAX_VALUE : setting;
    }

    private static Acceptor bind(final ListenerEndpoints.Endpoint e, final NetworkThread[] networkThreads, final Listener listener)
        throws IOException
    {
        try
        {
            return new Acceptor(e.host().isEmpty() ? new InetSocketAddress(e.port()) : new InetSocketAddress(e.host(), e.port()),
                networkThreads, listener);
        }
        catch (final BindException ex) // in use, not an address of this machine, or a privileged port
        {
            throw new StartupException(BrokerConfig.LISTENERS + ": cannot listen on " + e + ": " + bindReason(ex), ex);
        }
        catch (final UnresolvedAddressException ex)
        {
            throw new StartupException(BrokerConfig.LISTENERS + ": cannot listen on " + e + ": unknown host " + e.host(), ex);
        }
    }

    /**
     * Tells each listener what it advertises ({@code advertised.listeners}, else {@code listeners}; a host of "": 127.0.0.1,
     * a port of 0: the one bound), and {@code metadata} the first listener's (a cluster registers that one).
     */
    static void advertise(final BrokerConfig config, final Acceptors acceptors, final MetadataHandler[] metadata) throws IOException
    {
        final Map<String, ListenerEndpoints.Endpoint> advertised = ListenerSecurity.advertised(config);
        for (int i = 0; i < acceptors.listeners().size(); i++)
        {
            final Listener listener = acceptors.listeners().get(i);
            final ListenerEndpoints.Endpoint e = advertised.get(listener.name());
            listener.advertise(e.host().isEmpty() ? "127.0.0.1" : e.host(), e.port() == 0 ? acceptors.address(i).getPort() : e.port());
            LOG.info("listener {} on {}, advertised as {}:{}{}", listener, acceptors.address(i), listener.advertisedHost(),
                listener.advertisedPort(), listener.sasl() ? ", SASL mechanisms " + listener.mechanisms() : "");
        }
        final Listener first = acceptors.listeners().get(0);
        for (final MetadataHandler m : metadata)
        {
            m.advertise(first.advertisedHost(), first.advertisedPort());
        }
    }

    /**
     * Starts what the broker exports to readers outside it ({@link MetricsExports}: the MBeans, and the Prometheus
     * endpoint where {@code ferrite.metrics.listener} says), once the broker started. Any failure closes the broker (the
     * caller has none to close) — an Error too: Prometheus' client reads its {@code io.prometheus.*} properties in a
     * static initializer, and a malformed one fails there as an {@code ExceptionInInitializerError}; an address that
     * cannot be had names the setting.
     */
    static MetricsExports exports(final BrokerConfig config, final Broker broker, final boolean aloneController)
        throws IOException
    {
        try
        {
            return MetricsExports.start(broker.counters(), broker.topics(), aloneController, metricsAddress(config));
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            try
            {
                broker.close();
            }
            catch (final IOException closing)
            {
                ex.addSuppressed(closing);
            }
            if (ex instanceof IOException && !(ex instanceof StartupException))
            {
                throw new StartupException(BrokerConfig.METRICS_LISTENER + "=" + config.getString(BrokerConfig.METRICS_LISTENER)
                    + ": cannot listen: " + StartupException.reason(ex), ex);
            }
            throw ex;
        }
    }

    /** The Prometheus endpoint's address, its host resolved now (not when the config is read), or null: none. */
    private static InetSocketAddress metricsAddress(final BrokerConfig config) throws StartupException
    {
        final InetSocketAddress unresolved = config.metricsListener();
        if (unresolved == null)
        {
            return null;
        }
        final InetSocketAddress address = new InetSocketAddress(unresolved.getHostString(), unresolved.getPort());
        if (address.isUnresolved())
        {
            throw new StartupException(BrokerConfig.METRICS_LISTENER + "=" + config.getString(BrokerConfig.METRICS_LISTENER)
                + ": cannot listen: unknown host " + unresolved.getHostString());
        }
        return address;
    }

    /** The counters file, made whole at the start: a full disk or too many network threads stop the start here. */
    static BrokerCounters counters(final Path dir, final int networkThreads, final boolean recording) throws StartupException
    {
        if (networkThreads > BrokerCounters.maxNetworkThreads())
        {
            throw new StartupException(BrokerConfig.NUM_NETWORK_THREADS + "=" + networkThreads + ": the counters file holds "
                + "the counters of " + BrokerCounters.maxNetworkThreads() + " network threads at most");
        }
        try
        {
            return BrokerCounters.create(dir, networkThreads, recording);
        }
        catch (final IOException ex)
        {
            // a broker starts and serves on a full disk (DiskFullBrokerTest): its counters then live in memory only
            LOG.warn("cannot make the counters file {} ({} bytes): {}; the counters are kept in memory, not readable by "
                + "ferrite-stat", dir.resolve(CountersFile.NAME), CountersFile.length(BrokerCounters.CAPACITY),
                StartupException.reason(ex));
            return BrokerCounters.inMemory(networkThreads, BrokerCounters.CAPACITY, recording);
        }
    }

    private static String bindReason(final BindException ex)
    {
        final String reason = ex.getMessage() == null ? "cannot bind" : ex.getMessage();
        return reason.contains("in use") ? reason + " (another broker running?)" : reason;
    }
}
