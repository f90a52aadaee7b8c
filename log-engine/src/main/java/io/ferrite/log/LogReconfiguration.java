package io.ferrite.log;

import java.io.IOException;
import java.util.Map;

/**
 * Dynamic broker configs reaching a running {@link LogManager} (Kafka's {@code DynamicLogConfig} and
 * {@code LogCleaner.reconfigure}): new topic defaults, which every log takes under its own stored overrides, and new
 * cleaner settings. Called by the broker's one writer of configs; ordered with topic creations and override changes
 * by the log manager's monitor (the cleaner's restart after it, ordered with a close by the cleaner's). A log's config is one volatile reference that its owner reads: nothing on the append
 * or fetch path waits for this.
 */
public final class LogReconfiguration
{
    private LogReconfiguration()
    {
    }

    /**
     * Every log's config becomes its stored overrides on {@code newDefaults} (seen by its next append and background
     * pass), logs created later start from them too; then the cleaner restarts with {@code newCleaner} when it differs
     * (its {@code compaction} is kept: the settings only are the broker's).
     *
     * @throws IOException when a log's stored overrides cannot be read (the logs before it have their new config)
     */
    public static void apply(final LogManager manager, final LogConfig newDefaults, final CleanerConfig newCleaner) throws IOException
    {
        synchronized (manager)
        {
            manager.defaults(newDefaults);
            for (final PartitionLog log : manager.logs())
            {
                final Map<String, String> overrides = PartitionOverrides.read(log.dir());
                log.updateConfig(newDefaults.with(overrides));
            }
        }
        // outside the log manager's monitor: the cleaner threads are stopped and waited for here
        manager.cleaner().reconfigure(newCleaner);
    }
}
