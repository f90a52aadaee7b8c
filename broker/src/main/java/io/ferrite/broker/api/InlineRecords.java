package io.ferrite.broker.api;

/**
 * Which of a fetch response's record regions are copied into the response buffer beside their
 * headers instead of being sent with {@code transferTo}. A response whose regions are all copied
 * goes out in one {@code write}; each region sent from its file costs a {@code sendfile} and splits
 * the headers around it into another {@code write}: 2N+1 system calls for N partitions. Copying a
 * small region out of the segment's mapping (it is in the page cache: the append just wrote it) costs
 * less than the system call it saves; a large one keeps {@code transferTo}, which copies nothing in
 * user space.
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
     * 16 KiB: the region of one full {@code max.partition.fetch.bytes}-bounded small-batch partition read
     * by {@code RequestPathBenchmark.fetch}, which copies faster than it splices (jmh-results/profiles.md,
     * issue 17). Read once: a JVM system property rather than a broker setting, so an A/B run needs no
     * other code.
     */
    static final int REGION_MAX = Integer.getInteger("ferrite.fetch.inline.record.bytes", 16 * 1024);
    /**
     * 128 KiB a response: about what a loopback or LAN socket's send buffer takes in one write, so a
     * larger copy would not save a system call, and what a fetching connection's output may grow to.
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
