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
    /** The settings the threads run with: replaced by {@link #reconfigure} while no thread runs. */
    private volatile CleanerConfig cleaner;
    /** The threads' shared budget: replaced with {@link #cleaner}, while no thread runs. */
    private CleanerThrottle throttle;
    private final List<AgentRunner> runners = new ArrayList<>();
    /** Set before the threads are stopped: a clean in hand ends at its next check (no interrupt needed). */
    private volatile boolean stopping;
    /** Set by {@link #stop}: a later {@link #reconfigure} starts no thread. */
    private boolean stopped;

    LogCleaner(final LogManagerConfig config, final Object checkpointLock, final Supplier<PartitionLog[]> logs,
        final Function<Path, Iterable<PartitionLog>> logsIn)
    {
        this.config = config;
        this.manager = new CleanerManager(checkpointLock, logs, logsIn, new AgentErrors("ferrite-log-cleaner-manager"));
        this.cleaner = config.cleaner();
        this.throttle = CleanerThrottler.of(cleaner.maxIoBytesPerSecond(), config.nanoClock());
    }

    CleanerManager manager()
    {
        return manager;
    }

    /** A cleaner thread's agent, its offset map allocated (for tests to step it on their own thread). */
    CleanerAgent newAgent(final int id, final org.agrona.ErrorHandler errors)
    {
        return new CleanerAgent(id, manager, cleaner, throttle, config.clock(), config.nanoClock(), errors, () -> stopping,
            config.logDirs().isEmpty() ? null : config.logDirs().get(0));
    }

    /** Whether cleaner threads run: the retention of compacted logs is theirs then (Kafka's {@code cleanupLogs}). */
    boolean runs()
    {
        return cleaner.runs();
    }

    /**
     * Starts the cleaner threads, unless {@code log.cleaner.enable} is false, there are none, or no compaction is given.
     * Every thread's offset map is allocated before any starts, as Kafka's.
     *
     * @throws IllegalStateException when one cannot be (nothing started, the maps made freed)
     */
    synchronized void start()
    {
        if (!cleaner.runs())
        {
            LOG.info("no log cleaner: log.cleaner.enable={}, log.cleaner.threads={}, compaction {}", cleaner.enable(), cleaner.threads(),
                cleaner.compaction() == null ? "not available" : "available");
            return;
        }
        final long idleNs = TimeUnit.MILLISECONDS.toNanos(Math.max(1, Math.min(cleaner.backoffMs(), IDLE_SLEEP_MAX_MS)));
        final List<CleanerAgent> agents = new ArrayList<>();
        final List<AgentErrors> errors = new ArrayList<>();
        try
        {
            for (int i = 0; i < cleaner.threads(); i++)
            {
                errors.add(new AgentErrors("ferrite-log-cleaner-" + i));
                agents.add(newAgent(i, errors.get(i)));
            }
        }
        catch (final RuntimeException ex)
        {
            agents.forEach(CleanerAgent::onClose);
            throw ex;
        }
        for (int i = 0; i < agents.size(); i++)
        {
            runners.add(LogAgents.start(agents.get(i), errors.get(i), new SleepingIdleStrategy(idleNs)));
        }
    }

    /** {@link CleanerManager#abortAndPause} of each log: when this returns, no cleaner thread is in any of them. */
    void abortAndPause(final PartitionLog[] logs)
    {
        for (final PartitionLog log : logs)
        {
            manager.abortAndPause(log);
        }
    }

    void resume(final PartitionLog[] logs)
    {
        for (final PartitionLog log : logs)
        {
            manager.resume(log);
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

    /**
     * Stops the cleaner threads: a clean in hand ends at its next check (every 64 KiB of batches, and within
     * {@value CleanerThrottler#STOP_CHECK_MS} ms of a throttle's sleep), as Kafka's {@code checkDone}, so the
     * runner's interrupt after {@link LogAgents#STOP_WAIT_MS} is not needed.
     */
    synchronized void stop()
    {
        stopped = true;
        stopThreads();
    }

    private void stopThreads()
    {
        stopping = true;
        runners.forEach(LogAgents::stop);
        runners.clear();
    }

    /**
     * New settings, as Kafka's {@code LogCleaner.reconfigure} applies dynamic {@code log.cleaner.*} configs: the
     * threads are stopped (a clean in hand ends at its next check and is redone later from the checkpoint), the
     * throttle and the settings replaced, and the threads started again with their new offset maps. After
     * {@link #stop} only the settings change. {@code log.cleaner.enable} and the compaction stay as they are (Kafka's
     * enable is not dynamic).
     *
     * @return the settings in force before (to put back with another call)
     * @throws IllegalStateException when a new thread's offset map cannot be allocated: the threads run again with
     *     the settings in force before (which started), or none run if even those cannot start now
     */
    synchronized CleanerConfig reconfigure(final CleanerConfig settings)
    {
        final CleanerConfig previous = cleaner;
        final CleanerConfig next = cleaner.with(cleaner.enable(), settings.threads(), settings.dedupeBufferSize(),
            settings.dedupeBufferLoadFactor(), settings.ioBufferSize(), settings.maxIoBytesPerSecond(), settings.backoffMs());
        if (next.equals(previous))
        {
            return previous;
        }
        stopThreads();
        use(next);
        if (!stopped)
        {
            stopping = false;
            try
            {
                start();
            }
            catch (final IllegalStateException ex)
            {
                LOG.error("the log cleaner cannot start with its new settings, it runs with its old ones: {}", ex.getMessage());
                use(previous);
                start();
                throw ex;
            }
            LOG.info("log cleaner reconfigured: {} threads, {} bytes/s, dedupe buffer {} bytes, backoff {} ms", next.threads(),
                next.maxIoBytesPerSecond(), next.dedupeBufferSize(), next.backoffMs());
        }
        return previous;
    }

    /** The settings and throttle of the threads started next (while none runs). */
    private void use(final CleanerConfig settings)
    {
        cleaner = settings;
        throttle = CleanerThrottler.of(settings.maxIoBytesPerSecond(), config.nanoClock());
    }
}
