package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The timeout sweep's and the expiry sweep's selection and transitions (research §3.2). */
class TxnSweepsTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 0);
    private final TxnHarness h = new TxnHarness();

    @Test
    void ongoingPastItsTimeoutIsAbortedWithTheProducerFenced()
    {
        // started at 5 000 with a 60 000 ms timeout: over only after 65 000
        h.put("late", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        h.put("idle", state(8, 3, TxnState.COMPLETE_COMMIT, Set.of(), 0));
        h.put("prepared", state(9, 3, TxnState.PREPARE_COMMIT, Set.of(TP), 0));
        h.put("2pc", new TxnTransit(10, -1, -1, (short)3, (short)-1, Integer.MAX_VALUE, TxnState.ONGOING, Set.of(TP), 0, 0, (short)0));
        assertEquals(List.of(), TxnSweeps.timedOut(h.cache, 65_000));
        assertEquals(List.of("late"), TxnSweeps.timedOut(h.cache, 65_001));
        final TxnWrite abort = TxnSweeps.abortTimedOut(h.cache, h.ids, "late", 65_001);
        assertEquals(TxnState.PREPARE_ABORT, abort.transit().state());
        assertEquals(4, abort.transit().producerEpoch(), "the cluster's TV2 bumps past the zombie's epoch");
        assertEquals(TxnWrite.Then.MARKERS_ONLY, abort.then());
        assertEquals(List.of(), TxnSweeps.timedOut(h.cache, 65_001), "a pending transaction is not taken again");
        assertNull(TxnSweeps.abortTimedOut(h.cache, h.ids, "late", 65_001));
        assertNull(h.run(abort, false));
        assertEquals(4, h.markers.get(0).producerEpoch());
        assertEquals(false, h.markers.get(0).commit());
        // the zombie's next request at its old epoch: fenced already while the markers are written (TV1 checks the epoch first)
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.end("late", 7, 3, true, 3)));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.add("late", 7, 3, (short)0, TP)), "AddPartitions checks pending first");
        h.written(h.markers.get(0).complete());
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.end("late", 7, 3, true, 3)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.add("late", 7, 3, (short)0, TP)));
        assertNull(TxnSweeps.abortTimedOut(h.cache, h.ids, "idle", 65_001));
        assertNull(TxnSweeps.abortTimedOut(h.cache, h.ids, "gone", 65_001));
    }

    @Test
    void aFailedTimeoutAbortIsForgottenAndTakenAgain()
    {
        h.put("late", state(7, 3, TxnState.ONGOING, Set.of(TP), 2));
        final TxnWrite abort = TxnSweeps.abortTimedOut(h.cache, h.ids, "late", 70_000);
        assertEquals(TxnOutcome.NOTHING, h.failed(abort, Errors.KAFKA_STORAGE_ERROR));
        assertEquals(List.of("late"), TxnSweeps.timedOut(h.cache, 70_000));
    }

    @Test
    void idleIdsExpireAfterTheExpirationWithATombstone()
    {
        final TxnHarness short1 = new TxnHarness(new TxnConfig(900_000, 50, 50, 1_000, (short)2));
        // last updated at 5 000: expired from 6 000 on
        short1.put("empty", state(7, 3, TxnState.EMPTY, Set.of(), 0));
        short1.put("done", state(8, 3, TxnState.COMPLETE_ABORT, Set.of(), 0));
        short1.put("ongoing", state(9, 3, TxnState.ONGOING, Set.of(TP), 0));
        short1.put("prepared", state(10, 3, TxnState.PREPARE_ABORT, Set.of(TP), 0));
        assertEquals(List.of(), TxnSweeps.expire(short1.cache, 5_999));
        final List<TxnWrite> expired = TxnSweeps.expire(short1.cache, 6_000);
        assertEquals(Set.of("empty", "done"), Set.copyOf(expired.stream().map(TxnWrite::transactionalId).toList()));
        final TxnWrite empty = expired.stream().filter(w -> w.transactionalId().equals("empty")).findFirst().orElseThrow();
        assertNull(empty.value((short)1), "a tombstone");
        assertEquals(List.of(), TxnSweeps.expire(short1.cache, 6_000), "pending ones are not taken again");
        short1.run(empty);
        assertNull(short1.get("empty"));
        final TxnWrite done = expired.stream().filter(w -> w.transactionalId().equals("done")).findFirst().orElseThrow();
        assertEquals(TxnOutcome.NOTHING, short1.failed(done, Errors.KAFKA_STORAGE_ERROR));
        assertEquals(TxnState.COMPLETE_ABORT, short1.get("done").state());
        assertEquals(1, TxnSweeps.expire(short1.cache, 6_000).size());
        // an id removed is new again: InitProducerId gives it a new producer id
        assertEquals(1000, short1.run(short1.init("empty", -1, -1)).producerId());
    }
}
