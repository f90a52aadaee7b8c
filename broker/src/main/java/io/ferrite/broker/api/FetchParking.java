package io.ferrite.broker.api;

import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.log.PartitionLog;

import java.util.Arrays;
import java.util.function.ToLongFunction;

/**
 * The partitions a waiting fetch reads ({@link FetchHandler}'s long poll): noted by its first counting pass with the
 * bound each was counted up to (the high watermark, or the last stable offset under read_committed), registered on
 * them while it waits so that an advance wakes its network thread, and compared with them when woken. One per fetch
 * in progress of a connection; network thread only; the arrays grow and are kept.
 */
final class FetchParking
{
    /** Where the fetch's reads of a log stop: what "moved" is measured against. */
    private final ToLongFunction<PartitionLog> bound;
    private Partition[] parked = new Partition[8];
    private Topic[] topics = new Topic[8];
    /** Each one's bound as the last counting pass saw it (read before or during that pass, never after). */
    private long[] seen = new long[8];
    private int count;

    FetchParking(final ToLongFunction<PartitionLog> bound)
    {
        this.bound = bound;
    }

    /** Forgets the count of a pass about to note partitions again (none is registered). */
    void clear()
    {
        count = 0;
    }

    /** From the first counting pass: a partition it counted, with the bound it counted up to. */
    void record(final Partition partition, final Topic topic, final long counted)
    {
        if (count == parked.length)
        {
            parked = Arrays.copyOf(parked, count * 2);
            topics = Arrays.copyOf(topics, count * 2);
            seen = Arrays.copyOf(seen, count * 2);
        }
        parked[count] = partition;
        topics[count] = topic;
        seen[count] = counted;
        count++;
    }

    /** Whether a partition waited on moved its bound since the last counting pass, or went. */
    boolean moved()
    {
        for (int i = 0; i < count; i++)
        {
            final PartitionLog log = parked[i].log;
            if (bound.applyAsLong(log) != seen[i] || topics[i].isDeleted() || log.isClosed())
            {
                return true;
            }
        }
        return false;
    }

    /** Notes each partition's bound now (a counting pass is about to run). */
    void snapshot()
    {
        for (int i = 0; i < count; i++)
        {
            seen[i] = bound.applyAsLong(parked[i].log);
        }
    }

    /** Registers on each partition counted, so that an advance of its high watermark wakes {@code networkThread}. */
    void park(final int networkThread)
    {
        for (int i = 0; i < count; i++)
        {
            parked[i].fetchParked(networkThread);
        }
    }

    /** Undoes {@link #park} (a fetch that waited: answered or cancelled), and forgets the partitions. */
    void unpark()
    {
        for (int i = 0; i < count; i++)
        {
            parked[i].fetchUnparked();
        }
        forget();
    }

    /** Forgets the partitions noted (never registered, or no longer). */
    void forget()
    {
        for (int i = 0; i < count; i++)
        {
            parked[i] = null;
            topics[i] = null;
        }
        count = 0;
    }
}
