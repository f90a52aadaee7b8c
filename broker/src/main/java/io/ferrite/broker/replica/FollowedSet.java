package io.ferrite.broker.replica;

import java.util.Arrays;

/**
 * The partitions one {@link ReplicaFetcher} fetches from its leader: an array copied on each change, made by
 * the control threads (under this object's monitor) and read without a lock by the fetcher's thread, which
 * takes a snapshot at the start of each round.
 */
final class FollowedSet
{
    private volatile FollowedPartition[] partitions = new FollowedPartition[0];

    synchronized void add(final FollowedPartition partition)
    {
        final FollowedPartition[] now = partitions;
        final FollowedPartition[] next = Arrays.copyOf(now, now.length + 1);
        next[now.length] = partition;
        partitions = next;
    }

    /**
     * Marks the partition removed (a round under way skips it) and drops it; returns how many are left. A partition
     * the set does not hold (a stale one: this fetcher is not the one that held it) leaves the set as it is.
     */
    synchronized int remove(final FollowedPartition partition)
    {
        partition.removed = true;
        final FollowedPartition[] now = partitions;
        int at = 0;
        while (at < now.length && now[at] != partition)
        {
            at++;
        }
        if (at == now.length)
        {
            return now.length;
        }
        final FollowedPartition[] next = new FollowedPartition[now.length - 1];
        System.arraycopy(now, 0, next, 0, at);
        System.arraycopy(now, at + 1, next, at, next.length - at);
        partitions = next;
        return next.length;
    }

    /** The partitions now (a snapshot: never changed after it is published). */
    FollowedPartition[] snapshot()
    {
        return partitions;
    }

    /** Whether a partition may ask for records again (not failed, not removed). */
    boolean anyLive()
    {
        for (final FollowedPartition p : partitions)
        {
            if (p.state != FollowedPartition.FAILED && !p.removed)
            {
                return true;
            }
        }
        return false;
    }
}
