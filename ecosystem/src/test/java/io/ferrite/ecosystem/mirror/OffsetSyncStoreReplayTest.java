package io.ferrite.ecosystem.mirror;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.mirror.ReplayedOffsetSyncStore;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Why a group at 500 can be translated to 1 (issue 13: Kafka -> Ferrite gave 65 and 1): MirrorMaker's
 * {@code OffsetSyncStore} alone, no broker, fed the offset syncs one {@code MirrorMakerTest} run wrote for
 * Kafka's {@code payments-0} (1000 records, group at 500) in their order. That run's checkpoint was 1; its
 * store's TRACE log showed {@code [505:505,404:404,202:202,0:0]} becoming {@code [707:707,505:505,0:0]} when
 * the sync at 707 arrived (the one at 606 had been replaced by it while the writer throttled its sends).
 * The store keeps a bounded, sparser-with-age set of syncs and translates to one past the latest kept at or
 * before the group: with 404 dropped that is 0, so 1. With the 606 sync in the sequence it keeps 404 (405).
 */
class OffsetSyncStoreReplayTest
{
    private static final TopicPartition PAYMENTS_0 = new TopicPartition("payments", 0);

    @Test
    void theSyncsOfTheRunThatGaveOneTranslateFiveHundredToOne()
    {
        final ReplayedOffsetSyncStore store = new ReplayedOffsetSyncStore(PAYMENTS_0);
        for (final long offset : new long[] {0, 101, 202, 303, 404, 505})
        {
            store.sync(offset, offset);
        }
        assertEquals(405, store.translate(500), "before the sync at 707");
        for (final long offset : new long[] {707, 808, 909, 999})
        {
            store.sync(offset, offset);
        }
        assertEquals(1, store.translate(500), "after it: 404 is no longer kept");
        assertEquals(1000, store.translate(1000), "a group at the end translates exactly");
    }

    @Test
    void withTheSyncAt606TheStoreKeeps404()
    {
        final ReplayedOffsetSyncStore store = new ReplayedOffsetSyncStore(PAYMENTS_0);
        for (final long offset : new long[] {0, 101, 202, 303, 404, 505, 606, 707, 808, 909, 999})
        {
            store.sync(offset, offset);
        }
        assertEquals(405, store.translate(500));
    }
}
