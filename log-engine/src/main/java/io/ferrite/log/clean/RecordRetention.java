package io.ferrite.log.clean;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.DirectBuffer;

/**
 * What a clean keeps of each batch and record: Kafka's {@code MemoryRecords.RecordFilter}, which
 * {@link BatchFilter} applies as Kafka's {@code filterTo} does. {@link #checkBatch} is called once per batch,
 * before its records; {@link #retainRecord} then once per record of a batch not {@link #DELETE}d, in offset
 * order, unless {@link #keepsNoRecord} says at once that none stays. {@link CleanerRetention} is the log cleaner's rules; a test or a tool may bring its own.
 */
public interface RecordRetention
{
    /** Batch retention (low bits of {@link #checkBatch}): drop the batch without reading its records. */
    int DELETE = 0;
    /** Batch retention: keep the batch's header, with no record, when no record is retained. */
    int RETAIN_EMPTY = 1;
    /** Batch retention: drop the batch when no record is retained. */
    int DELETE_EMPTY = 2;
    /** The mask of the retention in {@link #checkBatch}'s answer. */
    int RETENTION_MASK = 3;
    /**
     * Flag of {@link #checkBatch}: a control batch whose transaction has no data left, so a kept marker is
     * given a delete horizon as a tombstone is (Kafka's {@code containsMarkerForEmptyTxn}).
     */
    int MARKER_FOR_EMPTY_TXN = 4;

    /**
     * @return {@link #DELETE}, {@link #RETAIN_EMPTY} or {@link #DELETE_EMPTY}, with {@link #MARKER_FOR_EMPTY_TXN}
     * or'ed in when it applies
     */
    int checkBatch(RecordBatch batch);

    /**
     * Whether the record at {@code offset} of {@code batch} stays. Its key is {@code [keyOffset, keyOffset +
     * keyLength)} of {@code key} ({@code keyLength} -1 for no key); it is a tombstone when it has no value.
     */
    boolean retainRecord(RecordBatch batch, long offset, DirectBuffer key, int keyOffset, int keyLength, boolean hasValue);

    /**
     * Whether {@link #retainRecord} would answer false for every record of {@code batch}, known without reading them:
     * the filter then neither reads nor asks about its records (no decompression, no parse). Asked after
     * {@link #checkBatch} of a batch not {@link #DELETE}d; false, the default, when it is not known.
     */
    default boolean keepsNoRecord(RecordBatch batch)
    {
        return false;
    }

    /**
     * The delete horizon to give a batch that keeps a tombstone or an empty transaction's marker and has none yet:
     * Kafka's {@code currentTime + delete.retention.ms}.
     */
    long newDeleteHorizonMs();
}
