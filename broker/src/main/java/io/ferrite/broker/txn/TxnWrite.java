package io.ferrite.broker.txn;

/**
 * A prepared transition: the record to write to {@code __transaction_state} (key
 * {@link TxnRecords#key}, value {@link TxnRecords#value} of {@link #transit}, or a tombstone for
 * Dead) and what follows once it is written ({@link TxnWrites#written}) or failed
 * ({@link TxnWrites#failed}).
 */
public record TxnWrite(String transactionalId, TxnTransit transit, Then then) implements TxnDecision
{
    /** What the write is for. */
    public enum Then
    {
        /** InitProducerId: answer the written producer id and epoch. */
        ANSWER_PRODUCER,
        /** AddPartitionsToTxn, AddOffsetsToTxn: answer NONE. */
        ANSWER_NONE,
        /** EndTxn: answer NONE (v5: with the coming producer id and epoch), then send the markers. */
        ANSWER_END_TXN,
        /** InitProducerId over an ongoing transaction: the fence's abort; answer CONCURRENT_TRANSACTIONS, then send the markers. */
        ANSWER_RETRY_AFTER_FENCE,
        /** The timeout sweep's abort: nobody to answer; send the markers. */
        MARKERS_ONLY,
        /** Complete* after every marker was written: the transaction is over. */
        COMPLETED,
        /** Expiry: a tombstone; once written the id leaves the cache. */
        REMOVE
    }

    public byte[] key()
    {
        return TxnRecords.key(transactionalId);
    }

    /** The value to write at {@code version}, or null (a tombstone) for Dead. */
    public byte[] value(final short version)
    {
        return transit.state() == TxnState.DEAD ? null : TxnRecords.value(transit, version);
    }
}
