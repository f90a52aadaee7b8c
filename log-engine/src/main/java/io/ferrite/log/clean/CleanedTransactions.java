package io.ferrite.log.clean;

import io.ferrite.wire.record.ControlRecords;
import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;
import org.agrona.collections.Long2LongHashMap;
import org.agrona.collections.LongHashSet;

import java.util.Arrays;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Which transactions a clean has seen data of, so that aborted transactions' batches and the markers of
 * transactions with no data left can go: Kafka's {@code CleanedTransactionMetadata}, on primitive arrays. Feed it
 * the aborted transactions of the range being cleaned ({@link #addAbortedTransaction}, in any order), then every
 * batch in offset order ({@link #onBatchRead}, {@link #onControlBatchRead}). One per clean (or {@link #clear()}
 * it); one thread.
 *
 * <p>An aborted transaction becomes "ongoing" once a batch at or past its first offset is read; a transactional
 * batch of a producer with an ongoing aborted transaction is aborted data (to be dropped), any other
 * transactional batch opens the producer's committed transaction. An ABORT marker may go when no data batch of
 * its transaction was read in this clean; a COMMIT marker likewise. Allocation-free once its arrays have grown
 * to the number of aborted transactions in one clean.
 */
public final class CleanedTransactions
{
    private final RecordReader reader;
    private final LongHashSet ongoingCommitted = new LongHashSet();
    /** producer id -> the slot of its ongoing aborted transaction. */
    private final Long2LongHashMap ongoingAborted = new Long2LongHashMap(-1L);

    // the aborted transactions not yet reached, a binary min-heap of slots ordered by first offset
    private int[] heap = new int[16];
    private int heapSize;

    // slots of aborted transactions: producer id, first offset, marker offset, last stable offset, the last
    // offset of a data batch of it read in this clean (-1 none)
    private long[] producerIds = new long[16];
    private long[] firstOffsets = new long[16];
    private long[] lastOffsets = new long[16];
    private long[] lastStableOffsets = new long[16];
    private long[] lastObservedBatchOffsets = new long[16];
    private int[] freeSlots = new int[16];
    private int freeCount;
    private int slotCount;

    private KeptAbortedTxn kept = KeptAbortedTxn.NONE;

    /** @param reader reads a control batch's first record (its marker type) */
    public CleanedTransactions(final RecordReader reader)
    {
        this.reader = reader;
    }

    /** Where the ABORT markers this clean keeps are told (the cleaned segment's transaction index). */
    public CleanedTransactions keptAbortedTxns(final KeptAbortedTxn kept)
    {
        this.kept = kept;
        return this;
    }

    /** Forgets everything: a new clean. */
    public void clear()
    {
        ongoingCommitted.clear();
        ongoingAborted.clear();
        heapSize = 0;
        freeCount = 0;
        slotCount = 0;
    }

    /** An aborted transaction of the range being cleaned, as its {@code .txnindex} entry holds it. */
    public void addAbortedTransaction(final long producerId, final long firstOffset, final long lastOffset, final long lastStableOffset)
    {
        final int slot = newSlot();
        producerIds[slot] = producerId;
        firstOffsets[slot] = firstOffset;
        lastOffsets[slot] = lastOffset;
        lastStableOffsets[slot] = lastStableOffset;
        lastObservedBatchOffsets[slot] = -1;
        if (heapSize == heap.length)
        {
            heap = Arrays.copyOf(heap, heapSize * 2);
        }
        int i = heapSize++;
        while (i > 0)
        {
            final int parent = (i - 1) >>> 1;
            if (firstOffsets[heap[parent]] <= firstOffset)
            {
                break;
            }
            heap[i] = heap[parent];
            i = parent;
        }
        heap[i] = slot;
    }

    /**
     * A data batch, in offset order.
     *
     * @return whether it is aborted data (its records can all go)
     */
    public boolean onBatchRead(final RecordBatch batch)
    {
        consumeAbortedUpTo(batch.lastOffset());
        if (!batch.isTransactional())
        {
            return false;
        }
        final long producerId = batch.producerId();
        final int slot = (int)ongoingAborted.get(producerId);
        if (slot >= 0)
        {
            lastObservedBatchOffsets[slot] = batch.lastOffset();
            return true;
        }
        ongoingCommitted.add(producerId);
        return false;
    }

    /**
     * A control batch, in offset order.
     *
     * @return whether the marker may go once its delete horizon has passed: no data of its transaction was read
     * in this clean
     * @throws CorruptRecordException when its control key is too short or of a negative version (as Kafka)
     */
    public boolean onControlBatchRead(final RecordBatch batch)
    {
        consumeAbortedUpTo(batch.lastOffset());
        reader.reset(batch);
        if (!reader.hasNext())
        {
            return true;
        }
        final short type = controlType(reader.next());
        final long producerId = batch.producerId();
        if (type == ControlRecords.ABORT)
        {
            final int slot = (int)ongoingAborted.remove(producerId);
            if (slot >= 0)
            {
                final boolean hadData = lastObservedBatchOffsets[slot] >= 0;
                if (hadData)
                {
                    kept.keep(producerIds[slot], firstOffsets[slot], lastOffsets[slot], lastStableOffsets[slot]);
                }
                freeSlot(slot);
                return !hadData;
            }
            return true;
        }
        if (type == ControlRecords.COMMIT)
        {
            return !ongoingCommitted.remove(producerId);
        }
        return false;
    }

    /**
     * As Kafka's {@code ControlRecordType.parse}: a key too short for a control key, or of a negative version, is
     * corrupt (the clean stops); an unknown type is not a marker.
     */
    private static short controlType(final Record record)
    {
        if (record.keyLength() < ControlRecords.KEY_LENGTH)
        {
            throw new CorruptRecordException("Invalid control record key: " + record.keyLength() + " bytes at offset " +
                record.offset());
        }
        if (record.buffer().getShort(record.keyOffset(), BIG_ENDIAN) < 0)
        {
            throw new CorruptRecordException("Invalid control record key: negative version at offset " + record.offset());
        }
        return ControlRecords.type(record);
    }

    private void consumeAbortedUpTo(final long offset)
    {
        while (heapSize > 0 && firstOffsets[heap[0]] <= offset)
        {
            final int slot = pollHeap();
            final long producerId = producerIds[slot];
            if (ongoingAborted.containsKey(producerId))
            {
                freeSlot(slot); // Kafka's computeIfAbsent: the producer's earlier one stays
            }
            else
            {
                ongoingAborted.put(producerId, slot);
            }
        }
    }

    private int pollHeap()
    {
        final int top = heap[0];
        final int last = heap[--heapSize];
        final long key = firstOffsets[last];
        int i = 0;
        while (true)
        {
            int child = 2 * i + 1;
            if (child >= heapSize)
            {
                break;
            }
            if (child + 1 < heapSize && firstOffsets[heap[child + 1]] < firstOffsets[heap[child]])
            {
                child++;
            }
            if (key <= firstOffsets[heap[child]])
            {
                break;
            }
            heap[i] = heap[child];
            i = child;
        }
        if (heapSize > 0)
        {
            heap[i] = last;
        }
        return top;
    }

    private int newSlot()
    {
        if (freeCount > 0)
        {
            return freeSlots[--freeCount];
        }
        if (slotCount == producerIds.length)
        {
            final int n = slotCount * 2;
            producerIds = Arrays.copyOf(producerIds, n);
            firstOffsets = Arrays.copyOf(firstOffsets, n);
            lastOffsets = Arrays.copyOf(lastOffsets, n);
            lastStableOffsets = Arrays.copyOf(lastStableOffsets, n);
            lastObservedBatchOffsets = Arrays.copyOf(lastObservedBatchOffsets, n);
            freeSlots = Arrays.copyOf(freeSlots, n);
        }
        return slotCount++;
    }

    private void freeSlot(final int slot)
    {
        freeSlots[freeCount++] = slot;
    }
}
