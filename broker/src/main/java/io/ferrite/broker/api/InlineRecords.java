package io.ferrite.broker.api;

/**
 * Which of a fetch response's record regions are copied into the response buffer beside their
 * headers instead of being sent with {@code transferTo}. A response whose regions are all copied
 * goes out in one {@code write}; each region sent from its file costs a {@code sendfile} and splits
 * the headers around it into another {@code write}: 2N+1 system calls for N partitions. Copying a
 * small region out of the segment's mapping costs less than the system call it saves (a tailing
 * read's pages are in the page cache; a cold page blocks the copy as it would block the sendfile); a
 * large one keeps {@code transferTo}, which copies nothing in user space. The copy is made as the
 * response is encoded, right after the read, so a segment deleted or replaced while the response
 * waits on a slow socket does not touch it.
 *
 * <p>Per region at most {@code ferrite.fetch.inline.record.bytes} (a JVM system property, read once;
 * 0 sends every region from its file, as before), and per response at most {@link #RESPONSE_BUDGET}
 * bytes in all: the connection's output buffer keeps the size of its largest response, so the
 * budget is what a fetching connection may hold beyond its headers. One instance per connection's
 * fetch, used by its network thread only.
 */
final class InlineRecords
{
    /**
     * 32 KiB: in FetchResponseBenchmark (one partition, regions of about 15, 30 and 61 KiB; three pairs
     * of runs under load 17-30 on 2 shared cores) a copied region answered faster than a spliced one at
     * 15 and 30 KiB (median 24 against 46 us, 19 against 31 us) and not at 61 KiB (56 against 48 us):
     * jmh-results/profiles.md, issue 17. A JVM system property rather than a broker setting, read once,
     * so that an A/B run needs no other build.
     */
    static final int REGION_MAX = Integer.getInteger("ferrite.fetch.inline.record.bytes", 32 * 1024);
    /**
     * 128 KiB a response: a bound on what a fetching connection's output grows to (it keeps the size of
     * its largest response) — four 32 KiB regions, or about a hundred partitions of one small batch.
     * Chosen, not measured: a larger one would let 1 000 fetching connections hold more than 128 MiB.
     */
    static final int RESPONSE_BUDGET = 128 * 1024;

    private int left;

    /** A new response. */
    void reset()
    {
        left = RESPONSE_BUDGET;
    }

    /** True, and the budget taken, if a region of {@code length} bytes is to be copied. */
    boolean take(final int length)
    {
        if (length > 0 && length <= REGION_MAX && length <= left)
        {
            left -= length;
            return true;
        }
        return false;
    }
}
