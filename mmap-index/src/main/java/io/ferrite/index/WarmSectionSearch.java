package io.ferrite.index;

/**
 * The search of a {@link MappedIndex}: the warm section, the last {@link #WARM_SECTION_BYTES} of
 * entries, first, then the rest. Why: readers are nearly all tailing consumers, whose targets lie in
 * the newest entries; 8192 bytes keep those lookups within the same two or three pages, so they stay
 * in the CPU and page caches while the cold part of a large index is only touched by rare catch-up
 * reads (the same reasoning as Kafka's {@code AbstractIndex}). Reads entries through
 * {@link MappedIndex#key}; allocates nothing.
 */
final class WarmSectionSearch
{
    static final int WARM_SECTION_BYTES = 8192;

    private WarmSectionSearch()
    {
    }

    /**
     * Index of the largest of the first {@code n} entries of {@code index} whose key is at most
     * {@code target}, or -1 when every key is larger (or there are no entries).
     */
    static int search(final MappedIndex index, final long target, final int n)
    {
        if (n == 0 || index.key(0) > target)
        {
            return -1;
        }
        final int warmFirst = Math.max(0, n - WARM_SECTION_BYTES / index.entrySize);
        if (index.key(warmFirst) <= target)
        {
            return binarySearch(index, target, warmFirst, n - 1);
        }
        return binarySearch(index, target, 0, warmFirst);
    }

    private static int binarySearch(final MappedIndex index, final long target, final int from, final int to)
    {
        // invariant: key(lo) <= target; answer in [lo, hi]
        int lo = from;
        int hi = to;
        while (lo < hi)
        {
            final int mid = (lo + hi + 1) >>> 1;
            if (index.key(mid) <= target)
            {
                lo = mid;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return lo;
    }
}
