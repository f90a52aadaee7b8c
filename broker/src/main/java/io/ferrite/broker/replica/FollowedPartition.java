package io.ferrite.broker.replica;

import io.ferrite.broker.topic.Partition;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.epoch.LeaderEpochCache;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteOrder;
import java.util.concurrent.locks.LockSupport;

/**
 * A partition this node follows: its leader, the leader epoch it follows in, and the hand-over of one
 * fetch answer's records from the {@link ReplicaFetcher}'s thread to the partition's log thread, which
 * stays its single writer. The fetcher {@link #post}s the answer's records (a slice of its own response
 * buffer, not copied) and hands this object to the log thread ({@code LogThread.execute}); {@link #run}
 * appends them with {@code appendAsFollower}, moves the high watermark and the log start as Kafka's
 * follower does, and releases {@link #done}; the fetcher reuses its buffer only after every partition it
 * posted is done. A truncation goes the same way ({@link #postDiverged}, {@link #postTruncation}): the log thread
 * truncates, the fetcher does not ask for the partition until it is {@link #done}. Fields without a memory-order
 * note are the fetcher thread's.
 */
public final class FollowedPartition implements Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(FollowedPartition.class);

    /** Fetching: the next round asks for it. */
    static final int FETCHING = 0;
    /** Backing off after an error (until {@link #retryAtMs}), then fetching again. */
    static final int BACKING_OFF = 1;
    /** Stopped for a reason this node cannot repair yet (see {@link #failure}); the fetcher no longer asks for it. */
    static final int FAILED = 2;
    /** Answered OFFSET_OUT_OF_RANGE this round: the leader's offsets are asked once the round's appends are done. */
    static final int OUT_OF_RANGE = 3;
    /** A truncation of its log is with the log thread: not asked for until it is {@link #done}. */
    static final int TRUNCATING = 4;

    /** What a post asks of the log thread: append an answer's records, or truncate. */
    private static final int APPEND = 0;
    /** Truncate where the leader's {@code diverging_epoch} says ({@link #divergedTarget}). */
    private static final int DIVERGED = 1;
    /** Truncate to an offset (the leader's log end, below this log's). */
    private static final int TRUNCATE_TO = 2;
    /** Delete everything and start at an offset (the leader's log start, above this log's end). */
    private static final int START_AT = 3;

    public final Partition partition;
    public final int leaderId;
    public final int leaderEpoch;
    /** The mark of a partition the cluster's metadata does not assign here ({@link #unassigned}): no replica hosted. */
    public final boolean unassigned;
    final long topicIdMsb;
    final long topicIdLsb;

    int state = FETCHING;
    long retryAtMs;
    /** Why it is {@link #FAILED} (the fetcher's; read by tests through {@link #failure()}). */
    private volatile String failure;
    /** Set by {@code stopFollowing} (any thread): the fetcher drops it, the log thread appends nothing more. */
    volatile boolean removed;

    // ---- one posted answer: written by the fetcher before the hand-over, read by the log thread ----
    private MutableDirectBuffer records;
    private int recordsOffset;
    private int recordsLength;
    private long leaderHighWatermark;
    private long leaderLogStart;
    private Thread fetcher;
    private int job;
    /** A truncation's epoch (DIVERGED) and offset (the diverging end offset, the truncation's offset, the new start). */
    private int truncationEpoch;
    private long truncationOffset;
    /** A truncation's failure (log thread's, read by the fetcher after {@link #done}): it cannot go on fetching. */
    String truncationError;
    /**
     * The log end at which the last OFFSET_OUT_OF_RANGE needed no truncation and was fetched again at once (-1: none
     * since the last answer with no error): the same answer at the same log end again backs off ({@link #outOfRangeAgain}).
     */
    private long outOfRangeAt = -1;
    /** Where the last truncation left the log end (log thread's, read by the fetcher after {@link #done}; tests' logs). */
    long truncatedTo = -1;
    private final LeaderEpochCache.EpochOffset found = new LeaderEpochCache.EpochOffset();
    /** The fetch answer's hand-over is over (release by the log thread, acquire by the fetcher). */
    private volatile boolean done = true;
    /** The append's outcome (log thread's; read by the fetcher after {@link #done}). */
    final AppendResult result = new AppendResult();
    /** The log thread's last error (an IOException moving the log start), for the fetcher to back off on. */
    volatile String appendError;

    public FollowedPartition(final Partition partition, final int leaderId, final int leaderEpoch, final long topicIdMsb,
        final long topicIdLsb)
    {
        this(partition, leaderId, leaderEpoch, topicIdMsb, topicIdLsb, false);
    }

    private FollowedPartition(final Partition partition, final int leaderId, final int leaderEpoch, final long topicIdMsb,
        final long topicIdLsb, final boolean unassigned)
    {
        this.unassigned = unassigned;
        this.partition = partition;
        this.leaderId = leaderId;
        this.leaderEpoch = leaderEpoch;
        this.topicIdMsb = topicIdMsb;
        this.topicIdLsb = topicIdLsb;
    }

    /**
     * Cluster mode's mark of a local partition the metadata image does not (or not yet) assign to this node: followed
     * with no leader and no fetcher, so it is not served, and not one this node hosts a replica of (Kafka's broker has
     * no such partition: not in its {@code PartitionCount}, no {@code kafka.log} MBeans).
     */
    public static FollowedPartition unassigned(final Partition partition)
    {
        return new FollowedPartition(partition, -1, -1, 0, 0, true);
    }

    /** Why fetching stopped for good (null while it goes on): a state only the controller or a later version can end. */
    public String failure()
    {
        return failure;
    }

    void fail(final String why)
    {
        state = FAILED;
        failure = why;
        LOG.error("follower of {} (leader {}, epoch {}) stopped fetching: {}", partition, leaderId, leaderEpoch, why);
    }

    /** The fetcher: the records of one answer, for {@link #run} on the log thread. */
    void post(final MutableDirectBuffer buffer, final int offset, final int length, final long highWatermark,
        final long logStart, final Thread fetcherThread)
    {
        records = buffer;
        recordsOffset = offset;
        recordsLength = length;
        leaderHighWatermark = highWatermark;
        leaderLogStart = logStart;
        fetcher = fetcherThread;
        appendError = null;
        truncationError = null;
        outOfRangeAt = -1; // answered records or nothing: an OFFSET_OUT_OF_RANGE later is a new one
        result.status = AppendResult.OK;
        job = APPEND;
        done = false; // volatile: the fields above are visible to the thread that reads it
    }

    /** The fetcher: the leader answered {@code diverging_epoch} ({@code epoch}, {@code endOffset}); truncate there. */
    void postDiverged(final int epoch, final long endOffset, final Thread fetcherThread)
    {
        postTruncation(DIVERGED, epoch, endOffset, fetcherThread);
    }

    /** The fetcher: truncate to {@code offset} ({@code startOver}: delete everything and start at it). */
    void postTruncation(final long offset, final boolean startOver, final Thread fetcherThread)
    {
        postTruncation(startOver ? START_AT : TRUNCATE_TO, LeaderEpochCache.UNDEFINED_EPOCH, offset, fetcherThread);
    }

    private void postTruncation(final int kind, final int epoch, final long offset, final Thread fetcherThread)
    {
        job = kind;
        truncationEpoch = epoch;
        truncationOffset = offset;
        truncationError = null;
        fetcher = fetcherThread;
        state = TRUNCATING;
        done = false; // volatile: the fields above are visible to the thread that reads it
    }

    /**
     * The fetcher: an OFFSET_OUT_OF_RANGE at log end {@code logEnd} that needs no truncation (the leader's log start
     * and end are around it: it was out of range for a moment). Kafka's {@code fetchOffsetAndTruncate} fetches again at
     * once; so does this the first time, and answers true (back off) when the previous answer was the same one at the
     * same log end, where Kafka would ask the leader's offsets and fetch again on every round, without a pause.
     */
    boolean outOfRangeAgain(final long logEnd)
    {
        final boolean again = outOfRangeAt == logEnd;
        outOfRangeAt = logEnd;
        state = FETCHING; // the caller backs it off when again
        return again;
    }

    boolean done()
    {
        return done;
    }

    /**
     * On the partition's log thread. Kafka's {@code ReplicaFetcherThread.processPartitionData}: append as
     * follower, then high watermark = the leader's, bounded by this log's end (and start), then the log start
     * moved up to the leader's where this log's high watermark allows.
     */
    @Override
    public void run()
    {
        try
        {
            if (removed || partition.followed() != this)
            {
                return; // stopped following, or follows another leader or epoch now: nothing of this answer is kept
            }
            final PartitionLog log = partition.log;
            if (job != APPEND)
            {
                truncate(log);
                return;
            }
            if (recordsLength > 0)
            {
                log.appendAsFollower(records, recordsOffset, recordsLength, leaderEpoch, result);
                if (result.status == AppendResult.UNEXPECTED_APPEND_OFFSET && restartedAtFirstBatch(log))
                {
                    log.appendAsFollower(records, recordsOffset, recordsLength, leaderEpoch, result);
                }
                if (!result.succeeded())
                {
                    return;
                }
            }
            final long end = log.logEndOffset();
            final long highWatermark = Math.max(log.logStartOffset(), Math.min(leaderHighWatermark, end));
            if (highWatermark >= 0)
            {
                log.highWatermark(highWatermark);
            }
            if (leaderLogStart > log.logStartOffset() && leaderLogStart <= highWatermark)
            {
                log.deleteRecordsBefore(leaderLogStart); // Kafka's maybeIncrementLogStartOffset(LeaderOffsetIncremented)
            }
        }
        catch (final IOException ex)
        {
            appendError = "moving the log start of " + partition + " (the leader's " + leaderLogStart + "): " + ex;
        }
        finally
        {
            records = null;
            done = true;
            LockSupport.unpark(fetcher);
        }
    }

    /**
     * Kafka's {@code Partition.appendRecordsToFollowerOrFutureReplica} on an UnexpectedAppendOffset: an empty log (its
     * start at its end, as a full truncation to the leader's log start leaves it) whose first fetched batch begins
     * below its end and ends at or above it — the leader's log start fell inside that batch (DeleteRecords) — starts
     * again at the batch's base offset, so the batch can be appended whole; the log start then moves up to the
     * leader's as after any append. Returns whether it did (the append is then tried again). A storage error doing it
     * is a truncation's failure ({@link #truncationError}): the partition is failed, as Kafka's
     * {@code processPartitionData} failing on it marks the partition failed.
     */
    private boolean restartedAtFirstBatch(final PartitionLog log)
    {
        final long end = log.logEndOffset();
        if (recordsLength < RecordBatchDescriptor.HEADER_LENGTH || end != log.logStartOffset())
        {
            return false;
        }
        final long base = records.getLong(recordsOffset + RecordBatchDescriptor.BASE_OFFSET_OFFSET, ByteOrder.BIG_ENDIAN);
        final long last = base + records.getInt(recordsOffset + RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET, ByteOrder.BIG_ENDIAN);
        if (base >= end || last < end)
        {
            return false;
        }
        LOG.info("follower of {}: the leader's first batch [{}, {}] begins below this empty log's start {}: starting at {}",
            this, base, last, end, base);
        try
        {
            log.truncateFullyAndStartAt(base);
        }
        catch (final IOException | RuntimeException ex)
        {
            truncationError = "starting " + partition + " again at " + base + " (the base of the leader's first batch): " + ex;
            return false; // a truncation that failed, as Kafka's markPartitionFailed: the fetcher fails the partition
        }
        return true;
    }

    /**
     * On the log thread: Kafka's follower truncation ({@code ReplicaFetcherThread.truncate}, the log's
     * {@code truncateTo} / {@code truncateFullyAndStartAt}); the high watermark goes no higher than the new log end
     * (the log lowers it). A storage error is a failure: this log's state is no longer known to follow the leader's.
     */
    private void truncate(final PartitionLog log)
    {
        try
        {
            final long highWatermark = log.highWatermark();
            final long target = switch (job)
            {
                case DIVERGED -> divergedTarget(log);
                case TRUNCATE_TO -> Math.min(truncationOffset, log.logEndOffset());
                default -> truncationOffset;
            };
            if (job == START_AT)
            {
                log.truncateFullyAndStartAt(target);
            }
            else
            {
                log.truncateTo(target);
            }
            truncatedTo = log.logEndOffset();
            if (job != START_AT && target < highWatermark)
            {
                LOG.warn("follower of {} truncated to {}, below its high watermark {}", this, target, highWatermark);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            truncationError = "truncating " + partition + " (" + (job == START_AT ? "to start at " : "to ") + truncationOffset
                + "): " + ex;
        }
    }

    /**
     * Kafka's {@code AbstractFetcherThread.getOffsetTruncationState} for a diverging epoch (E, end) from the leader:
     * this log's own end for the largest epoch at or below E (its epoch cache); when that epoch is E, the lower of the
     * two ends; when it is an older one (this log never had E), that epoch's end (the next fetch is then checked again
     * with the older epoch); when this log has no such epoch, the leader's end. Never above this log's end. A diverging
     * end the leader left undefined (-1; neither Kafka's leader nor Ferrite's sends one, they answer OFFSET_OUT_OF_RANGE)
     * truncates nothing: Kafka 4.4 keeps the fetch offset then ({@code OffsetTruncationState(fetchOffset, true)}), which
     * with truncation on fetch is this log's end.
     */
    private long divergedTarget(final PartitionLog log)
    {
        final long logEnd = log.logEndOffset();
        if (truncationOffset < 0)
        {
            return logEnd;
        }
        log.leaderEpochCache().endOffsetFor(truncationEpoch, logEnd, found);
        if (found.epoch == LeaderEpochCache.UNDEFINED_EPOCH || found.endOffset == LeaderEpochCache.UNDEFINED_EPOCH_OFFSET)
        {
            return Math.min(truncationOffset, logEnd);
        }
        if (found.epoch != truncationEpoch)
        {
            return Math.min(found.endOffset, logEnd);
        }
        return Math.min(Math.min(found.endOffset, truncationOffset), logEnd);
    }

    @Override
    public String toString()
    {
        return partition + " (leader " + leaderId + ", epoch " + leaderEpoch + ")";
    }
}
