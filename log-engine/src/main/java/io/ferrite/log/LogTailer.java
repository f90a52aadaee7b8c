package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

/**
 * An in-process reader that follows a partition log batch by batch, in place in the segments'
 * mappings: it keeps its segment and position, so reading the next batch is a bounds check and a
 * wrap — no index search, no copy, no system call, no allocation. One tailer per reading thread;
 * the log's writer is not disturbed.
 *
 * <p>The bytes a {@link #next} call wraps stay valid while their segment exists and for
 * {@code file.delete.delay.ms} after retention deletes it. A tailer left behind by retention finds
 * its place again through {@link PartitionLog#readBatch}, from the log start.
 */
public final class LogTailer
{
    private final PartitionLog log;
    private Segment segment;
    private int position;
    private long nextOffset;

    /** A tailer whose first batch is the one holding {@code offset}. */
    public LogTailer(final PartitionLog log, final long offset)
    {
        this.log = log;
        this.nextOffset = offset;
    }

    /** The offset after the last batch read (where the next read starts). */
    public long nextOffset()
    {
        return nextOffset;
    }

    /**
     * Wraps {@code batch} around the next batch whose offsets lie below {@code maxOffset} (the high
     * watermark for committed data only, {@link Long#MAX_VALUE} for all that is appended).
     *
     * @return whether there was one; false leaves the tailer where it was
     */
    public boolean next(final long maxOffset, final RecordBatch batch)
    {
        final Segment s = segment;
        if (s != null)
        {
            final int size = s.size();
            if (position < size)
            {
                if (s.batchLastOffset(position) >= maxOffset)
                {
                    return false;
                }
                batch.wrap(s.log.view(), position);
                position += batch.sizeInBytes();
                nextOffset = batch.lastOffset() + 1;
                return true;
            }
            // the writer publishes a segment's size before the log end offset: when the end is past
            // this tailer and its segment has nothing more, the rest is in a later segment
            if (nextOffset >= log.logEndOffset())
            {
                return false;
            }
        }
        return seek(maxOffset, batch);
    }

    /** The slow path: the first read, a segment boundary, or a tailer that retention overtook. */
    private boolean seek(final long maxOffset, final RecordBatch batch)
    {
        final long from = Math.max(nextOffset, log.logStartOffset());
        final Segment[] segs = log.segments();
        for (int i = segs.length - 1; i >= 0; i--)
        {
            final Segment s = segs[i];
            if (s.baseOffset > from)
            {
                continue;
            }
            final int size = s.size();
            final int p = s.positionOf(from, size);
            if (p < 0)
            {
                if (i + 1 < segs.length)
                {
                    segment = segs[i + 1];
                    position = 0;
                    nextOffset = segs[i + 1].baseOffset;
                    return next(maxOffset, batch);
                }
                segment = s;
                position = size;
                return false;
            }
            segment = s;
            position = p;
            return next(maxOffset, batch);
        }
        return false;
    }
}
