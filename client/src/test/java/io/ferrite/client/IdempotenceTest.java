package io.ferrite.client;

import io.ferrite.wire.compress.Codecs;
import io.ferrite.wire.compress.CompressionType;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The idempotent producer's sequence bookkeeping, stepped by hand on real batches (built and sealed as the producer
 * builds them): a sent batch that fails with its outcome unknown leaves its partition unresolved (no bump that
 * would renumber the batches behind it and write them twice), as kafka-clients 4.4's {@code TransactionManager}.
 */
class IdempotenceTest
{
    private static final long ID = 7;
    private static final short MESSAGE_TOO_LARGE = 10;

    private final Codecs codecs = new Codecs();
    private final ArrayList<NodeConnection> connections = new ArrayList<>();
    private final ArrayList<TopicState> topics = new ArrayList<>();
    private final Idempotence idempotence = new Idempotence(true, 0);
    private final PartitionState ps;

    IdempotenceTest()
    {
        final TopicState t = new TopicState("t");
        t.partitionCount(1);
        topics.add(t);
        ps = t.partitions[0];
        idempotence.granted(ID, (short)0);
    }

    private ProducerBatch sealed(final int records)
    {
        final ProducerBatch b = new ProducerBatch(1024, codecs);
        b.open(topics.get(0), ps, CompressionType.NONE, 0, 1_000_000_000L);
        final UnsafeBuffer value = new UnsafeBuffer(new byte[4]);
        for (int i = 0; i < records; i++)
        {
            b.append(1, null, 0, -1, value, 0, 4, null, 50, i);
        }
        b.seal();
        return b;
    }

    /** A batch sent for the first time: as the producer's {@code sendTo} does once {@code mayDrain} allowed it. */
    private ProducerBatch sent(final int records)
    {
        final ProducerBatch b = sealed(records);
        assertTrue(idempotence.mayDrain(ps, b), "a new batch may go");
        idempotence.assign(ps, b);
        return b;
    }

    private void poll()
    {
        idempotence.poll(connections, topics, 0);
    }

    @Test
    void anExpiredBatchDoesNotRenumberTheBatchesBehindItAndTheNextAcknowledgementResolvesIt()
    {
        final ProducerBatch a = sent(2);
        final ProducerBatch b = sent(3);
        assertEquals(2, b.baseSequence);

        idempotence.onFailed(ps, a, ClientErrors.DELIVERY_TIMEOUT); // A may be in the log, and so may B
        poll();
        assertEquals(0, idempotence.epoch(), "no bump while B may tell whether A arrived");
        assertEquals(0, b.producerEpoch);
        assertEquals(2, b.baseSequence, "B keeps its sequence: the broker answers DUPLICATE if it has B");
        assertTrue(ps.unresolved);
        final ProducerBatch c = sealed(1);
        assertFalse(idempotence.mayDrain(ps, c), "no new batch while the partition is unresolved");
        assertTrue(idempotence.mayDrain(ps, b), "B is retried");

        idempotence.onAcknowledged(ps, b); // B written (or a duplicate): A was written before it
        poll();
        assertFalse(ps.unresolved);
        assertEquals(0, idempotence.epoch(), "resolved without a bump");
        assertTrue(idempotence.mayDrain(ps, c));
        idempotence.assign(ps, c);
        assertEquals(5, c.baseSequence);
    }

    @Test
    void anOutOfOrderAnswerForTheBatchAfterTheUnresolvedOneBumpsTheEpoch()
    {
        final ProducerBatch a = sent(2);
        final ProducerBatch b = sent(1);
        final ProducerBatch later = sent(1);
        idempotence.onFailed(ps, a, ClientErrors.NETWORK_EXCEPTION); // out of retries after lost answers
        poll();
        assertEquals(0, idempotence.epoch());

        assertTrue(idempotence.canRetry(ps, later, ClientErrors.OUT_OF_ORDER_SEQUENCE_NUMBER, 0));
        poll();
        assertEquals(0, idempotence.epoch(), "a batch further on proves nothing: B is still on its way");

        assertTrue(idempotence.canRetry(ps, b, ClientErrors.OUT_OF_ORDER_SEQUENCE_NUMBER, 0));
        poll();
        assertEquals(1, idempotence.epoch(), "B, right after A, refused: A did not arrive");
        assertEquals(1, b.producerEpoch);
        assertEquals(0, b.baseSequence);
        assertEquals(1, later.baseSequence);
        assertTrue(b.sequenceReset);
        assertFalse(ps.unresolved);
    }

