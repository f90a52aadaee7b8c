package io.ferrite.log;

import io.ferrite.log.clean.CleanerThrottle;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingIdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The log manager's log cleaner (Kafka's {@code LogCleaner}): the {@link CleanerManager} (always, for the
 * {@code cleaner-offset-checkpoint} files) and, when {@link CleanerConfig#runs()}, {@code log.cleaner.threads}
 * {@link CleanerAgent}s each on a thread of its own, sharing one {@link CleanerThrottler}. Stopped before
 * the logs close.
 */
final class LogCleaner
{
    private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);
    /**
     * A cleaner thread with nothing to do sleeps this long at most per idle cycle, so that a stop does not
     * wait for a whole {@code log.cleaner.backoff.ms} (15 s by default); its duty cycle counts the backoff.
     */
    private static final long IDLE_SLEEP_MAX_MS = 100;

    private final LogManagerConfig config;
    private final CleanerManager manager;
    private final CleanerThrottle throttle;
    private final List<AgentRunner> runners = new ArrayList<>();

    LogCleaner(final LogManagerConfig config, final Object checkpointLock, final Supplier<PartitionLog[]> logs,
        final Function<Path, Iterable<PartitionLog>> logsIn)
    {
        this.config = config;
        this.manager = new CleanerManager(checkpointLock, logs, logsIn, new AgentErrors("ferrite-log-cleaner-manager"));
        this.throttle = CleanerThrottler.of(config.cleaner().maxIoBytesPerSecond(), config.nanoClock());
    }

    CleanerManager manager()
    {
        return manager;
    }

    /** A cleaner thread's agent (for tests to step it on their own thread). */
    CleanerAgent newAgent(final int id, final org.agrona.ErrorHandler errors)
    {
        return new CleanerAgent(id, manager, config.cleaner(), throttle, config.clock(), errors);
    }

    /** Starts the cleaner threads, unless {@code log.cleaner.enable} is false, there are none, or no compaction is given. */
    void start()
    {
        final CleanerConfig cleaner = config.cleaner();
        if (!cleaner.runs())
        {
            LOG.info("no log cleaner: log.cleaner.enable={}, log.cleaner.threads={}, compaction {}", cleaner.enable(), cleaner.threads(),
                cleaner.compaction() == null ? "not available" : "available");
            return;
        }
        final long idleNs = TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(cleaner.backoffMs(), IDLE_SLEEP_MAX_MS)));
        for (int i = 0; i < cleaner.threads(); i++)
        {
            final AgentErrors errors = new AgentErrors("ferrite-log-cleaner-" + i);
            runners.add(LogAgents.start(newAgent(i, errors), errors, new SleepingIdleStrategy(idleNs)));
        }
    }

    /** The cleaner threads started (for tests). */
    List<Thread> threads()
    {
        final List<Thread> threads = new ArrayList<>();
        for (final AgentRunner runner : runners)
        {
            threads.add(runner.thread());
        }
        return threads;
    }

    /** Reads a log directory's {@code cleaner-offset-checkpoint} (its logs loaded). */
    void load(final Path dir) throws IOException
    {
        manager.load(dir);
    }

    /** Stops the cleaner threads; a clean in hand ends at its next throttle check or is interrupted after {@link LogAgents#STOP_WAIT_MS}. */
    void stop()
    {
        runners.forEach(LogAgents::stop);
        runners.clear();
    }
}
