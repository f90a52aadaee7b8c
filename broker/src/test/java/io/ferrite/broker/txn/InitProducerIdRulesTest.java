package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** InitProducerId's rules (research §1.3), each with the error or the transition Kafka 4.4 gives. */
class InitProducerIdRulesTest
{
    private static final TxnPartition TP = new TxnPartition("orders", 0);
    private final TxnHarness h = new TxnHarness();

    @Test
    void withoutTransactionalIdANewIdempotentProducerAndNothingWritten()
    {
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(h.init(null, -1, -1)));
        assertEquals(new Answer(Errors.NONE, 1001, (short)0), h.run(h.init(null, -1, -1)));
        assertTrue(h.log.isEmpty());
        assertTrue(h.cache.all().isEmpty());
        h.idsFail = true;
        assertEquals(Errors.KAFKA_STORAGE_ERROR, TxnHarness.error(h.init(null, -1, -1)));
    }

    /** No id until the next block is reserved: COORDINATOR_LOAD_IN_PROGRESS, which clients retry, as Kafka 4.4 answers it. */
    @Test
    void noIdYetAnswersCoordinatorLoadInProgressAndChangesNothing()
    {
        h.idsNotYet = true;
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnHarness.error(h.init(null, -1, -1)));
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnHarness.error(h.init("t", -1, -1)));
        assertTrue(h.log.isEmpty());
        assertTrue(h.cache.all().isEmpty());
        h.put("u", state(8, 32766, TxnState.COMPLETE_ABORT, Set.of(), 2));
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS, TxnHarness.error(h.init("u", -1, -1)), "an exhausted epoch's new id");
        assertNull(h.get("u").pendingState());
        h.idsNotYet = false;
        assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
    }

    @ParameterizedTest
    @CsvSource({"'', -1, -1", "t, 5, -1", "t, -1, 3", ", 5, -1"})
    void invalidRequests(final String id, final long pid, final int epoch)
    {
        assertEquals(Errors.INVALID_REQUEST, TxnHarness.error(h.init(id, pid, epoch)));
    }

    @ParameterizedTest
    @CsvSource({"0, 50", "-1, 50", "900001, 50", "900000, 0", "1, 0"})
    void timeoutAboveTheMaximumOrNotPositive(final int timeoutMs, final short expected)
    {
        final TxnDecision d = InitProducerIdRules.initProducerId(h.cache, h.ids, "t", timeoutMs, -1, (short)-1, h.now);
        assertEquals(expected, TxnHarness.error(d));
    }

    @Test
    void partitionNotServedOrLoading()
    {
        final TxnCache cache = new TxnCache(TxnConfig.defaults());
        assertEquals(Errors.NOT_COORDINATOR, TxnHarness.error(InitProducerIdRules.initProducerId(cache, h.ids, "t", 1000, -1, (short)-1, 0)));
        cache.loading(TxnConfig.defaults().partitionFor("t"));
        assertEquals(Errors.COORDINATOR_LOAD_IN_PROGRESS,
            TxnHarness.error(InitProducerIdRules.initProducerId(cache, h.ids, "t", 1000, -1, (short)-1, 0)));
        assertTrue(cache.anyLoading());
        cache.loaded(TxnConfig.defaults().partitionFor("t"), Map.of());
        assertFalse(cache.anyLoading());
        assertInstanceOf(TxnWrite.class, InitProducerIdRules.initProducerId(cache, h.ids, "t", 1000, -1, (short)-1, 0));
    }

    @Test
    void newIdGetsEpochZeroThenEveryInitBumps()
    {
        final TxnDecision first = h.init("t", -1, -1);
        final TxnWrite w = assertInstanceOf(TxnWrite.class, first);
        assertEquals(TxnState.EMPTY, w.transit().state());
        assertEquals(TxnState.EMPTY, h.get("t").pendingState());
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(first));
        assertEquals(new Answer(Errors.NONE, 1000, (short)1), h.run(h.init("t", -1, -1)));
        assertEquals(new Answer(Errors.NONE, 1000, (short)2), h.run(h.init("t", 1000, 1)));
        assertEquals(1, h.get("t").lastProducerEpoch());
        assertEquals(3, h.log.size());
    }

    @Test
    void aRetryAtTheLastEpochGetsTheSameEpochAnyOtherIsFenced()
    {
        h.run(h.init("t", -1, -1));
        h.run(h.init("t", 1000, 0));
        // the answer of the init from epoch 0 was lost: the producer asks again with epoch 0
        assertEquals(new Answer(Errors.NONE, 1000, (short)1), h.run(h.init("t", 1000, 0)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.init("t", 1000, 5)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.init("t", 77, 1)));
    }

    @ParameterizedTest
    @CsvSource({"0, 47", "1, 47", "2, 47", "3, 47", "4, 90", "5, 90"})
    void producerFencedIsInvalidProducerEpochBeforeV4(final short version, final short expected)
    {
        assertEquals(expected, TxnErrors.forInitProducerId(Errors.PRODUCER_FENCED, version));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnErrors.forInitProducerId(Errors.CONCURRENT_TRANSACTIONS, version));
    }

    @Test
    void aPendingTransitionIsConcurrent()
    {
        h.put("t", state(7, 3, TxnState.EMPTY, Set.of(), 2));
        final TxnWrite pending = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.init("t", -1, -1)));
        assertEquals(new Answer(Errors.NONE, 7, (short)4), h.run(pending));
    }

    @ParameterizedTest
    @EnumSource(value = TxnState.class, names = {"PREPARE_COMMIT", "PREPARE_ABORT"})
    void preparedTransactionIsConcurrent(final TxnState prepared)
    {
        h.put("t", state(7, 3, prepared, Set.of(TP), 2));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.init("t", -1, -1)));
    }

    @Test
    void ongoingIsFencedAndAbortedThenTheRetrySucceeds()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 2));
        final TxnWrite abort = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        assertEquals(TxnState.PREPARE_ABORT, abort.transit().state());
        assertEquals(4, abort.transit().producerEpoch());
        assertEquals(2, abort.transit().clientTransactionVersion());
        assertEquals(TxnWrite.Then.ANSWER_RETRY_AFTER_FENCE, abort.then());
        assertEquals(Answer.error(Errors.CONCURRENT_TRANSACTIONS), h.run(abort, false));
        final MarkerJob job = h.markers.get(0);
        assertEquals(new MarkerJob("t", 7, (short)4, false, (short)2, Set.of(TP), job.complete()), job);
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.init("t", -1, -1)));
        h.written(job.complete());
        assertEquals(TxnState.COMPLETE_ABORT, h.get("t").state());
        assertEquals(new Answer(Errors.NONE, 7, (short)5), h.run(h.init("t", -1, -1)));
    }

    @Test
    void withTransactionVersion1TheFenceEpochIsTakenAndKeptWhenItsAbortFails()
    {
        final TxnHarness v1 = new TxnHarness(new TxnConfig(900_000, 50, 50, 604_800_000L, (short)1));
        v1.put("t", state(7, 3, TxnState.ONGOING, Set.of(TP), 0));
        final TxnWrite abort = assertInstanceOf(TxnWrite.class, v1.init("t", -1, -1));
        assertEquals(4, abort.transit().producerEpoch());
        assertEquals(4, v1.get("t").producerEpoch(), "TV1 takes the fenced epoch before the write");
        assertEquals(0, abort.transit().clientTransactionVersion());
        assertEquals(Answer.error(Errors.NOT_COORDINATOR), v1.failed(abort, Errors.KAFKA_STORAGE_ERROR).answer());
        assertTrue(v1.get("t").failedEpochFence());
        assertEquals(TxnState.ONGOING, v1.get("t").state());
        final TxnWrite again = assertInstanceOf(TxnWrite.class, v1.init("t", -1, -1));
        assertEquals(4, again.transit().producerEpoch(), "no second bump after a failed fence");
        v1.run(again);
        assertFalse(v1.get("t").failedEpochFence());
    }

    @Test
    void exhaustedEpochRotatesTheProducerIdAndItsRetryIsRecognised()
    {
        h.put("t", state(7, 32766, TxnState.COMPLETE_COMMIT, Set.of(), 2));
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(h.init("t", 7, 32766)));
        assertEquals(7, h.get("t").prevProducerId());
        assertEquals(32766, h.get("t").lastProducerEpoch());
        // the answer was lost: the old id at its exhausted epoch is still this producer
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(h.init("t", 7, 32766)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.init("t", 7, 5)));
    }

    @Test
    void exhaustedEpochWithoutExpectationRotatesAndForgetsTheLastEpoch()
    {
        h.put("t", state(7, 32767, TxnState.EMPTY, Set.of(), 2));
        assertEquals(new Answer(Errors.NONE, 1000, (short)0), h.run(h.init("t", -1, -1)));
        assertEquals(-1, h.get("t").lastProducerEpoch());
        h.put("u", state(8, 32766, TxnState.COMPLETE_ABORT, Set.of(), 2));
        h.idsFail = true;
        assertEquals(Errors.KAFKA_STORAGE_ERROR, TxnHarness.error(h.init("u", -1, -1)));
        assertNull(h.get("u").pendingState());
    }

    @Test
    void aFailedWriteAnswersTheTranslatedErrorAndChangesNothing()
    {
        h.put("t", state(7, 3, TxnState.COMPLETE_COMMIT, Set.of(), 2));
        final TxnWrite w = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        assertEquals(Answer.error(Errors.COORDINATOR_NOT_AVAILABLE), h.failed(w, Errors.REQUEST_TIMED_OUT).answer());
        assertEquals(3, h.get("t").producerEpoch());
        assertNull(h.get("t").pendingState());
    }

    @ParameterizedTest
    @CsvSource({"3, 15", "19, 15", "20, 15", "7, 15", "6, 16", "56, 16", "10, -1", "18, -1", "2, 2"})
    void appendErrorsAreTranslated(final short append, final short expected)
    {
        assertEquals(expected, TxnErrors.ofAppend(append));
    }
}
