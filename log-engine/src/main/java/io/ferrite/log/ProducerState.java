package io.ferrite.log;

import io.ferrite.wire.record.RecordBatchDescriptor;

/**
 * What a partition remembers of one idempotent producer: its epoch and the sequence ranges and
 * offsets of its last {@value #CACHED_BATCHES} batches (as many as a producer may have in flight),
 * so that a retried batch is recognised and answered with its original offsets; and its transaction
 * on this partition: the first offset of the one open, the coordinator epoch of its last marker.
 * Kafka's {@code ProducerStateEntry}. Writer thread only.
 */
final class ProducerState
{
    static final int CACHED_BATCHES = 5;

    final long producerId;
    short epoch = RecordBatchDescriptor.NO_PRODUCER_EPOCH;
    int coordinatorEpoch = -1;
    /** First offset of the producer's ongoing transaction on this partition, or -1 (Kafka's currentTxnFirstOffset). */
    long currentTxnFirstOffset = -1;
    /** The last batch's max timestamp, or the last marker's timestamp. */
    long lastTimestamp = RecordBatchDescriptor.NO_TIMESTAMP;
    /** Neighbours in {@link OngoingTxns}' list of open transactions, ordered by first offset (null when none open). */
    ProducerState olderOpen;
    ProducerState newerOpen;

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

    boolean hasOpenTxn()
    {
        return currentTxnFirstOffset >= 0;
    }

    /**
     * A transaction marker was written for this producer (Kafka's {@code ProducerStateEntry.update}
     * with no batches): its epoch and coordinator epoch are the marker's, no transaction is open;
     * the cached batches go only when the epoch changed.
     */
    void endTxn(final short markerEpoch, final int markerCoordinatorEpoch, final long timestamp)
    {
        if (markerEpoch != epoch)
        {
            epoch = markerEpoch;
            head = 0;
            count = 0;
        }
        coordinatorEpoch = markerCoordinatorEpoch;
        currentTxnFirstOffset = -1;
        lastTimestamp = timestamp;
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
