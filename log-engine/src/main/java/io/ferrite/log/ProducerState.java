package io.ferrite.log;

import io.ferrite.wire.record.RecordBatchDescriptor;

/**
 * What a partition remembers of one idempotent producer: its epoch and the sequence ranges and
 * offsets of its last {@value #CACHED_BATCHES} batches (as many as a producer may have in flight),
 * so that a retried batch is recognised and answered with its original offsets.
 * The transaction fields are kept for the transactions work (not used yet).
 */
final class ProducerState
{
    static final int CACHED_BATCHES = 5;

    final long producerId;
    short epoch = RecordBatchDescriptor.NO_PRODUCER_EPOCH;
    int coordinatorEpoch = -1;
    /** First offset of the producer's ongoing transaction, or -1 (for the transactions issue). */
    long currentTxnFirstOffset = -1;
    long lastTimestamp = RecordBatchDescriptor.NO_TIMESTAMP;

    // ring of the last batches, newest at (head + count - 1) % CACHED_BATCHES
    private final int[] firstSeq = new int[CACHED_BATCHES];
    private final int[] lastSeq = new int[CACHED_BATCHES];
    private final long[] lastOffset = new long[CACHED_BATCHES];
    private final int[] offsetDelta = new int[CACHED_BATCHES];
    private final long[] timestamp = new long[CACHED_BATCHES];
    private int head;
    private int count;

    ProducerState(final long producerId)
    {
        this.producerId = producerId;
    }

    boolean isEmpty()
    {
        return count == 0;
    }

    int lastSequence()
    {
        return count == 0 ? RecordBatchDescriptor.NO_SEQUENCE : lastSeq[newest()];
    }

    long lastOffset()
    {
        return count == 0 ? -1 : lastOffset[newest()];
    }

    int lastOffsetDelta()
    {
        return count == 0 ? 0 : offsetDelta[newest()];
    }

    long lastBatchTimestamp()
    {
        return count == 0 ? RecordBatchDescriptor.NO_TIMESTAMP : timestamp[newest()];
    }

    private int newest()
    {
        return (head + count - 1) % CACHED_BATCHES;
    }

    /** The cached batch with exactly this sequence range, as an index for the accessors below, or -1. */
    int findDuplicate(final int first, final int last)
    {
        for (int i = 0; i < count; i++)
        {
            final int at = (head + i) % CACHED_BATCHES;
            if (firstSeq[at] == first && lastSeq[at] == last)
            {
                return at;
            }
        }
        return -1;
    }

    long cachedLastOffset(final int at)
    {
        return lastOffset[at];
    }

    int cachedOffsetDelta(final int at)
    {
        return offsetDelta[at];
    }

    long cachedTimestamp(final int at)
    {
        return timestamp[at];
    }

    /** Records a batch; a new epoch forgets the batches of the old one. */
    void addBatch(final short batchEpoch, final int first, final int last, final long batchLastOffset, final int delta,
        final long batchTimestamp)
    {
        if (batchEpoch != epoch)
        {
            epoch = batchEpoch;
            head = 0;
            count = 0;
        }
        final int at;
        if (count == CACHED_BATCHES)
        {
            at = head;
            head = (head + 1) % CACHED_BATCHES;
        }
        else
        {
            at = (head + count) % CACHED_BATCHES;
            count++;
        }
        firstSeq[at] = first;
        lastSeq[at] = last;
        lastOffset[at] = batchLastOffset;
        offsetDelta[at] = delta;
        timestamp[at] = batchTimestamp;
        lastTimestamp = batchTimestamp;
    }
}
