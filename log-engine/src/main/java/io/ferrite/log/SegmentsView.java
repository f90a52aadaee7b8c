package io.ferrite.log;

/**
 * A read-only look at a partition log's segments for a log cleaner, as they were when {@link #take}
 * ran: the log may roll, retire or replace segments afterwards, so a cleaner acts on what it saw
 * through the log's {@link SegmentReplacer}, which checks the run is still there. Not for the produce
 * or fetch paths. One per cleaner thread, reused.
 */
public final class SegmentsView
{
    private Segment[] segments = new Segment[0];

    /** Takes the log's current segment list (oldest first; the last one is the active segment). */
    public SegmentsView take(final PartitionLog log)
    {
        segments = log.segments();
        return this;
    }

    public int count()
    {
        return segments.length;
    }

    /** Base offset of segment {@code i}. */
    public long baseOffset(final int i)
    {
        return segments[i].baseOffset;
    }

    /** Bytes of batches in segment {@code i}. */
    public long sizeInBytes(final int i)
    {
        return segments[i].size();
    }

    /** The largest batch timestamp in segment {@code i}, or -1 when it has none. */
    public long maxTimestamp(final int i)
    {
        return segments[i].maxTimestamp();
    }

    /** Bytes of entries in segment {@code i}'s offset index (Kafka's {@code offsetIndex().sizeInBytes()}). */
    public long offsetIndexBytes(final int i)
    {
        return (long)segments[i].offsetIndex.entries() * io.ferrite.index.OffsetIndex.ENTRY_SIZE;
    }

    /** Bytes of entries in segment {@code i}'s time index. */
    public long timeIndexBytes(final int i)
    {
        return (long)segments[i].timeIndex.entries() * io.ferrite.index.TimeIndex.ENTRY_SIZE;
    }

    /**
     * The largest timestamp of segment {@code i}'s first batch (Kafka's {@code getFirstBatchTimestamp}: when
     * its oldest data was written, which {@code max.compaction.lag.ms} counts from), or {@link Long#MAX_VALUE}
     * when it has no batch.
     */
    public long firstBatchTimestamp(final int i)
    {
        final Segment s = segments[i];
        return s.size() > 0 ? s.batchMaxTimestamp(0) : Long.MAX_VALUE;
    }

    /** Whether segment {@code i} is the active one (the writer's; never cleaned). */
    public boolean isActive(final int i)
    {
        return segments[i].isActive();
    }

    /** Drops the references taken, so retired segments are not kept reachable by an idle cleaner. */
    public void clear()
    {
        segments = new Segment[0];
    }
}
