package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Map;
import java.util.Set;

import static io.ferrite.broker.txn.TxnHarness.state;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** AddPartitionsToTxn v0-5 (add and verify) and AddOffsetsToTxn against Kafka 4.4's rules (research §1.3). */
class AddPartitionsRulesTest
{
    private static final TxnPartition A = new TxnPartition("orders", 0);
    private static final TxnPartition B = new TxnPartition("orders", 1);
    private final TxnHarness h = new TxnHarness();

    @ParameterizedTest(name = "{0} v{1}")
    @CsvSource({"EMPTY, 0, 0", "COMPLETE_COMMIT, 3, 0", "COMPLETE_ABORT, 4, 2", "ONGOING, 5, 2"})
    void addsAndStartsTheTransaction(final TxnState from, final short version, final short clientTv)
    {
        h.put("t", state(7, 3, from, from == TxnState.ONGOING ? Set.of(A) : Set.of(), 0));
        final TxnWrite w = assertInstanceOf(TxnWrite.class, h.add("t", 7, 3, version, B));
        assertEquals(TxnState.ONGOING, w.transit().state());
        assertEquals(from == TxnState.ONGOING ? Set.of(A, B) : Set.of(B), w.transit().partitions());
        assertEquals(from == TxnState.ONGOING ? 5_000 : h.now, w.transit().startTimestamp(), "a transaction starts at its first add");
        assertEquals(clientTv, w.transit().clientTransactionVersion());
        assertEquals(Answer.error(Errors.NONE), h.run(w));
        assertEquals(TxnState.ONGOING, h.get("t").state());
    }

