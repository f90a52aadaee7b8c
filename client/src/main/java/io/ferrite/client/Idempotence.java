package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.InitProducerIdRequestEncoder;
import io.ferrite.wire.message.InitProducerIdResponseDecoder;
import org.agrona.DirectBuffer;

import java.util.ArrayList;

/**
 * The idempotent producer's state, after kafka-clients' {@code TransactionManager} without a
 * transactional id: the producer id and epoch from InitProducerId (asked of the least loaded ready
 * broker before the first send, again after a retriable error or a lost answer), a sequence number per
 * partition given to a batch when it is first sent, the batches sent and not yet completed in sequence
 * order, and the epoch bump: an error that leaves a gap in a partition's sequences (a batch refused by the
 * broker for good, OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID) raises the epoch by one on the client
 * (a new producer id once it reaches 32767) and numbers that partition's unacknowledged batches from 0
 * under it; the other partitions start from 0 under it once their batches in flight completed. A sent batch
 * that fails with its outcome unknown (expired, out of retries after a lost answer) leaves its partition
 * unresolved instead ({@link PartitionState#unresolved}): renumbering the batches behind it could write them
 * twice. The fatal
 * errors ({@link ClientErrors#fatalForIdempotence}, an InitProducerId refused) stop the producer. Nothing
 * here allocates on the send path; InitProducerId and the bump are control-path steps.
 */
final class Idempotence
{
    /** InitProducerId version 6 adds the two-phase-commit fields, which an idempotent producer leaves unset. */
    private static final short MAX_INIT_VERSION = 5;

    private final boolean enabled;
    private final long retryBackoffNs;
    private final InitProducerIdRequestEncoder request = new InitProducerIdRequestEncoder();
    private final InitProducerIdResponseDecoder response = new InitProducerIdResponseDecoder();
    private long producerId = -1;
    private short epoch = -1;
    private boolean initInFlight;
    private long initNotBeforeNs;
    private boolean bumpRequired;
    /** The epoch wrapped: the partitions that asked for the bump are renumbered once the new producer id is held. */
    private boolean newIdPending;
    /** Partitions with {@link PartitionState#unresolved} set. */
    private int unresolvedPartitions;
    private short fatalError;

    Idempotence(final boolean enabled, final long retryBackoffNs)
    {
        this.enabled = enabled;
        this.retryBackoffNs = retryBackoffNs;
    }

    boolean enabled()
    {
        return enabled;
    }

    long producerId()
    {
        return producerId;
    }

    short epoch()
    {
        return epoch;
    }

    /** 0, or the error that stopped the producer. */
    short fatalError()
    {
        return fatalError;
    }

    /** Whether batches may be sent: not idempotent, or a producer id is held and no fatal error happened. */
    boolean ready()
    {
        return !enabled || (producerId >= 0 && fatalError == 0);
    }

    /** The control steps of a duty cycle: a pending epoch bump, and InitProducerId while no id is held. */
    int poll(final ArrayList<NodeConnection> connections, final ArrayList<TopicState> topics, final long nowNs)
    {
        if (!enabled || fatalError != 0)
        {
            return 0;
        }
        int work = 0;
        if (unresolvedPartitions > 0)
        {
            work += resolve(topics);
        }
        if ((bumpRequired || newIdPending) && producerId >= 0)
        {
            bump(topics);
            work++;
        }
        if (producerId < 0 && !initInFlight && nowNs - initNotBeforeNs >= 0)
        {
            work += sendInit(connections, nowNs);
        }
        return work;
    }

    /** InitProducerId to the ready broker with the fewest requests in flight (kafka-clients' least loaded node). */
    private int sendInit(final ArrayList<NodeConnection> connections, final long nowNs)
    {
        NodeConnection best = null;
        for (int i = 0; i < connections.size(); i++)
        {
            final NodeConnection c = connections.get(i);
            if (c.canSend() && c.version(ApiKeys.INIT_PRODUCER_ID, MAX_INIT_VERSION) >= 0 &&
                (best == null || c.inFlight() < best.inFlight()))
            {
                best = c;
            }
        }
        if (best == null)
        {
            return 0; // the metadata's requests connect the brokers; asked again next cycle
        }
        final short version = best.version(ApiKeys.INIT_PRODUCER_ID, MAX_INIT_VERSION);
        final int body = best.begin(ApiKeys.INIT_PRODUCER_ID, version);
        request.wrap(best.buffer(), body, version).transactionalId((CharSequence)null)
            .transactionTimeoutMs(Integer.MAX_VALUE);
        if (version >= 3)
        {
            request.producerId(-1L).producerEpoch((short)-1);
        }
        final int length = request.finish();
        best.commit(ApiKeys.INIT_PRODUCER_ID, version, body + length, this, true, nowNs);
        initInFlight = true;
        return 1;
    }

