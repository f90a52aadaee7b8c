package io.ferrite.broker.txn;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionCount;

/**
 * The settings the coordinator's rules read (Kafka's names and 4.4 defaults in {@link #defaults()}).
 *
 * @param maxTimeoutMs           {@code transaction.max.timeout.ms}: a longer InitProducerId timeout is INVALID_TRANSACTION_TIMEOUT
 * @param stateLog               the partition count of {@code __transaction_state} its ids are placed by, one for the
 *                               coordinator and for FindCoordinator's placement ({@link PartitionCount}: the existing
 *                               topic's, fixed once, else {@code transaction.state.log.num.partitions})
 * @param offsetsPartitions      {@code offsets.topic.num.partitions}: AddOffsetsToTxn's partition of a group
 * @param idExpirationMs         {@code transactional.id.expiration.ms}: idle ids older than this are removed
 * @param transactionVersion     the cluster's finalized {@code transaction.version} level: the aborts the coordinator
 *                               starts itself use it, and it decides the value version written (0 below level 1:
 *                               then no TV2 request — EndTxn v5, AddPartitionsToTxn v4+ — may reach the rules, as
 *                               value version 0 cannot hold a client at level 2; Kafka clients read the level first)
 * @param timeoutCheckMs         {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}: how often the
 *                               transactions past their timeout are looked for and aborted
 */
public record TxnConfig(int maxTimeoutMs, PartitionCount stateLog, int offsetsPartitions, long idExpirationMs,
    short transactionVersion, long timeoutCheckMs)
{
    /** Kafka's transaction.abort.timed.out.transaction.cleanup.interval.ms default. */
    public static final long DEFAULT_TIMEOUT_CHECK_MS = 10_000;

    /** With {@code __transaction_state}'s count fixed at {@code stateLogPartitions} and Kafka's default timeout check interval. */
    public TxnConfig(final int maxTimeoutMs, final int stateLogPartitions, final int offsetsPartitions, final long idExpirationMs,
        final short transactionVersion)
    {
        this(maxTimeoutMs, PartitionCount.fixedAt(TxnCoordinator.TOPIC, stateLogPartitions), offsetsPartitions, idExpirationMs,
            transactionVersion, DEFAULT_TIMEOUT_CHECK_MS);
    }

    /** The partition count of {@code __transaction_state} its ids are placed by now ({@link PartitionCount#get}). */
    public int stateLogPartitions()
    {
        return stateLog.get();
    }

    public static TxnConfig defaults()
    {
        return new TxnConfig(900_000, 50, 50, 604_800_000L, (short)2);
    }

    public short valueVersion()
    {
        return TxnRecords.valueVersion(transactionVersion);
    }

    /** The {@code __transaction_state} partition of a transactional id. */
    public int partitionFor(final String transactionalId)
    {
        return stateLog.partitionFor(transactionalId);
    }

    /** The {@code __consumer_offsets} partition of a group (AddOffsetsToTxn). */
    public int offsetsPartitionFor(final String groupId)
    {
        return CoordinatorTopic.partitionFor(groupId, offsetsPartitions);
    }
}
