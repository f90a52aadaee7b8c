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

    /** Marks the partition removed (a round under way skips it) and drops it; returns how many are left. */
    synchronized int remove(final FollowedPartition partition)
    {
        partition.removed = true;
        final FollowedPartition[] now = partitions;
        final FollowedPartition[] next = new FollowedPartition[Math.max(0, now.length - 1)];
        int n = 0;
        for (final FollowedPartition p : now)
        {
            if (p != partition && n < next.length)
            {
                next[n++] = p;
            }
        }
        partitions = n == next.length ? next : Arrays.copyOf(next, n);
        return n;
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
