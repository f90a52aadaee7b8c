package io.ferrite.broker.txn;

import java.util.Set;

/**
 * What a transaction's metadata becomes once a prepared transition is written: the content of its
 * {@code __transaction_state} record (all but {@code lastProducerEpoch}, which only lives in memory,
 * as in Kafka). Also what a record read back from the log holds (then {@code lastProducerEpoch} is
 * -1). {@code clientTransactionVersion} is the client's {@code transaction.version} feature level
 * (0, 1 or 2; 2 = epoch bump at every EndTxn, KIP-890).
 */
public record TxnTransit(
    long producerId,
    long prevProducerId,
    long nextProducerId,
    short producerEpoch,
    short lastProducerEpoch,
    int timeoutMs,
    TxnState state,
    Set<TxnPartition> partitions,
    long startTimestamp,
    long lastUpdateTimestamp,
    short clientTransactionVersion)
{
    public TxnTransit
    {
        partitions = Set.copyOf(partitions);
    }

    /** Whether a client of this {@code transaction.version} level bumps the epoch at every EndTxn. */
    public static boolean epochBump(final short transactionVersion)
    {
        return transactionVersion >= 2;
    }
}