    void onResponse(final short version, final DirectBuffer buffer, final int offset, final int limit, final long nowNs)
    {
        initInFlight = false;
        response.wrap(buffer, offset, limit, version);
        final short error = response.errorCode();
        if (error == ClientErrors.NONE)
        {
            granted(response.producerId(), response.producerEpoch());
        }
        else if (ClientErrors.retriable(error))
        {
            initNotBeforeNs = nowNs + retryBackoffNs; // COORDINATOR_LOAD_IN_PROGRESS, NOT_COORDINATOR, ...: again
        }
        else
        {
            fatalError = error == ClientErrors.INVALID_PRODUCER_EPOCH ? ClientErrors.PRODUCER_FENCED : error;
        }
    }

    /** The producer id and epoch InitProducerId answered (the tests give them directly). */
    void granted(final long producerId, final short epoch)
    {
        this.producerId = producerId;
        this.epoch = epoch;
    }

    /** The InitProducerId got no answer (the connection closed, or it timed out): ask again after the backoff. */
    void onFailure(final long nowNs)
    {
        initInFlight = false;
        initNotBeforeNs = nowNs + retryBackoffNs;
    }

    /**
     * Whether {@code first}, the head of its partition's sealed batches, may be sent now: a batch never sent
     * waits while the partition has batches of an older id or epoch unacknowledged; a retried one waits
     * until it is the first unacknowledged (so retries go one at a time, in sequence order).
     */
    boolean mayDrain(final PartitionState ps, final ProducerBatch first)
    {
        if (!first.hasSequence())
        {
            return !ps.unresolved && (!ps.hasUnacked() || !stale(ps));
        }
        return ps.firstUnacked == first;
    }

    /** Gives a batch sent for the first time the partition's next sequence (from 0 again under a new id or epoch). */
    void assign(final PartitionState ps, final ProducerBatch b)
    {
        if (stale(ps))
        {
            ps.producerId = producerId;
            ps.producerEpoch = epoch;
            ps.nextSequence = 0;
            ps.lastAckedSequence = -1;
        }
        b.stamp(producerId, epoch, ps.nextSequence);
        ps.nextSequence = Sequences.increment(ps.nextSequence, b.recordCount);
        ps.addUnacked(b);
    }

    void onAcknowledged(final PartitionState ps, final ProducerBatch b)
    {
        if (b.hasSequence() && b.producerId == ps.producerId && b.producerEpoch == ps.producerEpoch)
        {
            final int last = b.lastSequence();
            if (ps.lastAckedSequence < 0 || Sequences.before(ps.lastAckedSequence, last))
            {
                ps.lastAckedSequence = last; // the later one, across the wrap after Integer.MAX_VALUE
            }
        }
        ps.removeUnacked(b);
    }

    /** kafka-clients' {@code TransactionManager.canRetry} for a producer without a transactional id. */
    boolean canRetry(final PartitionState ps, final ProducerBatch b, final short error, final long logStartOffset)
    {
        if (error == ClientErrors.UNKNOWN_PRODUCER_ID)
        {
            if (logStartOffset >= 0 && !b.sequenceReset)
            {
                requestBump(ps); // the broker lost the producer's state (retention, say): a new epoch from 0
            }
            return true;
        }
        if (error == ClientErrors.OUT_OF_ORDER_SEQUENCE_NUMBER)
        {
            if (ps.unresolved ? b.baseSequence == ps.unresolvedSequence :
                !b.sequenceReset && Sequences.increment(ps.lastAckedSequence, 1) == b.baseSequence)
            {
                requestBump(ps); // a real gap before this batch (the unresolved one did not arrive): a new epoch from 0
            }
            return true; // otherwise an earlier batch is still on its way: just again
        }
        return ClientErrors.retriable(error);
    }

