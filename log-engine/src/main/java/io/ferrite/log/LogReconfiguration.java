package io.ferrite.log;

import io.ferrite.log.config.ConfigException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Dynamic broker configs reaching a running {@link LogManager} (Kafka's {@code DynamicLogConfig} and
 * {@code LogCleaner.reconfigure}): new topic defaults, which every log takes under its own stored overrides, and new
 * cleaner settings. Called by the broker's one writer of configs; ordered with topic creations and override changes
 * by the log manager's monitor (the cleaner's restart before it, ordered with a close by the cleaner's). A log's
 * config is one volatile reference that its owner reads: nothing on the append or fetch path waits for this.
 *
 * <p>All or nothing: the cleaner is restarted first (when it cannot start with the new settings, its old threads
 * run again), then every log's new config is computed, and only when each can be made is the change stored (the
 * caller's {@link Store}) and put in force; a failure after the cleaner's restart puts its old settings back.
 */
public final class LogReconfiguration
{
    /** Makes the change durable and visible to its readers: called once every log's new config is known. */
    @FunctionalInterface
    public interface Store
    {
        void run() throws IOException;
    }

    private LogReconfiguration()
    {
    }

    /**
     * The cleaner restarts with {@code newCleaner} when it differs (its {@code compaction} is kept: the settings only
     * are the broker's); every log's config becomes its stored overrides on {@code newDefaults} (seen by its next
     * append and background pass), logs created later start from them too; {@code store} runs between the two, under
     * the log manager's monitor.
     *
     * @throws IllegalStateException when the cleaner cannot start with {@code newCleaner} (nothing changed)
     * @throws IOException           when a log's stored overrides cannot be read or {@code store} fails (nothing changed)
     * @throws ConfigException       when a log's stored overrides are not valid (nothing changed)
     */
    public static void apply(final LogManager manager, final LogConfig newDefaults, final CleanerConfig newCleaner, final Store store)
        throws IOException
    {
        // outside the log manager's monitor: the cleaner threads are stopped and waited for here
        final CleanerConfig previous = manager.cleaner().reconfigure(newCleaner);
        boolean done = false;
        try
        {
            synchronized (manager)
            {
                final List<PartitionLog> logs = List.copyOf(manager.logs());
                final List<LogConfig> configs = new ArrayList<>(logs.size());
                for (final PartitionLog log : logs)
                {
                    configs.add(newDefaults.inForce(PartitionOverrides.read(log.dir())));
                }
                store.run();
                manager.defaults(newDefaults);
                for (int i = 0; i < logs.size(); i++)
                {
                    logs.get(i).updateConfig(configs.get(i));
                }
                done = true;
            }
        }
        finally
        {
            if (!done)
            {
                manager.cleaner().reconfigure(previous);
            }
        }
    }
}
