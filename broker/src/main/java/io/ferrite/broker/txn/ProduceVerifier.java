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
 */
public final class ProduceVerifier implements TxnVerifier
{
    private final TxnCoordinator coordinator;

    public ProduceVerifier(final TxnCoordinator coordinator)
    {
        this.coordinator = coordinator;
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
            (c, nowMs) -> add ? new Answer(null, c.addPartitions(transactionalId, producerId, epoch, set, (short)2)) :
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
    private record Answer(Map<TxnPartition, Short> verified, TxnCoordinator.Pending added) implements CoordinatorCall.Outcome
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