    /**
     * A batch failed for good. A fatal error stops the producer. A sent batch the broker refused (an error that
     * is not retriable, OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID) leaves a gap in its partition's
     * sequences: the epoch is bumped. A sent batch whose outcome is unknown ({@link ClientErrors#DELIVERY_TIMEOUT},
     * or a retriable error such as a lost answer when its retries ran out) may be in the log: its partition is
     * marked unresolved (kafka-clients' {@code markSequenceUnresolved}) and resolved by {@link #poll}.
     */
    void onFailed(final PartitionState ps, final ProducerBatch b, final short error)
    {
        ps.removeUnacked(b);
        if (ClientErrors.fatalForIdempotence(error))
        {
            fatalError = error;
        }
        else if (b.hasSequence() && fatalError == 0)
        {
            if (outcomeUnknown(error))
            {
                markUnresolved(ps, Sequences.increment(b.baseSequence, b.recordCount));
            }
            else
            {
                requestBump(ps);
            }
        }
    }

    /** Whether a batch failing with {@code error} after it was sent may still have been written by an earlier attempt. */
    static boolean outcomeUnknown(final short error)
    {
        return error == ClientErrors.DELIVERY_TIMEOUT || error == ClientErrors.CLIENT_CLOSED || ClientErrors.retriable(error);
    }

    private void markUnresolved(final PartitionState ps, final int nextSequence)
    {
        if (!ps.unresolved)
        {
            ps.unresolved = true;
            ps.unresolvedSequence = nextSequence;
            unresolvedPartitions++;
        }
        else if (Sequences.before(ps.unresolvedSequence, nextSequence))
        {
            ps.unresolvedSequence = nextSequence; // the later of the two, as kafka-clients keeps the max
        }
    }

    /**
     * kafka-clients' {@code maybeResolveSequences}: an unresolved partition with no batch left unacknowledged is
     * resolved when the broker acknowledged the last sequence given (the batch after the unknown one was written,
     * so it was too), and bumped otherwise (nothing is left to tell: the next batch starts a new epoch).
     */
    private int resolve(final ArrayList<TopicState> topics)
    {
        int work = 0;
        for (int i = 0; i < topics.size(); i++)
        {
            final PartitionState[] partitions = topics.get(i).partitions;
            for (int p = 0; p < partitions.length; p++)
            {
                final PartitionState ps = partitions[p];
                if (ps.unresolved && !ps.hasUnacked())
                {
                    clearUnresolved(ps);
                    if (Sequences.increment(ps.lastAckedSequence, 1) != ps.nextSequence)
                    {
                        requestBump(ps);
                    }
                    work++;
                }
            }
        }
        return work;
    }

    private void clearUnresolved(final PartitionState ps)
    {
        if (ps.unresolved)
        {
            ps.unresolved = false;
            unresolvedPartitions--;
        }
    }

    private void requestBump(final PartitionState ps)
    {
        ps.rewriteSequences = true;
        bumpRequired = true;
    }

    private boolean stale(final PartitionState ps)
    {
        return ps.producerId != producerId || ps.producerEpoch != epoch;
    }

    /**
     * Epoch + 1, and the partitions that asked numbered from 0 under it. After 32767 a new producer id is asked for
     * first; those partitions are numbered from 0 under it once it is held (kafka-clients'
     * {@code startSequencesAtBeginning} for the partitions to rewrite), the others start from 0 as they drain.
     */
    private void bump(final ArrayList<TopicState> topics)
    {
        bumpRequired = false;
        if (newIdPending)
        {
            newIdPending = false; // the new id, at the epoch InitProducerId gave
        }
        else if (epoch == Short.MAX_VALUE)
        {
            producerId = -1; // InitProducerId again
            epoch = -1;
            newIdPending = true;
            return;
        }
        else
        {
            epoch++;
        }
        for (int i = 0; i < topics.size(); i++)
        {
            final PartitionState[] partitions = topics.get(i).partitions;
            for (int p = 0; p < partitions.length; p++)
            {
                final PartitionState ps = partitions[p];
                if (ps.rewriteSequences)
                {
                    ps.rewriteSequences = false;
                    clearUnresolved(ps); // its batches start from 0 under the new epoch: nothing left to tell
                    int sequence = 0;
                    for (ProducerBatch b = ps.firstUnacked; b != null; b = b.nextUnacked)
                    {
                        b.stamp(producerId, epoch, sequence);
                        b.sequenceReset = true;
                        sequence = Sequences.increment(sequence, b.recordCount);
                    }
                    ps.producerId = producerId;
                    ps.producerEpoch = epoch;
                    ps.nextSequence = sequence;
                    ps.lastAckedSequence = -1;
                }
            }
        }
    }
}
