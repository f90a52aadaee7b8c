package io.ferrite.broker;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CountersFile;
import io.ferrite.broker.metrics.MetricsExports;
import io.ferrite.broker.net.Acceptor;
import io.ferrite.broker.net.NetworkThread;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.Path;

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

    /** The setting the log directories came from, to name it in a message. */
    static String logDirSetting(final BrokerConfig config)
    {
        return config.values().containsKey(BrokerConfig.LOG_DIRS) ? BrokerConfig.LOG_DIRS : BrokerConfig.LOG_DIR;
    }

    /** Binds the first listener, naming the listener setting when the address cannot be had. */
    static Acceptor bind(final BrokerConfig config, final NetworkThread[] networkThreads) throws IOException
    {
        final String host = BrokerConfig.listenerHost(config.listeners());
        final int port = BrokerConfig.listenerPort(config.listeners());
        final String listener = "PLAINTEXT://" + host + ":" + port;
        try
        {
            return new Acceptor(host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port), networkThreads);
        }
        catch (final BindException ex) // in use, not an address of this machine, or a privileged port
        {
            throw new StartupException(BrokerConfig.LISTENERS + ": cannot listen on " + listener + ": " + bindReason(ex), ex);
        }
        catch (final UnresolvedAddressException ex)
        {
            throw new StartupException(BrokerConfig.LISTENERS + ": cannot listen on " + listener + ": unknown host " + host, ex);
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
    static BrokerCounters counters(final Path dir, final int networkThreads) throws StartupException
    {
        if (networkThreads > BrokerCounters.maxNetworkThreads())
        {
            throw new StartupException(BrokerConfig.NUM_NETWORK_THREADS + "=" + networkThreads + ": the counters file holds "
                + "the counters of " + BrokerCounters.maxNetworkThreads() + " network threads at most");
        }
        try
        {
            return BrokerCounters.create(dir, networkThreads);
        }
        catch (final IOException ex)
        {
            // a broker starts and serves on a full disk (DiskFullBrokerTest): its counters then live in memory only
            LOG.warn("cannot make the counters file {} ({} bytes): {}; the counters are kept in memory, not readable by "
                + "ferrite-stat", dir.resolve(CountersFile.NAME), CountersFile.length(BrokerCounters.CAPACITY),
                StartupException.reason(ex));
            return BrokerCounters.inMemory(networkThreads, BrokerCounters.CAPACITY);
        }
    }

    private static String bindReason(final BindException ex)
    {
        final String reason = ex.getMessage() == null ? "cannot bind" : ex.getMessage();
        return reason.contains("in use") ? reason + " (another broker running?)" : reason;
    }
}
