package io.ferrite.log.clean;

import io.ferrite.log.SegmentsView;

import java.util.Arrays;

/**
 * The runs of segments one clean rewrites, each into as few new segments as fit: Kafka's
 * {@code Cleaner.groupSegmentsBySize}. From the log's first segment, each group takes the segments after its
 * first while the sum of their bytes stays within {@code segment.bytes}, the sums of their offset and time index
 * entries within {@code segment.index.bytes}, and the offsets of the next segment (up to the base of the one after
 * it, or the first uncleanable offset for the last) stay within an int of the group's base offset (an empty segment
 * always fits that last rule). Only segments whose base offset is below the end of the map are grouped (Kafka's
 * {@code logSegments(0, endOffset)}); the active segment never is. Filled once per clean into reused arrays.
 *
 * <p><b>Differs from Kafka 4.4</b>, whose sums are of the segments as they are: here a segment counts for what this
 * clean leaves of it as far as the offset map's load knows ({@link LoadedOffsets#supersededIn}): its bytes and index
 * entries less the share of its offsets whose records a later put superseded. A first clean of full segments, whose
 * records are mostly superseded, then rewrites them in a few groups, not one per segment: each group costs its own
 * files, fsyncs, renames, swap and directory fsync (two journal commits at least), which for the side by side's 10
 * segments of 4 MiB were the larger part of a clean's time beyond its CPU ({@code CleanerTiming}). The estimate is a
 * lower bound of what is removed (superseded records only; gaps between offsets count as kept), so a group's output
 * is rarely above {@code segment.bytes}; when it is (a batch's header kept with a few of its records, tombstones past
 * their horizon), the replacement starts another new segment where the writer would roll ({@code CleanedSegments}):
 * no new segment exceeds {@code segment.bytes} or its index limits either way. What the clean keeps is the same.
 */
final class SegmentGroups
{
    private int[] firsts = new int[16];
    private int[] sizes = new int[16];
    private int count;

    /**
     * @param endOffset the end of the offsets the map covers ({@code latestOffset + 1})
     */
    void group(final SegmentsView view, final int maxSize, final int maxIndexSize, final long endOffset,
        final long firstUncleanableOffset, final LoadedOffsets loaded)
    {
        count = 0;
        int n = 0;
        while (n < view.count() && !view.isActive(n) && view.baseOffset(n) < endOffset)
        {
            n++;
        }
        int i = 0;
        while (i < n)
        {
            final int first = i;
            long logSize = 0;
            long indexSize = 0;
            long timeIndexSize = 0;
            do
            {
                // the share of the segment's offsets, up to the next one's base (there is one: the active segment is
                // never grouped), that the load superseded
                final long offsets = view.baseOffset(i + 1) - view.baseOffset(i);
                final long superseded = loaded.supersededIn(view.baseOffset(i), view.baseOffset(i + 1));
                final long log = left(view.sizeInBytes(i), superseded, offsets);
                final long index = left(view.offsetIndexBytes(i), superseded, offsets);
                final long timeIndex = left(view.timeIndexBytes(i), superseded, offsets);
                if (i > first && (logSize + log > maxSize || indexSize + index > maxIndexSize || timeIndexSize + timeIndex > maxIndexSize ||
                    view.sizeInBytes(i) > 0 && lastOffset(view, i, n, firstUncleanableOffset) - view.baseOffset(first) > Integer.MAX_VALUE))
                {
                    break;
                }
                logSize += log;
                indexSize += index;
                timeIndexSize += timeIndex;
                i++;
            }
            while (i < n);
            add(first, i - first);
        }
    }

    /**
     * What the clean leaves of {@code bytes} (a segment's log, or one of its indexes) when {@code superseded} of its
     * {@code offsets} go: at most {@code bytes} (superseded offsets are among its offsets); the product fits a long
     * (bytes below 2^31, superseded at most 2^23).
     */
    private static long left(final long bytes, final long superseded, final long offsets)
    {
        return bytes - bytes * superseded / offsets;
    }

    /** Kafka's {@code lastOffsetForFirstSegment}: the offset before the next grouped segment, or before the first uncleanable. */
    private static long lastOffset(final SegmentsView view, final int i, final int n, final long firstUncleanableOffset)
    {
        return i + 1 < n ? view.baseOffset(i + 1) - 1 : firstUncleanableOffset - 1;
    }

    private void add(final int first, final int size)
    {
        if (count == firsts.length)
        {
            firsts = Arrays.copyOf(firsts, count * 2);
            sizes = Arrays.copyOf(sizes, count * 2);
        }
        firsts[count] = first;
        sizes[count] = size;
        count++;
    }

    int count()
    {
        return count;
    }

    /** The index in the view of group {@code g}'s first segment. */
    int first(final int g)
    {
        return firsts[g];
    }

    /** Segments in group {@code g}. */
    int size(final int g)
    {
        return sizes[g];
    }
}