    @Test
    void anUnresolvedPartitionWithNothingLeftToTellIsBumped()
    {
        final ProducerBatch a = sent(2);
        idempotence.onFailed(ps, a, ClientErrors.DELIVERY_TIMEOUT);
        final ProducerBatch c = sealed(1);
        assertFalse(idempotence.mayDrain(ps, c));
        poll(); // nothing unacknowledged, and the last acknowledged sequence is not the last given: bumped
        assertEquals(1, idempotence.epoch());
        assertFalse(ps.unresolved);
        assertTrue(idempotence.mayDrain(ps, c));
        idempotence.assign(ps, c);
        assertEquals(0, c.baseSequence);
        assertEquals(1, c.producerEpoch);
    }

    @Test
    void aBatchTheBrokerRefusedBumpsTheEpochAndRenumbersTheBatchesBehindIt()
    {
        final ProducerBatch a = sent(2);
        final ProducerBatch b = sent(3);
        idempotence.onFailed(ps, a, MESSAGE_TOO_LARGE); // an answer: A is not in the log
        poll();
        assertEquals(1, idempotence.epoch());
        assertEquals(0, b.baseSequence);
        assertFalse(ps.unresolved);
    }

    @Test
    void retriesAcrossTheSequenceWrapGoBackInOrderAndTheGapAfterTheWrapIsSeen()
    {
        final ProducerBatch first = sent(1);
        idempotence.onAcknowledged(ps, first);
        ps.nextSequence = Integer.MAX_VALUE - 2; // as after 2^31 - 3 records of this epoch
        ps.lastAckedSequence = Integer.MAX_VALUE - 3;
        final ProducerBatch y = sent(4); // MAX-2 .. MAX, 0
        final ProducerBatch x = sent(2); // 1, 2
        assertEquals(Integer.MAX_VALUE - 2, y.baseSequence);
        assertEquals(0, y.lastSequence(), "the last sequence wraps");
        assertEquals(1, x.baseSequence);
        final ProducerBatch never = sealed(1);
        ps.sealed.addLast(never);

        ps.sealed.insertBySequence(y); // the connection closed: both go back, in the order they were sent
        ps.sealed.insertBySequence(x);
        assertEquals(y, ps.sealed.pollFirst(), "Y, numbered before the wrap, first");
        assertEquals(x, ps.sealed.pollFirst());
        assertEquals(never, ps.sealed.pollFirst());
        assertTrue(idempotence.mayDrain(ps, y), "Y is the first unacknowledged: it may go");

        idempotence.onAcknowledged(ps, y);
        assertEquals(0, ps.lastAckedSequence, "acknowledged up to the wrapped sequence");
        assertTrue(idempotence.canRetry(ps, x, ClientErrors.OUT_OF_ORDER_SEQUENCE_NUMBER, 0));
        poll();
        assertEquals(1, idempotence.epoch(), "X, right after the acknowledged Y, refused: a real gap, bumped");
        assertEquals(0, x.baseSequence);
    }

    @Test
    void sequencesCompareAcrossTheWrap()
    {
        assertEquals(1, Sequences.increment(Integer.MAX_VALUE - 1, 3));
        assertEquals(0, Sequences.increment(Integer.MAX_VALUE, 1));
        assertEquals(0, Sequences.increment(-1, 1));
        assertTrue(Sequences.before(Integer.MAX_VALUE - 3, 0));
        assertFalse(Sequences.before(0, Integer.MAX_VALUE - 3));
        assertTrue(Sequences.before(4, 5));
        assertFalse(Sequences.before(5, 5));
    }

    @Test
    void afterTheEpochWrapsTheBatchesOfThePartitionThatAskedAreNumberedFromZeroUnderTheNewId()
    {
        idempotence.granted(ID, Short.MAX_VALUE);
        final ProducerBatch a = sent(1);
        final ProducerBatch b = sent(2);
        idempotence.onFailed(ps, a, MESSAGE_TOO_LARGE);
        poll();
        assertEquals(-1, idempotence.producerId(), "a new producer id asked for");
        idempotence.granted(ID + 1, (short)0);
        poll();
        assertEquals(0, idempotence.epoch(), "the epoch InitProducerId gave");
        assertEquals(ID + 1, b.producerId, "B under the new id");
        assertEquals(0, b.producerEpoch);
        assertEquals(0, b.baseSequence);
        assertTrue(b.sequenceReset);
        assertFalse(ps.rewriteSequences);
        assertEquals(2, ps.nextSequence);
    }
}
