package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

/**
 * An in-process reader that follows a partition log batch by batch, in place in the segments'
 * mappings: it keeps its segment and position, so reading the next batch is a bounds check, a
 * look at the segment's retired flag and a wrap — no index search, no copy, no system call, no
 * allocation. One tailer per reading thread; the log's writer is not disturbed.
 *
 * <p>The bytes a {@link #next} call wraps stay valid while their segment exists and for
 * {@code file.delete.delay.ms} after retention deletes it. A tailer never starts a read in a segment
 * retention has deleted (or a closed log's): it finds its place again in the segments that remain —
 * the first batch at or after its offset, or the new log start; on a closed log (whose close retires
 * every segment) {@link #next} throws {@link LogClosedException}. A batch a call wrapped before the
 * close stays readable: a clean close leaves the mappings to the GC. A batch frame damaged on disk ends
 * its segment for the tailer, which goes on at the next segment (the frame is checked, the CRC is
 * the reader's to check: {@link RecordBatch#check}). Offsets missing between segments (a gap left
 * by damage) are passed over.
 */
public final class LogTailer
{
    private final PartitionLog log;
    private Segment segment;
    private int position;
    private long nextOffset;

    /** A tailer whose first batch is the one holding {@code offset} (or the first after it). */
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
     * @throws LogClosedException when the log is closed (a call racing the close may still answer)
     */
    public boolean next(final long maxOffset, final RecordBatch batch)
    {
        final Segment s = segment;
        if (s != null && !s.isRetired())
        {
            final int size = s.size();
            final int p = position;
            if (p < size)
            {
                final int end = s.frameEnd(p, size);
                if (end >= 0)
                {
                    return take(s, p, end, maxOffset, batch);
                }
                // a damaged frame: the seek passes over the rest of this segment
            }
            else if (nextOffset >= log.logEndOffset())
            {
                // the writer publishes a segment's size before the log end offset: when the end is past
                // this tailer and its segment has nothing more, the rest is in a later segment
                return false;
            }
        }
        return seek(maxOffset, batch);
    }

    private boolean take(final Segment s, final int p, final int end, final long maxOffset, final RecordBatch batch)
    {
        if (s.batchLastOffset(p) >= maxOffset)
        {
            return false;
        }
        batch.wrap(s.log.view(), p);
        position = end;
        nextOffset = batch.lastOffset() + 1;
        return true;
    }

    /**
     * The slow path: the first read, a segment boundary, damage, or a segment retention or a replacement
     * took. The first batch at or after the offset, in the segments of the log as it is now: a retired
     * segment found in a list that is no longer the log's sends the search to the new list (a
     * replacement's new segments hold its kept batches); in the log's list it is passed over.
     */
    private boolean seek(final long maxOffset, final RecordBatch batch)
    {
        log.checkOpen();
        Segment[] segs = log.segments();
        final long from = Math.max(nextOffset, log.logStartOffset());
        for (int i = SegmentList.floor(segs, from); i < segs.length; i++)
        {
            final Segment s = segs[i];
            if (s.isRetired())
            {
                final Segment[] now = log.segments();
                if (now != segs)
                {
                    // a replacement publishes its list before it retires the old run: search the list it put out
                    segs = now;
                    i = SegmentList.floor(segs, from) - 1;
                }
                continue; // else taken by retention (or a close) after this list was read: its offsets are gone
            }
            final int size = s.size();
            final int p = s.positionOf(from, size); // in a later segment than from's: its first batch
            if (p >= 0)
            {
                segment = s;
                position = p;
                return take(s, p, s.frameEnd(p, size), maxOffset, batch);
            }
            if (i == segs.length - 1)
            {
                // nothing at or after from yet: wait at the end of the last segment
                segment = s;
                position = size;
            }
        }
        return false;
    }
}
