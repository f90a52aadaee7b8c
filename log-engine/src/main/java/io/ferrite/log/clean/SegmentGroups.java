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
        final long firstUncleanableOffset)
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
            long logSize = view.sizeInBytes(i);
            long indexSize = view.offsetIndexBytes(i);
            long timeIndexSize = view.timeIndexBytes(i);
            i++;
            while (i < n &&
                logSize + view.sizeInBytes(i) <= maxSize &&
                indexSize + view.offsetIndexBytes(i) <= maxIndexSize &&
                timeIndexSize + view.timeIndexBytes(i) <= maxIndexSize &&
                (view.sizeInBytes(i) == 0 || lastOffset(view, i, n, firstUncleanableOffset) - view.baseOffset(first) <= Integer.MAX_VALUE))
            {
                logSize += view.sizeInBytes(i);
                indexSize += view.offsetIndexBytes(i);
                timeIndexSize += view.timeIndexBytes(i);
                i++;
            }
            add(first, i - first);
        }
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
