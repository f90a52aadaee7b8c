package io.ferrite.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.wire.record.RecordBatchDescriptor;

/**
 * Finding a batch inside a {@link Segment}: from the offset index's answer, checked (indexes carry
 * no checksum), then batch by batch, past damage by the next indexed batch whose frame checks.
 */
final class SegmentSearch
{
    private SegmentSearch()
    {
    }

    /**
     * The position of the first batch whose last offset is at least {@code target}, scanning from
     * the offset index's answer; -1 when the segment has no such batch below {@code limit}.
     */
    static int positionOf(final Segment s, final OffsetIndex offsetIndex, final long target, final int limit)
    {
        int p = offsetIndex.lookup(target);
        if (p != 0 && !plausibleBatchAt(s, p, target, limit))
        {
            p = 0; // indexes carry no checksum: one that points at no batch is ignored, and the scan starts over
        }
        while (p < limit)
        {
            final int end = s.frameEnd(p, limit);
            if (end < 0)
            {
                // damage: a scan cannot pass it, but the offset index knows where later batches start
                p = indexedBatchAfter(s, offsetIndex, p, limit);
                if (p < 0)
                {
                    return -1;
                }
                continue;
            }
            if (s.batchLastOffset(p) >= target)
            {
                return p;
            }
            p = end;
        }
        return -1;
    }

    /**
     * The first batch the offset index points at past {@code damaged} whose frame checks, or -1:
     * where reads go on after damage inside a segment, so it costs the batches up to the next index
     * entry (about {@code index.interval.bytes}), not the rest of the segment (a zeroed page in an
     * older segment lost 976 records where Kafka, reading on, lost 47).
     */
    static int indexedBatchAfter(final Segment s, final OffsetIndex offsetIndex, final int damaged, final int limit)
    {
        int lo = 0;
        int hi = offsetIndex.entries() - 1;
        int found = -1;
        while (lo <= hi)
        {
            final int mid = (lo + hi) >>> 1;
            if (offsetIndex.position(mid) > damaged)
            {
                found = mid;
                hi = mid - 1;
            }
            else
            {
                lo = mid + 1;
            }
        }
        for (int i = found; i >= 0 && i < offsetIndex.entries(); i++)
        {
            final int q = offsetIndex.position(i);
            if (q > damaged && q < limit && s.frameEnd(q, limit) >= 0)
            {
                return q;
            }
        }
        return -1;
    }

    /** Whether a batch header that could hold offsets up to {@code target} starts at {@code p}. */
    static boolean plausibleBatchAt(final Segment s, final int p, final long target, final int limit)
    {
        if (p < 0 || p > limit - RecordBatchDescriptor.HEADER_LENGTH ||
            s.magicAt(p) != RecordBatchDescriptor.MAGIC_V2)
        {
            return false;
        }
        final long base = s.batchBaseOffset(p);
        final int size = s.batchSize(p);
        return base >= s.baseOffset && base <= target && size >= RecordBatchDescriptor.HEADER_LENGTH && size <= limit - p;
    }
}