    @Test
    void partitionsAlreadyInAreNoneWithoutAWrite()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(A, B), 0));
        assertEquals(Answer.error(Errors.NONE), h.add("t", 7, 3, (short)1, A));
        assertTrue(h.log.isEmpty());
        assertFalse(h.get("t").hasPendingTransition());
    }

    @Test
    void errorsInKafkasOrder()
    {
        assertEquals(Errors.INVALID_REQUEST, TxnHarness.error(h.add("", 7, 3, (short)0, A)));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.add("unknown", 7, 3, (short)0, A)));
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(A), 0));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.add("t", 8, 3, (short)0, B)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.add("t", 7, 2, (short)0, B)));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(h.add("t", 7, 4, (short)0, B)));
        assertInstanceOf(TxnWrite.class, h.add("t", 7, 3, (short)0, B));
        // pending comes first: even a wrong id is CONCURRENT_TRANSACTIONS then
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.add("t", 8, 3, (short)0, B)));
        h.put("p", state(7, 3, TxnState.PREPARE_COMMIT, Set.of(A), 0));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.add("p", 7, 3, (short)0, A)));
        h.put("q", state(7, 3, TxnState.PREPARE_ABORT, Set.of(A), 0));
        assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, TxnHarness.error(h.add("q", 8, 3, (short)0, A)));
        assertEquals(Errors.CONCURRENT_TRANSACTIONS, TxnHarness.error(h.add("q", 7, 3, (short)0, A)));
    }

    @Test
    void aFailedAddLeavesTheTransactionAsItWas()
    {
        h.put("t", state(7, 3, TxnState.EMPTY, Set.of(), 0));
        final TxnWrite w = assertInstanceOf(TxnWrite.class, h.add("t", 7, 3, (short)0, A));
        assertEquals(Answer.error(Errors.NOT_COORDINATOR), h.failed(w, Errors.NOT_LEADER_OR_FOLLOWER).answer());
        assertEquals(TxnState.EMPTY, h.get("t").state());
        assertEquals(Set.of(), h.get("t").partitions());
    }

    @Test
    void addOffsetsAddsTheGroupsOffsetsPartitionAsTv0()
    {
        final TxnHarness seven = new TxnHarness(new TxnConfig(900_000, 50, 7, 604_800_000L, (short)2));
        seven.put("t", state(7, 3, TxnState.EMPTY, Set.of(), 2));
        final TxnWrite w = assertInstanceOf(TxnWrite.class, AddPartitionsRules.addOffsets(seven.cache, "t", 7, (short)3, "my-group", 1));
        final int partition = org.apache.kafka.common.utils.Utils.abs("my-group".hashCode()) % 7;
        assertEquals(Set.of(new TxnPartition("__consumer_offsets", partition)), w.transit().partitions());
        assertEquals(0, w.transit().clientTransactionVersion());
        seven.put("u", state(7, 3, TxnState.EMPTY, Set.of(), 0));
        assertEquals(Errors.PRODUCER_FENCED, TxnHarness.error(AddPartitionsRules.addOffsets(seven.cache, "u", 7, (short)4, "g", 1)));
    }

    @Test
    void verifyOnly()
    {
        assertEquals(Map.of(A, Errors.INVALID_REQUEST), AddPartitionsRules.verify(h.cache, "", 7, (short)3, Set.of(A)));
        assertEquals(Map.of(A, Errors.INVALID_PRODUCER_ID_MAPPING), AddPartitionsRules.verify(h.cache, "unknown", 7, (short)3, Set.of(A)));
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(A), 0));
        assertEquals(Map.of(A, Errors.NONE, B, Errors.TRANSACTION_ABORTABLE), AddPartitionsRules.verify(h.cache, "t", 7, (short)3, Set.of(A, B)));
        assertEquals(Map.of(A, Errors.INVALID_PRODUCER_ID_MAPPING, B, Errors.INVALID_PRODUCER_ID_MAPPING),
            AddPartitionsRules.verify(h.cache, "t", 8, (short)3, Set.of(A, B)));
        assertEquals(Map.of(A, Errors.PRODUCER_FENCED), AddPartitionsRules.verify(h.cache, "t", 7, (short)4, Set.of(A)));
        // a pending transition does not stop a verification, and nothing is written
        assertInstanceOf(TxnWrite.class, h.add("t", 7, 3, (short)0, B));
        assertEquals(Map.of(A, Errors.NONE, B, Errors.TRANSACTION_ABORTABLE), AddPartitionsRules.verify(h.cache, "t", 7, (short)3, Set.of(A, B)));
        h.put("p", state(7, 3, TxnState.PREPARE_ABORT, Set.of(A), 0));
        assertEquals(Map.of(A, Errors.CONCURRENT_TRANSACTIONS), AddPartitionsRules.verify(h.cache, "p", 7, (short)3, Set.of(A)));
        h.put("e", state(7, 3, TxnState.EMPTY, Set.of(), 0));
        assertEquals(Map.of(A, Errors.TRANSACTION_ABORTABLE), AddPartitionsRules.verify(h.cache, "e", 7, (short)3, Set.of(A)));
        assertTrue(h.log.isEmpty());
    }

    @ParameterizedTest
    @CsvSource({"0, 0", "3, 0", "4, 2", "5, 2"})
    void clientTransactionVersionOfTheRequestVersion(final short version, final short expected)
    {
        assertEquals(expected, TxnErrors.addPartitionsClientVersion(version));
    }

    @Test
    void anIdWhoseFirstInitFailedHasNoEpochAndIsAnsweredUnknownServerError()
    {
        final TxnWrite init = assertInstanceOf(TxnWrite.class, h.init("t", -1, -1));
        assertEquals(Answer.error(Errors.COORDINATOR_NOT_AVAILABLE), h.failed(init, Errors.REQUEST_TIMED_OUT).answer());
        final TxnMetadata m = h.get("t");
        assertEquals(-1, m.producerEpoch(), "the new id stays in the cache without an epoch, as in Kafka");
        final long pid = m.producerId();
        // Kafka's prepare throws IllegalArgumentException there, which its handler answers UNKNOWN_SERVER_ERROR
        assertEquals(Answer.error(Errors.UNKNOWN_SERVER_ERROR), h.add("t", pid, -1, (short)3, A));
        assertEquals(Answer.error(Errors.UNKNOWN_SERVER_ERROR), AddPartitionsRules.addOffsets(h.cache, "t", pid, (short)-1, "g", h.now));
        assertFalse(m.hasPendingTransition());
        assertTrue(h.log.isEmpty());
        // the client's next InitProducerId gives the id its first epoch
        assertEquals(new Answer(Errors.NONE, pid, (short)0), h.run(h.init("t", -1, -1)));
        assertEquals(Answer.error(Errors.NONE), h.run(h.add("t", pid, 0, (short)3, A)));
    }

    @Test
    void aTransitionThatCannotBeAppliedIsNoLongerPending()
    {
        h.put("t", state(7, 3, TxnState.ONGOING, Set.of(A), 0));
        final TxnWrite w = assertInstanceOf(TxnWrite.class, h.add("t", 7, 3, (short)3, B));
        final TxnTransit t = w.transit();
        // a transit the coordinator could only prepare through a bug: it goes back an epoch
        final TxnWrite wrong = new TxnWrite("t", new TxnTransit(t.producerId(), t.prevProducerId(), t.nextProducerId(),
            (short)2, t.lastProducerEpoch(), t.timeoutMs(), t.state(), t.partitions(), t.startTimestamp(), t.lastUpdateTimestamp(),
            t.clientTransactionVersion()), w.then());
        assertThrows(IllegalStateException.class, () -> TxnWrites.written(h.cache, wrong, h.now));
        assertFalse(h.get("t").hasPendingTransition(), "the bug cost its request only");
        assertEquals(Set.of(A), h.get("t").partitions());
        assertEquals(Answer.error(Errors.NONE), h.run(h.add("t", 7, 3, (short)3, B)));
        assertEquals(Set.of(A, B), h.get("t").partitions());
    }
}
