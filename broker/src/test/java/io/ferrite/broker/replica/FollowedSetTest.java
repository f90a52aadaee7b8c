package io.ferrite.broker.replica;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The set of partitions one fetcher follows. A removal may name a partition the set never held (a stale
 * one: the fetcher now running for its leader is not the one that held it, after a leader's address
 * changed): it must leave the others in place.
 */
class FollowedSetTest
{
    /** Only the identity of a followed partition matters to the set: no log behind it. */
    private static FollowedPartition followed(final int leaderEpoch)
    {
        return new FollowedPartition(null, 1, leaderEpoch, 0, 0);
    }

    private static FollowedSet holding(final FollowedPartition... partitions)
    {
        final FollowedSet set = new FollowedSet();
        for (final FollowedPartition p : partitions)
        {
            set.add(p);
        }
        return set;
    }

    @Test
    void removingAPartitionDropsItAndKeepsTheOthersInOrder()
    {
        final FollowedPartition a = followed(1);
        final FollowedPartition b = followed(2);
        final FollowedPartition c = followed(3);
        final FollowedSet set = holding(a, b, c);
        assertEquals(2, set.remove(b));
        assertArrayEquals(new FollowedPartition[] {a, c}, set.snapshot());
        assertTrue(b.removed);
        assertEquals(1, set.remove(a));
        assertEquals(0, set.remove(c));
        assertArrayEquals(new FollowedPartition[0], set.snapshot());
    }

    @Test
    void removingAPartitionTheSetDoesNotHoldChangesNothingButMarksItRemoved()
    {
        final FollowedPartition a = followed(1);
        final FollowedPartition b = followed(2);
        final FollowedPartition stale = followed(3);
        final FollowedSet set = holding(a, b);
        assertEquals(2, set.remove(stale), "partitions left");
        assertArrayEquals(new FollowedPartition[] {a, b}, set.snapshot());
        assertTrue(stale.removed, "a round under way skips it");
    }
}
