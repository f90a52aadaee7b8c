package io.ferrite.log;

import org.agrona.ErrorHandler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Which log a cleaner thread cleans next, and what is recorded after (Kafka's {@code LogCleanerManager}):
 * the dirtiest compacted log ({@link #grabFilthiest}), the logs being cleaned (never chosen twice), the
 * logs whose clean failed (uncleanable until they go), and the {@link CleanerCheckpoints}.
 *
 * <p>Every method holds the log manager's checkpoint lock, under which a deletion unpublishes its logs:
 * a clean that ends after its log was deleted records nothing, and a log is chosen only while published
 * and open. A deletion first aborts the log's clean and waits until the cleaner thread has let go of
 * it ({@link #abortAndPause}, Kafka's {@code abortAndPauseCleaning}): a clean reads the segments'
 * mappings, which the deletion unmaps after {@code file.delete.delay.ms} (0 is allowed). The retention
 * of compacted logs runs on the cleaner threads ({@link #grabDeletable}, Kafka's {@code deletableLogs}),
 * never beside a clean of the same log.
 */
final class CleanerManager
{
    private static final Logger LOG = LoggerFactory.getLogger(CleanerManager.class);

    /** One log to clean and why (Kafka's {@code LogToClean}), as {@link #grabFilthiest} found it. */
    record LogToClean(PartitionLog log, long firstDirtyOffset, long firstUncleanableOffset, long cleanableBytes, long totalBytes,
        boolean needCompactionNow, AtomicBoolean aborted)
    {
        double cleanableRatio()
        {
            return (double)cleanableBytes / totalBytes;
        }
    }

    private final Object lock;
    private final Supplier<PartitionLog[]> logs;
    private final Function<Path, Iterable<PartitionLog>> logsIn;
    private final ErrorHandler errors;
    private final CleanerCheckpoints checkpoints = new CleanerCheckpoints();
    /** The logs being cleaned (or their retention run) by a cleaner thread, each with its abort flag. */
    private final Map<PartitionLog, AtomicBoolean> inProgress = new IdentityHashMap<>();
    /** The logs no cleaner thread may take (a deletion in progress), with how many pauses each has. */
    private final Map<PartitionLog, Integer> paused = new IdentityHashMap<>();
    private final Set<PartitionLog> uncleanable = Collections.newSetFromMap(new IdentityHashMap<>());
    private final SegmentsView view = new SegmentsView();

    /**
     * @param lock the log manager's checkpoint lock
     * @param logs the published logs
     * @param logsIn the published logs of one log directory
     */
    CleanerManager(final Object lock, final Supplier<PartitionLog[]> logs, final Function<Path, Iterable<PartitionLog>> logsIn,
        final ErrorHandler errors)
    {
        this.lock = lock;
        this.logs = logs;
        this.logsIn = logsIn;
        this.errors = errors;
    }

    /** Reads a log directory's checkpoint at open. */
    void load(final Path dir) throws IOException
    {
        synchronized (lock)
        {
            checkpoints.load(dir, logsIn.apply(dir));
        }
    }

    /** The log's {@code cleaner-offset-checkpoint} entry, or null. */
    Long checkpoint(final PartitionLog log)
    {
        synchronized (lock)
        {
            return checkpoints.get(log);
        }
    }

    /**
     * After a truncation of {@code log}: its checkpoint, when above the active segment's base (the truncation's
     * target), lowered to it and written, as Kafka's {@code maybeTruncateCleanerCheckpointToActiveSegmentBaseOffset};
     * else the offsets re-appended above the target would be taken as already clean.
     */
    void truncated(final PartitionLog log) throws IOException
    {
        synchronized (lock)
        {
            final Long checkpoint = checkpoints.get(log);
            final Segment[] segs = log.segments();
            final long activeBase = segs[segs.length - 1].baseOffset;
            if (checkpoint != null && checkpoint > activeBase)
            {
                checkpoints.update(log, activeBase, logsIn.apply(log.dir().getParent()));
            }
        }
    }

    /**
     * The compacted log with the largest share of dirty bytes among those whose share is above their
     * {@code min.cleanable.dirty.ratio} or whose {@code max.compaction.lag.ms} has passed, marked in
     * progress; null when none. A log whose checkpoint lies below its log start or beyond its end has it
     * reset to the log start (written). A log whose offsets cannot be worked out is marked uncleanable.
     */
    LogToClean grabFilthiest(final long nowMs)
    {
        synchronized (lock)
        {
            LogToClean filthiest = null;
            for (final PartitionLog log : logs.get())
            {
                if (!log.config().compact || log.isClosed() || inProgress.containsKey(log) || paused.containsKey(log)
                    || uncleanable.contains(log))
                {
                    continue;
                }
                try
                {
                    final LogToClean ltc = toClean(log, nowMs);
                    if (ltc != null && ltc.totalBytes > 0
                        && ((ltc.needCompactionNow && ltc.cleanableBytes > 0) || ltc.cleanableRatio() > log.config().minCleanableDirtyRatio)
                        && (filthiest == null || ltc.cleanableRatio() > filthiest.cleanableRatio()))
                    {
                        filthiest = ltc;
                    }
                }
                catch (final IOException | RuntimeException ex)
                {
                    errors.onError(new IOException("working out what of " + log + " to clean failed; it is not cleaned again", ex));
                    uncleanable.add(log);
                }
                finally
                {
                    view.clear();
                }
            }
            if (filthiest != null)
            {
                inProgress.put(filthiest.log, filthiest.aborted);
            }
            return filthiest;
        }
    }

    /** Kafka's {@code cleanableOffsets}, {@code maxCompactionDelay} and {@code LogToClean} byte counts for one log. */
    private LogToClean toClean(final PartitionLog log, final long nowMs) throws IOException
    {
        final LogConfig cfg = log.config();
        final long logStart = log.logStartOffset();
        final Long checkpoint = checkpoints.get(log);
        long firstDirty = checkpoint == null ? logStart : checkpoint;
        if (firstDirty < logStart || firstDirty > log.logEndOffset())
        {
            if (!cfg.delete || firstDirty > log.logEndOffset())
            {
                LOG.warn("resetting the first dirty offset of {} to its log start {}: the checkpointed {} is outside the log", log,
                    logStart, firstDirty);
            }
            firstDirty = logStart;
            try
            {
                checkpoints.update(log, firstDirty, logsIn.apply(log.dir().getParent()));
            }
            catch (final IOException ex)
            {
                // as Kafka's updateCheckpoints: reported, and the clean goes on from the log start (written next time)
                errors.onError(new IOException("writing the reset cleaner-offset-checkpoint entry of " + log + " failed", ex));
            }
        }
        view.take(log);
        final int n = view.count();
        if (n == 0)
        {
            return null;
        }
        final long activeBase = view.baseOffset(n - 1);
        long firstUncleanable = Math.min(log.transactions().lastStableOffset(), activeBase);
        final long minLag = Math.max(cfg.minCompactionLagMs, 0L);
        final int firstDirtySegment = floorSegment(firstDirty);
        long earliestDirtyTimestamp = Long.MAX_VALUE;
        for (int i = Math.max(firstDirtySegment, 0); i < n - 1; i++)
        {
            if (minLag > 0 && view.maxTimestamp(i) > nowMs - minLag)
            {
                firstUncleanable = Math.min(firstUncleanable, view.baseOffset(i));
                break;
            }
        }
        for (int i = Math.max(firstDirtySegment, 0); i < n - 1; i++)
        {
            final long ts = view.firstBatchTimestamp(i);
            if (ts > 0)
            {
                earliestDirtyTimestamp = Math.min(earliestDirtyTimestamp, ts);
            }
        }
        firstUncleanable = Math.max(firstDirty, firstUncleanable);
        final long cleanUntil = nowMs - Math.max(cfg.maxCompactionLagMs, 0L);
        final boolean needNow = earliestDirtyTimestamp < cleanUntil;

        // Kafka's byte counts: clean = segments below the first dirty offset; cleanable = from the segment
        // holding the first dirty offset to the segment holding the first uncleanable one (exclusive)
        long cleanBytes = 0;
        int firstUncleanableSegment = n - 1;
        for (int i = 0; i < n; i++)
        {
            if (view.baseOffset(i) < firstDirty)
            {
                cleanBytes += view.sizeInBytes(i);
            }
        }
        if (firstUncleanable < activeBase)
        {
            firstUncleanableSegment = Math.max(floorSegment(firstUncleanable), 0); // an inactive one: the floor is below the active
        }
        final long firstUncleanableBase = view.baseOffset(firstUncleanableSegment);
        long cleanableBytes = 0;
        final int from = Math.max(floorSegment(Math.min(firstDirty, firstUncleanableBase)), 0);
        for (int i = from; i < n && view.baseOffset(i) < firstUncleanableBase; i++)
        {
            cleanableBytes += view.sizeInBytes(i);
        }
        return new LogToClean(log, firstDirty, firstUncleanable, cleanableBytes, cleanBytes + cleanableBytes, needNow,
            new AtomicBoolean());
    }

    /** The index of the last segment in the view whose base offset is at most {@code offset}, or -1. */
    private int floorSegment(final long offset)
    {
        int floor = -1;
        for (int i = 0; i < view.count() && view.baseOffset(i) <= offset; i++)
        {
            floor = i;
        }
        return floor;
    }

    /**
     * The end of a clean of {@code log}: it is no longer in progress and, when {@code nextDirtyOffset} moved
     * past where it began and the log is still published and open, its checkpoint entry is written.
     */
    void doneCleaning(final LogToClean cleaned, final long nextDirtyOffset) throws IOException
    {
        synchronized (lock)
        {
            final PartitionLog log = cleaned.log;
            inProgress.remove(log);
            lock.notifyAll(); // a deletion waiting in abortAndPause
            final Iterable<PartitionLog> published = logsIn.apply(log.dir().getParent());
            if (nextDirtyOffset != cleaned.firstDirtyOffset && !log.isClosed() && contains(published, log))
            {
                checkpoints.update(log, nextDirtyOffset, published);
            }
        }
    }

    /**
     * The compacted logs whose retention a cleaner thread runs now (Kafka's {@code deletableLogs}): open,
     * not being cleaned, not paused; marked in progress until {@link #doneDeleting}.
     */
    List<PartitionLog> grabDeletable()
    {
        synchronized (lock)
        {
            final List<PartitionLog> deletable = new ArrayList<>();
            for (final PartitionLog log : logs.get())
            {
                if (log.config().compact && !log.isClosed() && !inProgress.containsKey(log) && !paused.containsKey(log))
                {
                    inProgress.put(log, new AtomicBoolean());
                    deletable.add(log);
                }
            }
            return deletable;
        }
    }

    void doneDeleting(final List<PartitionLog> deleted)
    {
        synchronized (lock)
        {
            deleted.forEach(inProgress::remove);
            lock.notifyAll();
        }
    }

    /**
     * Kafka's {@code abortAndPauseCleaning}: no cleaner thread takes {@code log} until {@link #resume}, and
     * a clean (or retention) of it in progress is told to stop and waited for. A clean stops at its next
     * batch or throttle check (a throttle's sleep is cut short), so the wait is one batch's work; an
     * interrupt of the waiting thread is kept for after the wait, which must not end before the clean lets
     * go of the log's segments.
     */
    void abortAndPause(final PartitionLog log)
    {
        synchronized (lock)
        {
            paused.merge(log, 1, Integer::sum);
            final AtomicBoolean running = inProgress.get(log);
            if (running != null)
            {
                running.set(true);
            }
            boolean interrupted = false;
            while (inProgress.containsKey(log))
            {
                try
                {
                    lock.wait();
                }
                catch (final InterruptedException ex)
                {
                    interrupted = true;
                }
            }
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Pauses {@code log} for a segment deletion outside the cleaner (retention, DeleteRecords) unless a cleaner thread
     * holds it now (Kafka's {@code pauseCleaningForNonCompactedPartitions}, which skips the logs in progress): false,
     * nothing paused, when a clean or the cleaner's retention reads its segments, which the deletion would unmap after
     * {@code file.delete.delay.ms} (0 allowed). Whatever the log's cleanup.policy now: a clean begun under compact goes
     * on after a switch to delete. True: no clean starts until {@link #resume}.
     */
    boolean pauseUnlessInProgress(final PartitionLog log)
    {
        synchronized (lock)
        {
            if (inProgress.containsKey(log))
            {
                return false;
            }
            paused.merge(log, 1, Integer::sum);
            return true;
        }
    }

    /** Undoes one {@link #abortAndPause} or {@link #pauseUnlessInProgress} (Kafka's {@code resumeCleaning}). */
    void resume(final PartitionLog log)
    {
        synchronized (lock)
        {
            paused.computeIfPresent(log, (l, n) -> n == 1 ? null : n - 1);
        }
    }

    boolean isInProgress(final PartitionLog log)
    {
        synchronized (lock)
        {
            return inProgress.containsKey(log);
        }
    }

    /** A log whose clean failed: not chosen again while it is published (Kafka's {@code markPartitionUncleanable}). */
    void markUncleanable(final PartitionLog log)
    {
        synchronized (lock)
        {
            uncleanable.add(log);
        }
    }

    boolean isUncleanable(final PartitionLog log)
    {
        synchronized (lock)
        {
            return uncleanable.contains(log);
        }
    }

    /** Forgets the uncleanable logs that are gone (Kafka's {@code maintainUncleanablePartitions}). */
    void maintainUncleanable()
    {
        synchronized (lock)
        {
            if (!uncleanable.isEmpty())
            {
                final Set<PartitionLog> published = Collections.newSetFromMap(new IdentityHashMap<>());
                Collections.addAll(published, logs.get());
                uncleanable.removeIf(log -> !published.contains(log));
            }
        }
    }

    /** After a deletion unpublished logs of {@code dir}: their checkpoint entries go (written). Under the checkpoint lock. */
    void forgetGone(final Path dir) throws IOException
    {
        checkpoints.forgetGone(dir, logsIn.apply(dir));
    }

    private static boolean contains(final Iterable<PartitionLog> logs, final PartitionLog log)
    {
        for (final PartitionLog l : logs)
        {
            if (l == log)
            {
                return true;
            }
        }
        return false;
    }
}
