package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A fixed-rate schedule for one latency cell of {@link ClientLatency}: record {@code i} is due at {@code start + i x period},
 * and its latency is measured from that intended time, not from when it was actually sent, so a sender held up (a full
 * buffer, a blocked {@code send}, a late wake-up) counts its wait (no coordinated omission). The first {@link #warm}
 * records are the warm-up and are not measured.
 */
final class FixedRate
{
    /** Latencies are recorded in microseconds up to a minute. */
    static final long HIGHEST_US = TimeUnit.SECONDS.toMicros(60);

    final int rate;
    final long periodNs;
    final int warm;
    final int total;
    private long startNs;

    FixedRate(final int rate, final double warmupSeconds, final double seconds)
    {
        this.rate = rate;
        this.periodNs = TimeUnit.SECONDS.toNanos(1) / rate;
        this.warm = (int)Math.round(rate * warmupSeconds);
        this.total = warm + (int)Math.round(rate * seconds);
    }

    /** Starts the schedule: record 0 is due a millisecond from now. */
    FixedRate start()
    {
        startNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1);
        return this;
    }

    /** When record {@code i} is due (System.nanoTime()). */
    long due(final long i)
    {
        return startNs + i * periodNs;
    }

    boolean measured(final long i)
    {
        return i >= warm;
    }

    /** How many records are measured. */
    int measuredCount()
    {
        return total - warm;
    }

    /** Parks until record {@code i} is due (no spinning: the cores are shared with the broker). */
    void awaitDue(final long i)
    {
        final long due = due(i);
        for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime())
        {
            LockSupport.parkNanos(wait);
        }
    }

    /** The latency of record {@code i}, done at {@code nowNs}, from its intended time into {@code h} (us), if measured. */
    void record(final Histogram h, final long i, final long nowNs)
    {
        if (measured(i))
        {
            recordSince(h, due(i), nowNs);
        }
    }

    static void recordSince(final Histogram h, final long intendedNs, final long nowNs)
    {
        h.recordValue(Math.min(HIGHEST_US, Math.max(0, (nowNs - intendedNs) / 1000)));
    }

    static Histogram histogram()
    {
        return new Histogram(HIGHEST_US, 3);
    }

    /** The deadline by which a cell must have completed: its schedule plus a minute. */
    long deadline()
    {
        return due(total) + TimeUnit.SECONDS.toNanos(60);
    }
}
