package io.ferrite.broker.admin;

import java.util.concurrent.TimeUnit;

/**
 * The wall time the pending topics' files take to drain, per partition: measured over windows of at least
 * {@link #WINDOW_NS} while a backlog exists, from the backlog's start (or the last window's end) to a topic made — so
 * everything the agent does meanwhile is in it: other commands, each CreateTopics' journal append and fsync, the
 * journal's emptying and rewrites, and the CPU the agent does not get under load. A topic's per-topic cost (its
 * directories' fsyncs, metadata file) is in it at the mix of topic sizes actually made. Idle time is not: a window
 * opens when a backlog appears and closes when it is gone (or the test hook holds the chunks). The first window's
 * figure replaces the assumed one; later ones move it by a quarter. Agent thread only.
 */
final class DrainRate
{
    /** A window's wall time at least before it is folded in (the backlog's end folds a shorter one). */
    static final long WINDOW_NS = TimeUnit.MILLISECONDS.toNanos(200);

    private long nsPerPartition;
    private boolean measured;
    /** The window's start (System.nanoTime), or -1: no backlog. */
    private long start = -1;
    /** Partitions made in the window. */
    private long made;

    DrainRate(final long assumedNsPerPartition)
    {
        nsPerPartition = assumedNsPerPartition;
    }

    /** The wall ns a partition's files took to drain, as last measured (the assumed figure before any window). */
    long nsPerPartition()
    {
        return nsPerPartition;
    }

    /** A backlog exists from {@code now} (nothing when a window is already open). */
    void backlog(final long now)
    {
        if (start < 0)
        {
            start = now;
            made = 0;
        }
    }

    /** {@code partitions} made at {@code now}: the window folded in once it is long enough. */
    void made(final int partitions, final long now)
    {
        if (start < 0)
        {
            return;
        }
        made += partitions;
        if (now - start >= WINDOW_NS)
        {
            fold(now);
        }
    }

    /** The backlog is gone at {@code now}: what the window made is folded in, and it closes. */
    void drained(final long now)
    {
        if (start >= 0 && made > 0)
        {
            fold(now);
        }
        start = -1;
    }

    /** The chunks are held (a test): the time so far is not drain time; a new window starts at {@code now}. */
    void restart(final long now)
    {
        if (start >= 0)
        {
            start = now;
            made = 0;
        }
    }

    private void fold(final long now)
    {
        final long sample = (now - start) / made;
        nsPerPartition = measured ? nsPerPartition + (sample - nsPerPartition) / 4 : sample;
        measured = true;
        start = now;
        made = 0;
    }
}
