package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** EndTxn v0-4 (TV0/1) and v5 (TV2) against Kafka 4.4's rules (research §1.3, §2.2). */
class EndTxnRulesTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 1);
    private final TxnHarness h = new TxnHarness();

    /** state, commit → error, or (error 0) the Prepare state written; epoch 3 stays. */
    @ParameterizedTest(name = "v{0} {1} commit={2}")
    @CsvSource({
        "3, ONGOING, true, 0, PREPARE_COMMIT",
        "3, ONGOING, false, 0, PREPARE_ABORT",
        "0, ONGOING, true, 0, PREPARE_COMMIT",
        "4, COMPLETE_COMMIT, true, 0, ",
        "4, COMPLETE_COMMIT, false, 48, ",
        "4, COMPLETE_ABORT, false, 0, ",
        "4, COMPLETE_ABORT, true, 48, ",
        "4, PREPARE_COMMIT, true, 51, ",
        "4, PREPARE_COMMIT, false, 48, ",
        "4, PREPARE_ABORT, false, 51, ",
        "4, PREPARE_ABORT, true, 48, ",
        "4, EMPTY, false, 48, ",
        "4, EMPTY, true, 48, "})
    void transactionVersion1(final int version, final TxnState from, final boolean commit, final short error, final TxnState to)
    {
        h.put("t", state(7, 3, from, from == TxnState.EMPTY ? Set.of() : Set.of(TP), 0));
        final TxnDecision d = h.end("t", 7, 3, commit, version);
        if (to == null)
        {
            assertEquals(Answer.error(error), d);
            return;
        }
        final TxnWrite w = assertInstanceOf(TxnWrite.class, d);
        assertEquals(to, w.transit().state());
        assertEquals(3, w.transit().producerEpoch());
        assertEquals(0, w.transit().clientTransactionVersion());
        assertEquals(Answer.error(Errors.NONE), h.run(d, false), "TV1 answers no producer id");
        final MarkerJob job = h.markers.get(0);
        assertEquals(new MarkerJob("t", 7, (short)3, commit, (short)0, Set.of(TP), job.complete()), job);
        assertEquals(commit ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT, job.complete().transit().state());
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.end("t", 7, 3, commit, version)), "Complete* is pending");
        h.written(job.complete());
        assertEquals(Answer.error(Errors.NONE), h.end("t", 7, 3, commit, version), "a retry once complete");
    }

    @Test
    void transactionVersion1ChecksIdThenEpochThenPending()
    {
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.end("unknown", 7, 3, true, 3)));
        assertEquals(Errors.INVALID_REQUEST, TxnHarness.error(h.end("", 7, 3, true, 3)));
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.end("t", 8, 3, true, 3)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.end("t", 7, 2, true, 3)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.end("t", 7, 4, true, 3)));
        final TxnDecision pending = h.end("t", 7, 3, true, 3);
        assertInstanceOf(TxnWrite.class, pending);
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.end("t", 8, 3, true, 3)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.end("t", 7, 2, true, 3)));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.end("t", 7, 3, false, 3)));
    }

    @ParameterizedTest
    @CsvSource({"0, 47", "1, 47", "2, 90", "5, 90"})
    void producerFencedIsInvalidProducerEpochBeforeV2(final short version, final short expected)
    {
        assertEquals(expected, TxnErrors.forTxnRequest(Errors.PRODUCER_FENCED, version));
    }

    /** TV2, stored epoch 3: request epoch, state, commit → error, or the Prepare state written with its epoch. */
    @ParameterizedTest(name = "epoch {0} {1} commit={2}")
    @CsvSource({
        "3, ONGOING, true, 0, PREPARE_COMMIT, 4",
        "3, ONGOING, false, 0, PREPARE_ABORT, 4",
        "2, ONGOING, true, 90, , ",
        "4, ONGOING, true, 90, , ",
        "3, EMPTY, false, 0, PREPARE_ABORT, 4",
        "3, EMPTY, true, 48, , ",
        "2, EMPTY, false, 90, , ",
        "2, COMPLETE_COMMIT, true, 0, , ",
        "2, COMPLETE_COMMIT, false, 48, , ",
        "3, COMPLETE_COMMIT, true, 48, , ",
        "3, COMPLETE_COMMIT, false, 0, PREPARE_ABORT, 4",
        "1, COMPLETE_COMMIT, true, 90, , ",
        "2, COMPLETE_ABORT, false, 0, , ",
        "2, COMPLETE_ABORT, true, 48, , ",
        "3, COMPLETE_ABORT, false, 0, PREPARE_ABORT, 4",
        "3, COMPLETE_ABORT, true, 48, , ",
        "2, PREPARE_COMMIT, true, 51, , ",
        "2, PREPARE_COMMIT, false, 48, , ",
        "3, PREPARE_COMMIT, true, 90, , ",
        "2, PREPARE_ABORT, false, 51, , ",
        "2, PREPARE_ABORT, true, 48, , "})
    void transactionVersion2(final int epoch, final TxnState from, final boolean commit, final short error, final TxnState to,
        final Integer newEpoch)
    {
        h.put("t", state(7, 3, from, from == TxnState.ONGOING || from.isPrepared() ? Set.of(TP) : Set.of(), 2));
        final TxnDecision d = h.end("t", 7, epoch, commit, 5);
        if (to == null)
        {
            final Answer a = assertInstanceOf(Answer.class, d);
            assertEquals(error, a.error());
            // a recognised retry answers the current producer id and epoch
            assertEquals(error == Errors.NONE ? new Answer(Errors.NONE, 7, (short)3) : Answer.error(error), a);
            return;
        }
        final TxnWrite w = assertInstanceOf(TxnWrite.class, d);
        assertEquals(to, w.transit().state());
        assertEquals(newEpoch.shortValue(), w.transit().producerEpoch());
        assertEquals(3, w.transit().lastProducerEpoch());
        assertEquals(2, w.transit().clientTransactionVersion());
        final boolean emptyAbort = from != TxnState.ONGOING;
        assertEquals(emptyAbort ? h.now : 5_000, w.transit().startTimestamp());
        assertEquals(new Answer(Errors.NONE, 7, newEpoch.shortValue()), h.run(d));
        assertEquals(emptyAbort ? Set.of() : Set.of(TP), h.markers.get(0).partitions());
        assertEquals(newEpoch.shortValue(), h.markers.get(0).producerEpoch(), "markers carry the bumped epoch");
        // the client retries with the epoch it sent: recognised by the bump
        assertEquals(new Answer(Errors.NONE, 7, newEpoch.shortValue()), h.end("t", 7, epoch, commit, 5));
    }

    @Test
    void transactionVersion2ChecksPendingThenIdThenEpoch()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 2));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.end("t", 8, 3, true, 5)));
        assertInstanceOf(TxnWrite.class, h.end("t", 7, 3, true, 5));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.end("t", 8, 3, true, 5)));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.end("t", 7, 1, true, 5)));
    }

    @Test
    void exhaustedEpochTakesTheNextProducerIdAtComplete()
    {
        h.put("t", state(7, 32766, TxnState.ONGOING, Set.of(TP), 2));
        final TxnWrite prepare = assertInstanceOf(TxnWrite.class, h.end("t", 7, 32766, true, 5));
        assertEquals(32767, prepare.transit().producerEpoch());
        assertEquals(1000, prepare.transit().nextProducerId());
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(prepare, false));
        final MarkerJob job = h.markers.get(0);
        assertEquals(7, job.producerId(), "markers of the old id");
        assertEquals(32767, job.producerEpoch());
        h.written(job.complete());
        final TxnMetadata m = h.get("t");
        assertEquals(1000, m.producerId());
        assertEquals(0, m.producerEpoch());
        assertEquals(7, m.prevProducerId());
        assertEquals(-1, m.nextProducerId());
        // the retry of the EndTxn whose answer was lost, with the old id at 32766
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.end("t", 7, 32766, true, 5));
        assertEquals(Errors.INVALID_TXN_STATE, TxnHarness.error(h.end("t", 7, 32766, false, 5)));
        h.idsFail = true;
        h.put("u", state(8, 32766, TxnState.ONGOING, Set.of(TP), 2));
        assertEquals(Errors.KAFKA_STORAGE_ERROR, TxnHarness.error(h.end("u", 8, 32766, true, 5)));
        assertFalse(h.get("u").hasPendingTransition());
    }

    @Test
    void exhaustedEpochWithNoProducerIdReadyIsRetriedByTheClient()
    {
        h.idsNotYet = true; // the next block of ids not on disk yet
        h.put("t", state(7, 32766, TxnState.ONGOING, Set.of(TP), 2));
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnHarness.error(h.end("t", 7, 32766, true, 5)));
        assertFalse(h.get("t").hasPendingTransition(), "nothing pending: the retry starts over");
        assertEquals(TxnState.ONGOING, h.get("t").state());
        h.idsNotYet = false;
        final TxnWrite prepare = assertInstanceOf(TxnWrite.class, h.end("t", 7, 32766, true, 5), "the client's retry");
        assertEquals(TxnState.PREPARE_COMMIT, prepare.transit().state());
        assertEquals(1000, prepare.transit().nextProducerId());
    }

    @Test
    void transactionVersion2FenceAbortDoesNotKeepAFailedFence()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 2));
        final TxnWrite abort = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        assertEquals(4, abort.transit().producerEpoch());
        assertEquals(3, h.get("t").producerEpoch(), "TV2: the epoch moves only when PrepareAbort is written");
        h.failed(abort, Errors.NOT_LEADER_OR_FOLLOWER);
        assertEquals(false, h.get("t").failedEpochFence(), "Kafka 4.4's TV2 path only logs a failed fence");
        assertEquals(4, assertInstanceOf(TxnWrite.class, h.init("t", -1, -1)).transit().producerEpoch());
    }

    @Test
    void anIdWhoseFirstInitFailedEndsAsInKafka()
    {
        final TxnWrite init = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        h.failed(init, Errors.REQUEST_TIMED_OUT);
        final long pid = h.get("t").producerId();
        // nothing here throws in Kafka: Empty is INVALID_TXN_STATE before v5, and a v5 abort of
        // nothing bumps the epoch from -1 to 0 (TransactionMetadata.prepareAbortOrCommit)
        assertEquals(Errors.INVALID_TXN_STATE, TxnHarness.error(h.end("t", pid, -1, false, 4)));
        final TxnWrite abort = assertInstanceOf(TxnWrite.class, h.end("t", pid, -1, false, 5));
        assertEquals(0, abort.transit().producerEpoch());
        assertEquals(new Answer(Errors.NONE, pid, (short)0), h.run(abort));
        assertEquals(TxnState.COMPLETE_ABORT, h.get("t").state());
    }

    @ParameterizedTest(name = "append error {0}")
    @CsvSource({"3, true", "19, true", "20, true", "7, true", "6, false", "56, false", "10, false", "-1, false"})
    void aFailedCompleteIsWrittenAgainOnlyWhenTheCoordinatorIsNotAvailable(final short appendError, final boolean retried)
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        final TxnOutcome prepared = h.written(assertInstanceOf(TxnWrite.class, h.end("t", 7, 3, true, 3)));
        final TxnWrite complete = prepared.markers().complete();
        final TxnOutcome outcome = h.failed(complete, appendError);
        // UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT are COORDINATOR_NOT_AVAILABLE:
        // written again; NOT_LEADER_OR_FOLLOWER, KAFKA_STORAGE_ERROR (NOT_COORDINATOR) and the rest wait for the next load
        assertEquals(new TxnOutcome(null, null, retried ? complete : null), outcome);
        assertEquals(TxnState.COMPLETE_COMMIT, h.get("t").pendingState(), "Complete* stays pending either way");
        if (!retried)
        {
            final TxnReplay.Loaded reloaded = h.replay();
            assertEquals(TxnState.COMPLETE_COMMIT, reloaded.toComplete().get(0).complete().transit().state(),
                "the next load prepares it again");
        }
    }
}
