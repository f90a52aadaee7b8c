package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.CoordinatorCall;

import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The transaction coordinator's side of a Produce's verification ({@link TxnVerifier}): Kafka's
 * AddPartitionsToTxn v4+ as the broker sends it, run on the coordinators' agent as a
 * {@link CoordinatorCall} whose answer the produce polls. VerifyOnly ({@link TxnCoordinator#verify}:
 * each partition NONE or TRANSACTION_ABORTABLE, nothing written) below produce v12, else an add with
 * transaction version 2 ({@link TxnCoordinator#addPartitions}: answered once written). A full
 * agent queue or a stopped agent answers COORDINATOR_NOT_AVAILABLE, as Kafka's manager answers a
 * coordinator it cannot reach. Allocates per question (once per transaction and partition: the
 * batches of a transaction already open on a partition are never verified).
 *
 * <p>An add answered CONCURRENT_TRANSACTIONS (the transaction's EndTxn v5 was answered at Prepare*
 * and its markers are still being written: the client's very next send meets it) is held on the
 * agent ({@link HeldAdd}), as Kafka 4.4's {@code ReplicaManager} retries it for
 * {@code add.partitions.to.txn.retry.backoff.max.ms} (100 ms) before that answer goes to the client.
 * Kafka retries on a timer every {@code add.partitions.to.txn.retry.backoff.ms} (20 ms); here the
 * agent asks again after every pass that changed anything and at every tick
 * ({@link io.ferrite.broker.coordinator.CoordinatorAgent#TICK_MS}: so the limit is seen up to a tick late).
 */
public final class ProduceVerifier implements TxnVerifier
{
    private final TxnCoordinator coordinator;
    /** {@code add.partitions.to.txn.retry.backoff.max.ms}: how long an add answered CONCURRENT_TRANSACTIONS is retried. */
    private final long retryMaxMs;

    public ProduceVerifier(final TxnCoordinator coordinator, final long retryMaxMs)
    {
        this.coordinator = coordinator;
        this.retryMaxMs = retryMaxMs;
    }

    @Override
    public Verification verify(final String transactionalId, final long producerId, final short epoch, final String[] topics,
        final int[] partitions, final int count, final boolean add, final Runnable waker)
    {
        final TxnPartition[] asked = new TxnPartition[count];
        final Set<TxnPartition> set = new LinkedHashSet<>();
        for (int i = 0; i < count; i++)
        {
            asked[i] = new TxnPartition(topics[i], partitions[i]);
            set.add(asked[i]);
        }
        final CoordinatorCall<TxnCoordinator, Answer> call = new CoordinatorCall<>(coordinator,
            (c, nowMs) -> add ? new Answer(null, new HeldAdd(() -> c.addPartitions(transactionalId, producerId, epoch, set, (short)2),
                nowMs + retryMaxMs)) :
                new Answer(c.verify(transactionalId, producerId, epoch, set), null),
            (out, at, answer) -> at, (out, at, error) -> at, waker);
        final Asked question = new Asked(call, asked);
        if (!coordinator.agent().offer(call))
        {
            question.refused = true;
        }
        return question;
    }

    /** The coordinator's answer: per partition (verify only), or one for all (an add, final once written). */
    private record Answer(Map<TxnPartition, Short> verified, HeldAdd added) implements CoordinatorCall.Outcome
    {
        @Override
        public boolean complete(final long nowMs)
        {
            return added == null || added.complete(nowMs);
        }

        short error(final TxnPartition tp)
        {
            if (added != null)
            {
                return added.answer().error();
            }
            final Short e = verified.get(tp);
            return e == null ? Errors.UNKNOWN_SERVER_ERROR : e;
        }
    }

    private static final class Asked implements Verification
    {
        final CoordinatorCall<TxnCoordinator, Answer> call;
        final TxnPartition[] partitions;
        boolean refused;

        Asked(final CoordinatorCall<TxnCoordinator, Answer> call, final TxnPartition[] partitions)
        {
            this.call = call;
            this.partitions = partitions;
        }

        @Override
        public boolean done()
        {
            return refused || call.answered();
        }

        @Override
        public short error(final int i)
        {
            final Answer answer = refused || call.abandoned() ? null : call.result();
            return answer == null ? Errors.COORDINATOR_NOT_AVAILABLE : answer.error(partitions[i]); // null too when the work threw
        }
    }
}
