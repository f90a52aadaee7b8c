package io.ferrite.log;

import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The segments of one partition log, oldest first, the last the active one: a copy-on-write array
 * that readers take with one volatile load and never lock for. The writer (a roll), retention and
 * close change it under {@link #lock()}, which also orders their other changes (the log start, the
 * closed flag) against each other; so does a {@link SegmentReplacer}'s swap.
 */
final class SegmentList
{
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Segment[] segments;
    /** Set under the lock by close: the segments are closed (or waiting to be), nothing may use them. */
    private volatile boolean closed;
    /** What reads of the closed log throw (made by the close, before {@link #closed} is set). */
    private LogClosedException closedException;

    /** What recovery found; set once, before the log is shared. */
    void loaded(final Segment[] segments)
    {
        this.segments = segments;
    }

    /** The segments as they are now; the array is never changed once published. */
    Segment[] array()
    {
        return segments;
    }

    /** The segment appends go to. */
    Segment active()
    {
        final Segment[] segs = segments;
        return segs[segs.length - 1];
    }

    int count()
    {
        return segments.length;
    }

    long sizeInBytes()
    {
        long total = 0;
        for (final Segment s : segments)
        {
            total += s.size();
        }
        return total;
    }

    /** The index of the last segment whose base offset is at most {@code offset} (0 when none is). */
    static int floor(final Segment[] segs, final long offset)
    {
        int lo = 0;
        int hi = segs.length - 1;
        while (lo < hi)
        {
            final int mid = (lo + hi + 1) >>> 1;
            if (segs[mid].baseOffset <= offset)
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

    void lock()
    {
        lock.lock();
    }

    void unlock()
    {
        lock.unlock();
    }

    /** Makes {@code next} the active segment (a roll); under the lock. */
    void add(final Segment next)
    {
        final Segment[] current = segments;
        final Segment[] updated = Arrays.copyOf(current, current.length + 1);
        updated[current.length] = next;
        segments = updated;
    }

    /**
     * Drops the {@code n} oldest segments (retention), under the lock; each is retired before the
     * list without it is published, so a tailer on one moves on.
     *
     * @return the segments dropped, for their files to be deleted
     */
    Segment[] removeOldest(final int n)
    {
        final Segment[] segs = segments;
        final Segment[] removed = Arrays.copyOf(segs, n);
        for (final Segment s : removed)
        {
            s.retire();
        }
        segments = Arrays.copyOfRange(segs, n, segs.length);
        return removed;
    }

    /**
     * Puts {@code fresh} in the place of {@code run} (a run of consecutive segments found in the list,
     * a replacement's), under the lock; the list is published before each of the run is retired (unlike
     * retention's), so a tailer that finds one retired re-reads the list and goes on in the new ones at
     * its next offset, never past their kept batches.
     */
    void replace(final Segment[] run, final Segment[] fresh)
    {
        final Segment[] segs = segments;
        int from = 0;
        while (segs[from] != run[0])
        {
            from++;
        }
        final Segment[] updated = new Segment[segs.length - run.length + fresh.length];
        System.arraycopy(segs, 0, updated, 0, from);
        System.arraycopy(fresh, 0, updated, from, fresh.length);
        System.arraycopy(segs, from + run.length, updated, from + fresh.length, segs.length - from - run.length);
        segments = updated;
        for (final Segment s : run)
        {
            s.retire(); // after the new list is out: a tailer that finds one retired finds the new ones in the list
        }
    }

    boolean isClosed()
    {
        return closed;
    }

    /**
     * Work on this log's files by their paths, under the lock, unless the log is closed (then false, and nothing
     * done): a deletion of the partition renames its directory once its close has taken the lock, and a new log of
     * the same name takes the old path at once, so a path used here still names this log's files. Retention and a
     * segment replacement reach files through it.
     */
    boolean underOpenLog(final FileWork work) throws java.io.IOException
    {
        lock.lock();
        try
        {
            if (closed)
            {
                return false;
            }
            work.run();
            return true;
        }
        finally
        {
            lock.unlock();
        }
    }

    /** See {@link #underOpenLog}. */
    @FunctionalInterface
    interface FileWork
    {
        void run() throws java.io.IOException;
    }

    /**
     * Throws when the log is closed: every read calls it after taking its answer, so that a read
     * that began after a close, or ran into one that had marked the log by then, gives no answer from
     * files that are going away (a region whose channel the close shuts). One volatile load (a plain
     * load on x86), on the object whose segment array the read has just loaded.
     */
    void checkOpen()
    {
        if (closed)
        {
            throw closedException;
        }
    }

    /**
     * Marks the segments closed, under the lock, and retires them, so that a tailer on one stops at
     * its next batch.
     *
     * @return false when they were already
     */
    boolean markClosed(final String logName)
    {
        if (closed)
        {
            return false;
        }
        closedException = new LogClosedException("log " + logName + " is closed");
        closed = true;
        for (final Segment s : segments)
        {
            s.retire();
        }
        return true;
    }

    /** See {@link Segment#makeIndexFilesAhead}; a failure is left for the writer, which makes the files itself and reports it. */
    int makeIndexFilesAhead()
    {
        if (closed)
        {
            return 0;
        }
        try
        {
            return active().makeIndexFilesAhead();
        }
        catch (final java.io.IOException ignored)
        {
            return 1; // counted against the budget: a disk refusing creations is not asked again this cycle
        }
    }

    /**
     * Allocates the active segment's next blocks ahead of the writer (mapped strategy); a failure is
     * left for the append that needs the space, which reports it as a storage error.
     */
    void preallocateActive()
    {
        if (closed)
        {
            return;
        }
        try
        {
            active().preallocate();
        }
        catch (final java.io.IOException ignored)
        {
            // the append that needs the space reports it
        }
    }
}
