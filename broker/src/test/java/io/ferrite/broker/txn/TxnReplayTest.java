package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.coordinator.transaction.TransactionLog;
import org.apache.kafka.server.common.TransactionVersion;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A {@code __transaction_state} partition read back at load (research §3.2 "Load"). */
class TxnReplayTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 0);

    @Test
    void lastRecordWinsTombstoneRemovesPreparedAreToComplete()
    {
        final TxnReplay replay = new TxnReplay();
        replay.apply("t", state(7, 0, TxnState.EMPTY, Set.of(), 2));
        replay.apply("t", state(7, 0, TxnState.ONGOING, Set.of(TP), 2));
        replay.apply("u", state(8, 2, TxnState.ONGOING, Set.of(TP), 2));
        replay.apply("t", new TxnTransit(7, 7, -1, (short)1, (short)0, 60_000, TxnState.PREPARE_COMMIT, Set.of(TP), 5_000, 6_000, (short)2));
        replay.apply("v", state(9, 0, TxnState.EMPTY, Set.of(), 0));
        replay.apply("v", null);
        replay.apply("w", state(10, 4, TxnState.PREPARE_ABORT, Set.of(TP), 0));
        replay.apply("gone", null);
        assertEquals(8, replay.records());
        final TxnReplay.Loaded loaded = replay.finish(9_000);
        assertEquals(Set.of("t", "u", "w"), loaded.transactions().keySet());
        final TxnMetadata t = loaded.transactions().get("t");
        assertEquals(TxnState.PREPARE_COMMIT, t.state());
        assertEquals(TxnState.COMPLETE_COMMIT, t.pendingState(), "Complete* prepared: requests meanwhile are CONCURRENT_TRANSACTIONS");
        assertEquals(TxnState.ONGOING, loaded.transactions().get("u").state());
        assertNull(loaded.transactions().get("u").pendingState(), "an ongoing transaction is left to the timeout sweep");
        assertEquals(2, loaded.toComplete().size());
        final MarkerJob tJob = loaded.toComplete().stream().filter(j -> j.transactionalId().equals("t")).findFirst().orElseThrow();
        assertEquals(new MarkerJob("t", 7, (short)1, true, (short)2, Set.of(TP), tJob.complete()), tJob);
        assertEquals(9_000, tJob.complete().transit().lastUpdateTimestamp());
        final MarkerJob wJob = loaded.toComplete().stream().filter(j -> j.transactionalId().equals("w")).findFirst().orElseThrow();
        assertEquals(false, wJob.commit());
        assertEquals(4, wJob.producerEpoch());
    }

    @Test
    void kafkasRecordsAreReplayedAndOtherKeysSkipped()
    {
        final TxnReplay replay = new TxnReplay();
        final TxnTransit ongoing = state(7, 3, TxnState.ONGOING, Set.of(TP), 2);
        final byte[] key = TransactionLog.keyToBytes("t");
        final byte[] value = TransactionLog.valueToBytes(KafkaTxn.transit(ongoing), TransactionVersion.TV_2);
        final byte[] record = new byte[key.length + value.length + 3];
        System.arraycopy(key, 0, record, 3, key.length);
        System.arraycopy(value, 0, record, 3 + key.length, value.length);
        replay.apply(new UnsafeBuffer(record), 3, key.length, 3 + key.length, value.length);
        // a record of another type (1: not a transaction's) is not ours to read
        final byte[] other = {0, 1, 0, 1, 'x'};
        replay.apply(new UnsafeBuffer(other), 0, other.length, 0, -1);
        final TxnMetadata t = replay.finish(0).transactions().get("t");
        assertEquals(new TxnTransit(7, -1, -1, (short)3, (short)-1, 60_000, TxnState.ONGOING, Set.of(TP), 5_000, 5_000, (short)2),
            t.snapshot());
        assertEquals(1, replay.records());
    }

    @Test
    void whatTheCoordinatorWroteReplaysToWhatItHolds()
    {
        final TxnHarness h = new TxnHarness();
        h.run(h.init("a", -1, -1));
        h.run(h.add("a", 1000, 0, (short)0, TP));
        h.run(h.end("a", 1000, 0, true, 3));
        h.run(h.init("b", -1, -1));
        h.run(h.add("b", 1001, 0, (short)4, TP));
        h.run(h.end("b", 1001, 0, false, 5), false);
        h.run(h.init("c", -1, -1));
        final TxnReplay.Loaded loaded = h.replay();
        assertEquals(Set.of("a", "b", "c"), loaded.transactions().keySet());
        for (final String id : loaded.transactions().keySet())
        {
            final TxnTransit held = h.get(id).snapshot();
            final TxnTransit read = loaded.transactions().get(id).snapshot();
            assertEquals(new TxnTransit(held.producerId(), held.prevProducerId(), held.nextProducerId(), held.producerEpoch(), (short)-1,
                held.timeoutMs(), held.state(), held.partitions(), held.startTimestamp(), held.lastUpdateTimestamp(),
                held.clientTransactionVersion()), read, id);
        }
        assertEquals(1, loaded.toComplete().size(), "b's PrepareAbort is written, its Complete* is not");
        assertEquals(h.markers.get(1).complete().transit().state(), loaded.toComplete().get(0).complete().transit().state());
    }

    @Test
    void aPartitionIsLoadedWithItsOwnIdsOnly()
    {
        final TxnCache cache = new TxnCache(TxnConfig.defaults());
        final TxnMetadata t = new TxnMetadata("t", state(7, 0, TxnState.EMPTY, Set.of(), 0));
        final int partition = TxnConfig.defaults().partitionFor("t");
        assertThrows(IllegalArgumentException.class, () -> cache.loaded((partition + 1) % 50, Map.of("t", t)));
        cache.loaded(partition, Map.of("t", t));
        assertEquals(Errors.NONE, cache.lookupError("t"));
        assertEquals(t, cache.get("t"));
    }

    @Test
    void aValueOfAnUnknownVersionIsSkippedAndTheLoadGoesOn()
    {
        final TxnReplay replay = new TxnReplay();
        final TxnTransit ongoing = state(7, 3, TxnState.ONGOING, Set.of(TP), 2);
        apply(replay, "t", TxnRecords.value(ongoing, (short)1));
        final byte[] v2 = TxnRecords.value(state(7, 4, TxnState.PREPARE_ABORT, Set.of(TP), 2), (short)1);
        v2[1] = 2;
        apply(replay, "t", v2);
        // only the version is read from a value of an unknown version (Kafka's loadTransactionMetadata)
        apply(replay, "u", new byte[] {0x7f, 0x7f, 1});
        apply(replay, "v", TxnRecords.value(state(9, 0, TxnState.EMPTY, Set.of(), 0), (short)0));
        assertEquals(4, replay.records());
        assertEquals(2, replay.skipped());
        final TxnReplay.Loaded loaded = replay.finish(0);
        assertEquals(Set.of("t", "v"), loaded.transactions().keySet());
        assertEquals(TxnState.ONGOING, loaded.transactions().get("t").state(), "the skipped record changed nothing");
        assertEquals(3, loaded.transactions().get("t").producerEpoch());
        assertEquals(0, loaded.toComplete().size());
    }

    @Test
    void aValueNoCoordinatorWritesIsSkipped()
    {
        final TxnReplay replay = new TxnReplay();
        final TxnTransit ongoing = state(7, 3, TxnState.ONGOING, Set.of(TP), 2);
        replay.apply("t", ongoing);
        apply(replay, "t", TxnRecords.value(state(7, 3, TxnState.DEAD, Set.of(), 2), (short)1));
        apply(replay, "u", TxnRecords.value(state(8, 1, TxnState.PREPARE_EPOCH_FENCE, Set.of(TP), 0), (short)0));
        replay.apply("v", state(-1, 0, TxnState.EMPTY, Set.of(), 0));
        replay.apply("w", state(10, -1, TxnState.COMPLETE_COMMIT, Set.of(), 0));
        replay.apply("x", state(11, -2, TxnState.PREPARE_COMMIT, Set.of(TP), 0));
        assertEquals(6, replay.records());
        assertEquals(5, replay.skipped());
        final TxnReplay.Loaded loaded = replay.finish(0);
        assertEquals(Map.of("t", ongoing), Map.of("t", loaded.transactions().get("t").snapshot()));
        assertEquals(Set.of("t"), loaded.transactions().keySet());
        assertEquals(0, loaded.toComplete().size());
    }

    @Test
    void aSecondLoadOfAPartitionReplacesItsIds()
    {
        final TxnConfig config = TxnConfig.defaults();
        final TxnCache cache = new TxnCache(config);
        final int partition = config.partitionFor("t");
        final String sameOther = partitionMate("t", partition, config);
        final String elsewhere = idIn((partition + 1) % config.stateLogPartitions(), config);
        final TxnMetadata t = new TxnMetadata("t", state(7, 0, TxnState.EMPTY, Set.of(), 0));
        final TxnMetadata mate = new TxnMetadata(sameOther, state(8, 0, TxnState.EMPTY, Set.of(), 0));
        final TxnMetadata other = new TxnMetadata(elsewhere, state(9, 0, TxnState.EMPTY, Set.of(), 0));
        cache.loaded(partition, Map.of("t", t, sameOther, mate));
        cache.loaded((partition + 1) % config.stateLogPartitions(), Map.of(elsewhere, other));
        // the partition is loaded again (its leadership came back) from a log where only the mate is left
        final TxnMetadata mateAgain = new TxnMetadata(sameOther, state(8, 1, TxnState.EMPTY, Set.of(), 0));
        cache.loading(partition);
        cache.loaded(partition, Map.of(sameOther, mateAgain));
        assertNull(cache.get("t"), "the earlier load's id the log no longer holds is gone");
        assertEquals(mateAgain, cache.get(sameOther));
        assertEquals(other, cache.get(elsewhere), "another partition's ids stay");
        assertEquals(Set.of(mateAgain, other), Set.copyOf(cache.all()));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, cache.requestError("t"));
    }

    private static String partitionMate(final String id, final int partition, final TxnConfig config)
    {
        for (int i = 0; ; i++)
        {
            final String candidate = id + "-" + i;
            if (config.partitionFor(candidate) == partition)
            {
                return candidate;
            }
        }
    }

    private static String idIn(final int partition, final TxnConfig config)
    {
        return partitionMate("x", partition, config);
    }

    private static void apply(final TxnReplay replay, final String id, final byte[] value)
    {
        final byte[] key = TxnRecords.key(id);
        final byte[] record = new byte[key.length + value.length];
        System.arraycopy(key, 0, record, 0, key.length);
        System.arraycopy(value, 0, record, key.length, value.length);
        replay.apply(new UnsafeBuffer(record), 0, key.length, key.length, value.length);
    }
}
