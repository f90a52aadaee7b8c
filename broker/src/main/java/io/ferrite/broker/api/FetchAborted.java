package io.ferrite.broker.api;

import io.ferrite.log.AbortedTxnSink;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.message.FetchResponseEncoder;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * The aborted transactions a read_committed fetch lists for the partition it just read (Kafka's
 * {@code aborted_transactions}: producer id and first offset of each transaction aborted within the read), gathered
 * from the log's transaction index before the response's array is written. One per connection's fetch; network
 * thread; allocates only to grow (the index's scratch buffer on the connection's first read_committed read with
 * records, the arrays past eight transactions in one read).
 */
final class FetchAborted implements AbortedTxnSink
{
    /** The index reads: a few KiB, about a hundred entries a system call. */
    private ByteBuffer scratch;
    private long[] producerIds = new long[8];
    private long[] firstOffsets = new long[8];
    private int count;

    /** A transaction the index walk lists for the partition being read (see {@link #list}). */
    @Override
    public void abortedTransaction(final long producerId, final long firstOffset)
    {
        if (count == producerIds.length)
        {
            producerIds = Arrays.copyOf(producerIds, count * 2);
            firstOffsets = Arrays.copyOf(firstOffsets, count * 2);
        }
        producerIds[count] = producerId;
        firstOffsets[count] = firstOffset;
        count++;
    }

    /**
     * The aborted transactions a read_committed read of {@code length} bytes from {@code fetchOffset} (up to
     * {@code nextOffset}) must list (none for an empty read, as Kafka's); false when the index could not be read (the
     * partition is then answered with an error: records without their aborted list would pass aborted data off as
     * committed).
     */
    boolean list(final PartitionLog log, final long fetchOffset, final long nextOffset, final int length)
    {
        count = 0;
        if (length == 0)
        {
            return true;
        }
        if (scratch == null)
        {
            scratch = ByteBuffer.allocateDirect(34 * 128); // the connection's first read_committed read with records
        }
        scratch.clear();
        return log.transactions().collectAbortedTransactions(fetchOffset, nextOffset, scratch, this) == PartitionLog.READ_OK;
    }

    /** Writes the listed transactions into {@code partition}'s answer, or an empty array when it is answered no records. */
    void write(final FetchResponseEncoder.PartitionData partition, final boolean withRecords)
    {
        final int listed = withRecords ? count : 0;
        final FetchResponseEncoder.AbortedTransaction a = partition.abortedTransactions(listed);
        for (int i = 0; i < listed; i++)
        {
            a.next().producerId(producerIds[i]).firstOffset(firstOffsets[i]);
        }
    }
}
