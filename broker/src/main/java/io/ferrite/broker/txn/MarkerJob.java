package io.ferrite.broker.txn;

import java.util.Set;

/**
 * The markers a transaction in PrepareCommit/PrepareAbort needs: a COMMIT or ABORT control batch
 * with the producer id and epoch of the Prepare state to every partition in it, and, once every one
 * is written, {@link #complete} (the Complete* record, already prepared: the transaction stays
 * pending, so every request for it meanwhile gets CONCURRENT_TRANSACTIONS). The partition-side
 * epoch rule for the markers depends on {@link #clientTransactionVersion} (2: the marker's epoch
 * must be above the producer's). No partitions (an abort of nothing): write {@link #complete} at once.
 */
public record MarkerJob(String transactionalId, long producerId, short producerEpoch, boolean commit,
    short clientTransactionVersion, Set<TxnPartition> partitions, TxnWrite complete)
{
    public MarkerJob
    {
        partitions = Set.copyOf(partitions);
    }

    /** Prepares Complete* of {@code m} (in PrepareCommit or PrepareAbort) and says which markers come first. */
    static MarkerJob completing(final TxnMetadata m, final long now)
    {
        final TxnTransit complete = m.prepareComplete(now);
        return new MarkerJob(m.transactionalId(), m.producerId(), m.producerEpoch(), m.state() == TxnState.PREPARE_COMMIT,
            m.clientTransactionVersion(), m.partitions(), new TxnWrite(m.transactionalId(), complete, TxnWrite.Then.COMPLETED));
    }
}
