package io.ferrite.log;

import org.agrona.concurrent.AgentRunner;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The log manager's background work apart from group commit: the {@link Preallocator} agent, the
 * scheduler (checkpoints, retention, flush.ms, deferred closes of deleted segments) and the
 * rolled-segment flusher. Owns those threads and stops them; what they do to the logs is the
 * logs' own methods.
 */
final class LogBackgroundWork
{
    private static final Logger LOG = LoggerFactory.getLogger(LogBackgroundWork.class);

    private final LogManagerConfig config;
    /** The logs as an array: iterating it allocates nothing (the map's iterators would). */
    private final Supplier<PartitionLog[]> logs;
    private final ScheduledThreadPoolExecutor scheduler;
    /** Rolled segments' fsyncs, apart from the scheduler: one can take seconds under a flat-out writer. */
    private final ExecutorService rolledFlusher;
    private final Queue<Segment> pendingCloses = new ConcurrentLinkedQueue<>();
    private AgentRunner preallocator;

    LogBackgroundWork(final LogManagerConfig config, final Supplier<PartitionLog[]> logs)
    {
        this.config = config;
        this.logs = logs;
        this.scheduler = new ScheduledThreadPoolExecutor(1, r ->
        {
            final Thread t = new Thread(r, "ferrite-log-scheduler");
            t.setDaemon(true);
            return t;
        });
        this.rolledFlusher = Executors.newSingleThreadExecutor(r ->
        {
            final Thread t = new Thread(r, "ferrite-rolled-flusher");
            t.setDaemon(true);
            return t;
        });
        this.scheduler.setRemoveOnCancelPolicy(true);
        // on close, deleted segments waiting out file.delete.delay.ms are closed at once instead
        this.scheduler.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    /** Starts the preallocator (mapped strategy) and the periodic checkpoint, retention and flush.ms tasks. */
    void start(final Runnable checkpoint, final Runnable retention, final java.util.function.Consumer<PartitionLog> requestFlush)
    {
        if (config.writeStrategy() == WriteStrategy.MAPPED)
        {
            preallocator = LogAgents.start(new Preallocator(logs), Preallocator.PERIOD_NS);
        }
        scheduler.scheduleWithFixedDelay(checkpoint, config.checkpointIntervalMs(), config.checkpointIntervalMs(),
            TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(retention, config.retentionCheckIntervalMs(), config.retentionCheckIntervalMs(),
            TimeUnit.MILLISECONDS);
        scheduler.scheduleWithFixedDelay(() -> flushDueLogs(requestFlush), config.flushCheckIntervalMs(),
            config.flushCheckIntervalMs(), TimeUnit.MILLISECONDS);
    }

    private void flushDueLogs(final java.util.function.Consumer<PartitionLog> requestFlush)
    {
        final long now = config.clock().time();
        for (final PartitionLog log : logs.get())
        {
            if (!log.isClosed() && log.flushDue(now))
            {
                requestFlush.accept(log);
            }
        }
    }

    /** Flushes a log's rolled segments on the rolled-segment flusher's thread (see {@link LogEnvironment#flushInBackground}). */
    void flushInBackground(final PartitionLog log)
    {
        if (!rolledFlusher.isShutdown())
        {
            rolledFlusher.execute(() -> flushRolled(log));
        }
    }

    private static void flushRolled(final PartitionLog log)
    {
        try
        {
            if (!log.isClosed())
            {
                log.flushQuietly(true);
            }
        }
        catch (final RuntimeException ex)
        {
            LOG.error("flush of {}'s rolled segments failed", log, ex);
        }
    }

    /**
     * Closes and unmaps a deleted segment after {@code delayMs}; when the manager stops first (or has
     * stopped), closes it at once but leaves its mappings to the GC, since its readers were promised
     * the delay.
     */
    void closeLater(final Segment segment, final long delayMs)
    {
        pendingCloses.add(segment);
        if (scheduler.isShutdown())
        {
            if (pendingCloses.remove(segment))
            {
                closeDeleted(segment, false);
            }
            return;
        }
        scheduler.schedule(() ->
        {
            if (pendingCloses.remove(segment))
            {
                closeDeleted(segment, true);
            }
        }, delayMs, TimeUnit.MILLISECONDS);
    }

    private static void closeDeleted(final Segment segment, final boolean unmap)
    {
        try
        {
            if (unmap)
            {
                segment.closeAndUnmap();
            }
            else
            {
                segment.close();
            }
        }
        catch (final IOException ex)
        {
            LOG.warn("closing deleted segment {} failed", segment, ex);
        }
    }

    /** Stops the scheduler and the rolled-segment flusher: at once, or after their tasks in hand (up to 30 s each). */
    void stopTasks(final boolean now)
    {
        if (now)
        {
            scheduler.shutdownNow();
            rolledFlusher.shutdownNow();
            return;
        }
        scheduler.shutdown();
        rolledFlusher.shutdown();
        try
        {
            scheduler.awaitTermination(30, TimeUnit.SECONDS);
            rolledFlusher.awaitTermination(30, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * After {@link #stopTasks}: waits for the preallocator to end and closes the deleted segments
     * still waiting, their mappings left to the GC (their delay has not passed).
     */
    void stopThreads()
    {
        LogAgents.stop(preallocator);
        Segment s;
        while ((s = pendingCloses.poll()) != null)
        {
            closeDeleted(s, false);
        }
    }
}
