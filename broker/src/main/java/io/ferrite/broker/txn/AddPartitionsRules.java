package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * AddPartitionsToTxn (v0-3 from clients, v4+ from a broker for a produce: add or verify only) and
 * AddOffsetsToTxn, as Kafka 4.4's {@code TransactionCoordinator.handleAddPartitionsToTransaction}
 * and {@code handleVerifyPartitionsInTransaction}. Whether each topic exists is the handler's to
 * check first (Kafka's KafkaApis answers UNKNOWN_TOPIC_OR_PARTITION / OPERATION_NOT_ATTEMPTED and
 * asks the coordinator nothing); so is the version translation ({@link TxnErrors#forTxnRequest}).
 */
public final class AddPartitionsRules
{
    public static final String OFFSETS_TOPIC = "__consumer_offsets";

    private AddPartitionsRules()
    {
    }

    /**
     * Adds the partitions to the transaction: one error for all of them, or a write answered NONE.
     *
     * @param clientTransactionVersion {@link TxnErrors#addPartitionsClientVersion} of the request's version
     */
    public static TxnDecision add(final TxnCache cache, final String transactionalId, final long producerId, final short epoch,
        final Set<TxnPartition> partitions, final short clientTransactionVersion, final long now)
    {
        final short error = cache.requestError(transactionalId);
        if (error != Errors.NONE)
        {
            return Answer.error(error);
        }
        final TxnMetadata m = cache.get(transactionalId);
        if (m.hasPendingTransition())
        {
            return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (m.producerId() != producerId)
        {
            return Answer.error(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (m.producerEpoch() != epoch)
        {
            return Answer.error(Errors.PRODUCER_FENCED);
        }
        if (m.state().isPrepared())
        {
            return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (m.state() == TxnState.ONGOING && m.partitions().containsAll(partitions))
        {
            return Answer.error(Errors.NONE);
        }
        if (m.producerEpoch() < 0)
        {
            // an id whose first InitProducerId write failed has no epoch yet: Kafka's prepare throws
            // there, which its request handler answers UNKNOWN_SERVER_ERROR
            return Answer.error(Errors.UNKNOWN_SERVER_ERROR);
        }
        return new TxnWrite(transactionalId, m.prepareAddPartitions(partitions, now, clientTransactionVersion),
            TxnWrite.Then.ANSWER_NONE);
    }

    /** AddOffsetsToTxn: adds the group's {@code __consumer_offsets} partition by the configured count, as a TV0 client. */
    public static TxnDecision addOffsets(final TxnCache cache, final String transactionalId, final long producerId,
        final short epoch, final String groupId, final long now)
    {
        return addOffsets(cache, transactionalId, producerId, epoch, cache.config().offsetsPartitionFor(groupId), now);
    }

    /** AddOffsetsToTxn: adds {@code __consumer_offsets} partition {@code offsetsPartition} (the group's), as a TV0 client. */
    public static TxnDecision addOffsets(final TxnCache cache, final String transactionalId, final long producerId,
        final short epoch, final int offsetsPartition, final long now)
    {
        return add(cache, transactionalId, producerId, epoch, Set.of(new TxnPartition(OFFSETS_TOPIC, offsetsPartition)), (short)0, now);
    }

    /**
     * AddPartitionsToTxn v4+ with VerifyOnly: each partition NONE when in the ongoing transaction,
     * TRANSACTION_ABORTABLE when not, or one error for all. Nothing is written, and a pending
     * transition does not stop it (Kafka's verification reads the state as it is).
     */
    public static Map<TxnPartition, Short> verify(final TxnCache cache, final String transactionalId, final long producerId,
        final short epoch, final Set<TxnPartition> partitions)
    {
        final short error = verifyError(cache, transactionalId, producerId, epoch);
        final Map<TxnPartition, Short> errors = new HashMap<>();
        final TxnMetadata m = error == Errors.NONE ? cache.get(transactionalId) : null;
        for (final TxnPartition tp : partitions)
        {
            final short e = m == null ? error : m.partitions().contains(tp) ? Errors.NONE : Errors.TRANSACTION_ABORTABLE;
            errors.put(tp, e);
        }
        return errors;
    }

    private static short verifyError(final TxnCache cache, final String transactionalId, final long producerId, final short epoch)
    {
        final short error = cache.requestError(transactionalId);
        if (error != Errors.NONE)
        {
            return error;
        }
        final TxnMetadata m = cache.get(transactionalId);
        if (m.producerId() != producerId)
        {
            return Errors.INVALID_PRODUCER_ID_MAPPING;
        }
        if (m.producerEpoch() != epoch)
        {
            return Errors.PRODUCER_FENCED;
        }
        return m.state().isPrepared() ? Errors.CONCURRENT_TRANSACTIONS : Errors.NONE;
    }
}
