package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.epoch.LeaderEpochCache;

/**
 * Kafka's check of a fetch's {@code last_fetched_epoch} (Fetch v12+, KIP-595's truncation on fetch;
 * {@code Partition.readRecords}): before a partition is read, the epoch the fetcher last fetched and its fetch
 * offset must agree with this leader's epoch cache, else the answer is {@code diverging_epoch} = this log's end of
 * the largest epoch at or below that one (what OffsetForLeaderEpoch would answer), no records, error NONE; the
 * follower truncates there and fetches again. A {@code last_fetched_epoch} below 0 (absent before v12, or a follower
 * with no epoch yet) is no check. One per connection's fetch; network thread; allocates nothing.
 */
final class FetchDivergence
{
    /** {@link #check}: the partition diverges at {@link #epoch} / {@link #endOffset}; answered with no records. */
    static final short DIVERGING = -2;

    private final LeaderEpochCache.EpochOffset found = new LeaderEpochCache.EpochOffset();
    /** The last {@link #DIVERGING} answer's epoch and end offset. */
    int epoch;
    long endOffset;

    /**
     * Kafka's rule, in its order: no end known for {@code lastFetchedEpoch} (it is newer than any epoch this log
     * has) is OFFSET_OUT_OF_RANGE; so is a {@code fetchOffset} below the log start, diverging or not; then an end
     * found for a lower epoch than the one asked, or ending below {@code fetchOffset}, is {@link #DIVERGING};
     * else {@link Errors#NONE}, the read goes on. The ends are the leader's at its epoch ({@link PartitionLog#endOffsetForEpoch}):
     * a single node's epoch (what Metadata answers) ends at the log end while no batch carries it yet, as Kafka's
     * makeLeader assigns it there (a new partition's (0, 0)).
     */
    short check(final PartitionLog log, final int lastFetchedEpoch, final long fetchOffset)
    {
        if (lastFetchedEpoch < 0)
        {
            return Errors.NONE;
        }
        final long logStart = log.logStartOffset();
        log.endOffsetForEpoch(lastFetchedEpoch, found);
        if (found.epoch == LeaderEpochCache.UNDEFINED_EPOCH || found.endOffset == LeaderEpochCache.UNDEFINED_EPOCH_OFFSET)
        {
            return Errors.OFFSET_OUT_OF_RANGE;
        }
        if (fetchOffset < logStart)
        {
            return Errors.OFFSET_OUT_OF_RANGE;
        }
        if (found.epoch < lastFetchedEpoch || found.endOffset < fetchOffset)
        {
            epoch = found.epoch;
            endOffset = found.endOffset;
            return DIVERGING;
        }
        return Errors.NONE;
    }
}
