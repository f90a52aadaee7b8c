package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;

import static io.ferrite.wire.record.RecordBatchDescriptor.NO_TIMESTAMP;

/**
 * Retention and DeleteRecords for one partition log: which whole segments go, the log start offset they move, and
 * the deletion of their files. A deleted segment is retired before the list without it is published and unmapped only
 * after {@code file.delete.delay.ms}, for the readers that may still be in it.
 *
 * <p>As Kafka 4.4's {@code UnifiedLog.deleteOldSegments}: segments go oldest first while each is past retention (or
 * below the log start) and wholly below the high watermark; when every segment would go, the active one included (not
 * an empty one), Kafka rolls first and deletes them all. The roll is the writer's here (single writer): this pass
 * deletes the inactive ones and asks the log's writer to roll ({@link RetentionRoll}); the writer's roll asks for a
 * retention pass soon, which deletes the rolled segment, so the log start becomes the log end.
 */
final class LogRetention
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(LogRetention.class);

    /**
     * Tests only (null otherwise): run by a retention pass after each segment's files are deleted, outside the segments
     * lock, so that a test can roll the writer between two deletions of one pass ({@code RetentionDeletionLockTest}).
     */
    static volatile Runnable afterSegmentDeleted;

    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentList segments;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final LogEpochs epochs;
    private final LogFlusher flusher;

    LogRetention(final PartitionLog log, final LogOffsets offsets, final SegmentList segments, final EpochClock clock,
        final LogEnvironment env, final LogEpochs epochs, final LogFlusher flusher)
    {
        this.flusher = flusher;
        this.epochs = epochs;
        this.log = log;
        this.offsets = offsets;
        this.segments = segments;
        this.clock = clock;
        this.env = env;
    }

    /**
     * Retention of every open log of {@code logs}, but the compacted ones when {@code notCompacted}; each
     * paused in the {@code cleaner} meanwhile, and skipped when a cleaner thread holds it (a clean begun
     * before its cleanup.policy became delete reads the segments this would delete: Kafka's
     * {@code pauseCleaningForNonCompactedPartitions}). Per log: one that fails every pass (a SIGBUS's
     * InternalError on a damaged mapping) must not hold back the retention of the logs after it.
     */
    static void runAll(final Iterable<PartitionLog> logs, final long nowMs, final boolean notCompacted, final CleanerManager cleaner)
    {
        for (final PartitionLog log : logs)
        {
            if (log.isClosed() || (notCompacted && log.config().compact) || !cleaner.pauseUnlessInProgress(log))
            {
                continue;
            }
            try
            {
                log.deleteOldSegments(nowMs);
            }
            catch (final IOException | RuntimeException | InternalError ex)
            {
                LOG.error("retention of {} failed", log, ex);
            }
            finally
            {
                cleaner.resume(log);
            }
        }
    }

    /** See {@link PartitionLog#deleteOldSegments}. */
    int deleteOldSegments(final long nowMs) throws IOException
    {
        return deleteSegments(nowMs, false);
    }

    /**
     * See {@link PartitionLog#deleteRecordsBefore}. The segments below the new start go at once, the cleaner paused
     * meanwhile, unless a cleaner thread holds the log now (a clean, or its retention: whatever the log's
     * cleanup.policy, as one begun under compact goes on after a switch to delete): then they are left to the log's
     * next retention pass, as Kafka 4.4's {@code UnifiedLog.maybeIncrementLogStartOffset} leaves every log's (a
     * cleaner thread's cycle, never beside a clean of the log: {@code CleanerManager.grabDeletable}; or the retention
     * task, which skips a log a clean holds). Removed beside the clean, they would be unmapped after
     * {@code file.delete.delay.ms} (0 allowed) while it still reads them.
     */
    long deleteRecordsBefore(final long offset) throws IOException
    {
        segments.lock();
        try
        {
            segments.checkOpen(); // a deleted log's start does not move (its DeleteRecords is the topic's error)
            if (offset > offsets.highWatermark())
            {
                return -1; // under the lock: a truncation lowers the high watermark under it (Kafka: OFFSET_OUT_OF_RANGE)
            }
            offsets.advanceLogStart(offset);
            epochs.logStartMoved(offsets.logStartOffset());
        }
        finally
        {
            segments.unlock();
        }
        if (env.pauseCleaning(log))
        {
            try
            {
                deleteSegments(clock.time(), true);
            }
            finally
            {
                env.resumeCleaning(log);
            }
        }
        return offsets.logStartOffset();
    }

    /**
     * The segments go from the list under the segments lock; their files are deleted one segment at a
     * time under it again, each after a check that the log is not closed: a deletion of the partition
     * renames its directory once its close has taken that lock, so every path this uses still names
     * this log's files (a new log of the same name takes the old path at once), and what a deletion
     * leaves goes with the renamed directory. One segment at a time, so that a writer's roll waits for
     * one segment's files, not for a retention of thousands.
     */
    private int deleteSegments(final long nowMs, final boolean onlyBelowStart) throws IOException
    {
        final LogConfig cfg = log.config();
        final Segment[] removed;
        final boolean keptOnlyActive;
        final Segment kept;
        segments.lock();
        try
        {
            if (segments.isClosed())
            {
                return 0;
            }
            final Segment[] segs = segments.array();
            long total = 0;
            for (final Segment s : segs)
            {
                total += s.size();
            }
            final long logStart = offsets.logStartOffset();
            // as Kafka 4.4 (UnifiedLog.deleteOldSegments): time and size retention belong to cleanup.policy
            // delete and compact,delete; a compact-only topic (__consumer_offsets, __transaction_state,
            // changelogs) keeps its segments, which only the log cleaner shrinks
            final boolean deletes = cfg.delete && !onlyBelowStart;
            final long highWatermark = offsets.highWatermark();
            final long logEnd = offsets.logEndOffset();
            int n = 0;
            while (n < segs.length)
            {
                final Segment s = segs[n];
                final boolean active = n == segs.length - 1;
                // Kafka: nothing at or above the high watermark goes, so the log start never passes it
                if ((active ? logEnd : segs[n + 1].baseOffset) > highWatermark)
                {
                    break;
                }
                final boolean belowStart = !active && segs[n + 1].baseOffset <= logStart;
                final boolean expired = deletes && cfg.retentionMs >= 0 && nowMs - largestTimestamp(s) > cfg.retentionMs;
                final boolean tooBig = deletes && cfg.retentionBytes >= 0 && total - s.size() >= cfg.retentionBytes;
                if (!(belowStart || expired || tooBig))
                {
                    break;
                }
                if (active)
                {
                    if (s.size() > 0)
                    {
                        log.retentionRoll().request(); // the writer rolls it; the pass after that roll deletes it
                    }
                    break; // an empty active segment is never deleted (Kafka's isLastSegmentAndEmpty)
                }
                total -= s.size();
                n++;
            }
            if (n == 0)
            {
                return 0;
            }
            removed = segments.removeOldest(n);
            keptOnlyActive = n == segs.length - 1;
            kept = segs[segs.length - 1];
            offsets.advanceLogStart(segments.array()[0].baseOffset);
            epochs.logStartMoved(offsets.logStartOffset());
        }
        finally
        {
            segments.unlock();
        }
        try
        {
            if (keptOnlyActive && !flusher.nameDurable(kept))
            {
                // the active segment is a roll's whose name no flush has made durable yet (the writer's, for this
                // retention, or a follower's): made durable before the last segments before it are unlinked, or a
                // crash could leave the directory with no segment, and the log would start again at the
                // checkpointed log start, below the offsets already given out. Otherwise (the common DeleteRecords,
                // a follower's log start passing its sealed segments) no fsync here, on the log thread
                segments.underOpenLog(() -> DurableFile.fsyncDirectory(log.dir()));
            }
            for (final Segment s : removed)
            {
                if (!segments.underOpenLog(() -> SegmentDeletion.deleteFiles(s)))
                {
                    break; // deleted meanwhile: the rest goes with its renamed directory
                }
                final Runnable hook = afterSegmentDeleted;
                if (hook != null)
                {
                    hook.run();
                }
            }
        }
        finally
        {
            // out of the list whatever happened to their files: a failed fsync leaves the files, as a crash before
            // the unlinks would (retention deletes them again after a reload), but the segments are closed all the same
            for (final Segment s : removed)
            {
                env.closeLater(s, cfg.fileDeleteDelayMs);
            }
        }
        segments.underOpenLog(() -> ProducerSnapshots.deleteSnapshotsBelow(log.dir(), offsets.logStartOffset()));
        return removed.length;
    }

    /** The segment's largest record timestamp, or its file's modification time when it has none (as Kafka). */
    private static long largestTimestamp(final Segment s)
    {
        final long max = s.maxTimestamp();
        if (max != NO_TIMESTAMP)
        {
            return max;
        }
        return s.log.path().toFile().lastModified();
    }
}
