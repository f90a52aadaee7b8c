package io.ferrite.broker;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.prometheus.PrometheusEndpoint;
import io.ferrite.broker.net.Acceptor;
import io.ferrite.broker.net.NetworkThread;

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
     * Starts the Prometheus endpoint where {@code ferrite.metrics.listener} says (null when it is not set), once the
     * broker started; an address that cannot be had closes the broker and names the setting.
     */
    static PrometheusEndpoint prometheus(final BrokerConfig config, final Broker broker) throws IOException
    {
        final InetSocketAddress address = config.metricsListener();
        if (address == null)
        {
            return null;
        }
        try
        {
            return PrometheusEndpoint.start(address, broker.counters().reader());
        }
        catch (final IOException ex)
        {
            try
            {
                broker.close();
            }
            catch (final IOException closing)
            {
                ex.addSuppressed(closing);
            }
            throw new StartupException(BrokerConfig.METRICS_LISTENER + "=" + config.getString(BrokerConfig.METRICS_LISTENER)
                + ": cannot listen: " + StartupException.reason(ex), ex);
        }
    }

    private static String bindReason(final BindException ex)
    {
        final String reason = ex.getMessage() == null ? "cannot bind" : ex.getMessage();
        return reason.contains("in use") ? reason + " (another broker running?)" : reason;
    }
}
