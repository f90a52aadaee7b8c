package io.ferrite.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.index.TimeIndex;
import io.ferrite.wire.record.RecordBatchDescriptor;

import java.io.IOException;

/**
 * A {@link Segment}'s writer-side index bookkeeping, as Kafka's {@code LogSegment} keeps it: an offset- and a
 * time-index entry once more than {@code index.interval.bytes} were written since the last, the largest timestamp
 * so far and the offset it belongs to, the timestamp {@code segment.ms} counts from, and the last offset
 * appended. Single writer: the partition's writer, or recovery before the log is shared.
 */
final class SegmentIndexer
{
    private final OffsetIndex offsetIndex;
    private final TimeIndex timeIndex;
    private final int indexIntervalBytes;
    private int bytesSinceLastIndexEntry;
    private long maxTimestampSoFar;
    private long offsetOfMaxTimestampSoFar;
    private long rollingBasedTimestamp = RecordBatchDescriptor.NO_TIMESTAMP;
    private long lastOffset = -1;

    SegmentIndexer(final OffsetIndex offsetIndex, final TimeIndex timeIndex, final int indexIntervalBytes)
    {
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
        this.indexIntervalBytes = indexIntervalBytes;
        maxTimestampSoFar = timeIndex.lastTimestamp();
        offsetOfMaxTimestampSoFar = timeIndex.lastOffset();
    }

    long maxTimestamp()
    {
        return maxTimestampSoFar;
    }

    long offsetOfMaxTimestamp()
    {
        return offsetOfMaxTimestampSoFar;
    }

    /** The last offset appended, or -1 for an empty segment. */
    long lastOffset()
    {
        return lastOffset;
    }

    /** Whether the time-based roll counts from the first batch's timestamp (else from the segment's creation). */
    boolean rollsByBatchTimestamps()
    {
        return rollingBasedTimestamp >= 0;
    }

    /** {@link Segment#timeWaitedForRoll}, for a segment created at {@code createdMs}. */
    long timeWaitedForRoll(final long nowMs, final long incomingMaxTimestamp, final long createdMs)
    {
        return rollingBasedTimestamp >= 0 ? incomingMaxTimestamp - rollingBasedTimestamp : nowMs - createdMs;
    }

    /** Claims the index space an entry for the next batch needs: once a batch is published its entries must not fail. */
    void ensureRoom() throws IOException
    {
        if (bytesSinceLastIndexEntry > indexIntervalBytes)
        {
            offsetIndex.ensureRoomAllocated();
            timeIndex.ensureRoomAllocated();
        }
    }

    /** Index bookkeeping for a batch at {@code position} (append and recovery alike). */
    void indexed(final int position, final int length, final long batchLastOffset, final long batchMaxTimestamp)
    {
        if (position == 0)
        {
            rollingBasedTimestamp = batchMaxTimestamp;
        }
        if (batchMaxTimestamp > maxTimestampSoFar)
        {
            maxTimestampSoFar = batchMaxTimestamp;
            offsetOfMaxTimestampSoFar = batchLastOffset;
        }
        if (bytesSinceLastIndexEntry > indexIntervalBytes)
        {
            offsetIndex.append(batchLastOffset, position);
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, false);
            bytesSinceLastIndexEntry = 0;
        }
        bytesSinceLastIndexEntry += length;
        lastOffset = batchLastOffset;
    }

    /** The closing time-index entry of a segment that stops taking appends: its largest timestamp survives a restart. */
    void closingTimeEntry() throws IOException
    {
        if (maxTimestampSoFar != RecordBatchDescriptor.NO_TIMESTAMP)
        {
            timeIndex.ensureRoomAllocated();
            timeIndex.maybeAppend(maxTimestampSoFar, offsetOfMaxTimestampSoFar, true);
        }
    }

    /** Recovery starts over: everything the appends taught is forgotten (the indexes are reset by the segment). */
    void reset()
    {
        bytesSinceLastIndexEntry = 0;
        maxTimestampSoFar = RecordBatchDescriptor.NO_TIMESTAMP;
        rollingBasedTimestamp = RecordBatchDescriptor.NO_TIMESTAMP;
        lastOffset = -1;
    }
}
