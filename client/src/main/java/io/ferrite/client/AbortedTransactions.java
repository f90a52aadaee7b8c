package io.ferrite.client;

import io.ferrite.wire.message.FetchResponseDecoder;
import io.ferrite.wire.record.RecordBatch;

import java.util.Arrays;

/**
 * read_committed: which batches of one partition of a Fetch answer belong to aborted transactions, from the answer's
 * list of aborted transactions (producer id, first offset). Walked in offset order with the batches, as kafka-clients'
 * {@code CompletedFetch} walks them: a transaction becomes open once a batch reaches its first offset, and a
 * transactional batch of an open producer is aborted until that producer's ABORT marker closes it. Reused for every
 * partition of every answer: the arrays grow to the largest list seen (warm-up) and nothing is allocated after.
 *
 * <pre>
 *   list (sorted by first offset):  (pid 7, first 10)   (pid 9, first 14)
 *   batches:  [pid 7, 10-12] -> aborted   [pid 9, 14] -> aborted   [ABORT marker pid 7, 15] -> pid 7 closed
 *             [pid 7, 16-17] -> handed out (a later transaction of pid 7, committed)
 * </pre>
 */
final class AbortedTransactions
{
    /** The listed transactions, sorted by first offset; {@link #next} is the first not yet open. */
    private long[] producerIds = new long[8];
    private long[] firstOffsets = new long[8];
    private int count;
    private int next;
    /** The producers with an aborted transaction open (their ABORT marker not reached yet). */
    private long[] open = new long[8];
    private int openCount;

    /** Takes the aborted transactions of a partition's answer. */
    void load(final FetchResponseDecoder.PartitionData partition)
    {
        count = 0;
        next = 0;
        openCount = 0;
        for (var a = partition.abortedTransactions(); a.hasNext(); )
        {
            a.next();
            if (count == producerIds.length)
            {
                producerIds = Arrays.copyOf(producerIds, count * 2);
                firstOffsets = Arrays.copyOf(firstOffsets, count * 2);
            }
            // insertion by first offset: the list is short (one entry per aborted transaction in the answer's range)
            int at = count++;
            while (at > 0 && firstOffsets[at - 1] > a.firstOffset())
            {
                producerIds[at] = producerIds[at - 1];
                firstOffsets[at] = firstOffsets[at - 1];
                at--;
            }
            producerIds[at] = a.producerId();
            firstOffsets[at] = a.firstOffset();
        }
    }

    /**
     * Whether the records of {@code batch}, the partition's next batch, are to be left out. Called for every batch
     * with a producer id, in offset order. {@code abortMarker} is true for a control batch whose record is an ABORT
     * marker: it closes its producer's aborted transaction (the marker itself is never handed out).
     */
    boolean skip(final RecordBatch batch, final boolean abortMarker)
    {
        final long lastOffset = batch.lastOffset();
        while (next < count && firstOffsets[next] <= lastOffset)
        {
            openTransaction(producerIds[next++]);
        }
        final long producerId = batch.producerId();
        if (abortMarker)
        {
            closeTransaction(producerId);
            return true;
        }
        return batch.isTransactional() && isOpen(producerId);
    }

    private void openTransaction(final long producerId)
    {
        if (isOpen(producerId))
        {
            return;
        }
        if (openCount == open.length)
        {
            open = Arrays.copyOf(open, openCount * 2);
        }
        open[openCount++] = producerId;
    }

    private boolean isOpen(final long producerId)
    {
        for (int i = 0; i < openCount; i++)
        {
            if (open[i] == producerId)
            {
                return true;
            }
        }
        return false;
    }

    private void closeTransaction(final long producerId)
    {
        for (int i = 0; i < openCount; i++)
        {
            if (open[i] == producerId)
            {
                open[i] = open[--openCount];
                return;
            }
        }
    }
}
