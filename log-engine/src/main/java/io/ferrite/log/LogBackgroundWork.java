package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingIdleStrategy;

import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The log manager's background work apart from group commit, three {@link org.agrona.concurrent.Agent}s
 * each on a thread of its own: the {@link Preallocator} (mapped strategy), the {@link LogScheduler}
 * (checkpoints, retention, flush.ms, deferred closes of deleted segments) and the {@link RolledFlusher}.
 * Owns their runners and stops them; what they do to the logs is the logs' own methods.
 *
 * <p>For tests, the scheduler can be left to an {@link AgentInvoker} the test steps
 * ({@link #schedulerInvoker()}), with a clock of its own in the config: what is due then runs on the
 * test's thread, when the test says.
 */
final class LogBackgroundWork
{
    /**
     * How long a stop waits for a rolled segment's fsync in hand before interrupting it (which closes
     * the channel, so the log's close reports it and the next open recovers): as the executor it
     * replaces waited, since a sealed segment's fsync under a flat-out writer can take seconds.
     */
    private static final int ROLLED_FLUSH_STOP_WAIT_MS = 30_000;

    private final LogManagerConfig config;
    private final Supplier<PartitionLog[]> logs;
    private final boolean schedulerStepped;
    private final AgentErrors schedulerErrors = new AgentErrors("ferrite-log-scheduler");
    private final AgentErrors rolledFlushErrors = new AgentErrors("ferrite-rolled-flusher");
    private final RolledFlusher rolledFlusher;
    private LogScheduler scheduler;
    private AgentInvoker schedulerInvoker;
    private AgentRunner schedulerRunner;
    private AgentRunner rolledFlusherRunner;
    private AgentRunner preallocator;

    LogBackgroundWork(final LogManagerConfig config, final Supplier<PartitionLog[]> logs)
    {
        this(config, logs, false);
    }

    /** {@code schedulerStepped}: the scheduler runs only when a test invokes {@link #schedulerInvoker()}. */
    LogBackgroundWork(final LogManagerConfig config, final Supplier<PartitionLog[]> logs, final boolean schedulerStepped)
    {
        this.config = config;
        this.logs = logs;
        this.schedulerStepped = schedulerStepped;
        this.rolledFlusher = new RolledFlusher(logs, rolledFlushErrors);
    }

    /** Starts the preallocator (mapped strategy), the scheduler with its periodic duties, and the rolled-segment flusher. */
    void start(final LogScheduler.Duty checkpoint, final LogScheduler.Duty retention, final Consumer<PartitionLog> requestFlush)
    {
        if (config.writeStrategy() == WriteStrategy.MAPPED)
        {
            final AgentErrors errors = new AgentErrors("ferrite-preallocator");
            preallocator = LogAgents.start(new Preallocator(logs, errors), errors, new SleepingIdleStrategy(Preallocator.PERIOD_NS));
        }
        scheduler = new LogScheduler(config, logs, checkpoint, retention, requestFlush, schedulerErrors);
        if (schedulerStepped)
        {
            schedulerInvoker = new AgentInvoker(schedulerErrors, null, scheduler);
            schedulerInvoker.start(); // the scheduler's thread is the test's: the due times count from now
        }
        else
        {
            schedulerRunner = LogAgents.start(scheduler, schedulerErrors, scheduler.idleStrategy());
        }
        rolledFlusherRunner = LogAgents.start(rolledFlusher, rolledFlushErrors,
            new SleepingIdleStrategy(RolledFlusher.IDLE_PARK_NS));
    }

    /** Flushes a log's rolled segments on the rolled-segment flusher's thread (see {@link LogEnvironment#flushInBackground}). */
    void flushInBackground(final PartitionLog log)
    {
        rolledFlusher.request(log);
    }

    /**
     * Closes and unmaps a deleted segment after {@code delayMs}; when the manager stops first (or has
     * stopped, or never started its scheduler), closes it at once but leaves its mappings to the GC,
     * since its readers were promised the delay.
     */
    void closeLater(final Segment segment, final long delayMs)
    {
        final LogScheduler s = scheduler;
        if (s != null)
        {
            s.closeLater(segment, delayMs);
            return;
        }
        LogEnvironment.INLINE.closeLater(segment, delayMs);
    }

    /** {@link LogEnvironment#retentionRollWanted}: the config's {@link WriterTasks} have the log's writer roll. */
    void retentionRollWanted(final PartitionLog log)
    {
        config.writerTasks().retentionRollDue(log);
    }

    /** {@link LogEnvironment#retentionSoon}: the scheduler's next cycle runs a retention pass (none before it starts). */
    void retentionSoon()
    {
        final LogScheduler s = scheduler;
        if (s != null)
        {
            s.retentionSoon();
        }
    }

    /**
     * Removes a deleted partition's renamed directory once {@code delayMs} has passed
     * ({@link LogScheduler#removeLater}); before the scheduler runs, at once.
     */
    void removeLater(final java.nio.file.Path dir, final long delayMs) throws java.io.IOException
    {
        final LogScheduler s = scheduler;
        if (s != null)
        {
            s.removeLater(dir, delayMs);
            return;
        }
        PartitionDirs.deleteRecursively(dir);
    }

    /**
     * Stops the scheduler and the rolled-segment flusher after the cycle in hand (no periodic duty
     * starts after this; a deferred close asked for from now on is done at once, mappings to the GC).
     */
    void stopTasks()
    {
        if (scheduler != null)
        {
            scheduler.stopping();
        }
        LogAgents.stop(schedulerRunner, LogAgents.STOP_WAIT_MS);
        if (schedulerInvoker != null)
        {
            schedulerInvoker.close();
        }
        LogAgents.stop(rolledFlusherRunner, ROLLED_FLUSH_STOP_WAIT_MS);
    }

    /**
     * After {@link #stopTasks} (and the group committers' stop): waits for the preallocator to end and
     * closes the deleted segments still waiting, their mappings left to the GC (their delay has not passed).
     */
    void stopThreads()
    {
        LogAgents.stop(preallocator, LogAgents.STOP_WAIT_MS);
        if (scheduler != null)
        {
            scheduler.closeWaiting();
        }
    }

    /** The stepped scheduler (see the constructor), started; null when it runs on its own thread. */
    AgentInvoker schedulerInvoker()
    {
        return schedulerInvoker;
    }

    RolledFlusher rolledFlusher()
    {
        return rolledFlusher;
    }

    /** The logs the background work goes over (the manager's log array): for tests. */
    PartitionLog[] logs()
    {
        return logs.get();
    }

    LogScheduler scheduler()
    {
        return scheduler;
    }

    AgentErrors schedulerErrors()
    {
        return schedulerErrors;
    }

    AgentErrors rolledFlushErrors()
    {
        return rolledFlushErrors;
    }
}
