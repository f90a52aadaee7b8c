package io.ferrite.log;

import java.io.IOException;

/**
 * The close of one partition log: the writer shut out first (an append in progress or an open
 * claim ended, {@link LogAppender#shutOut}), then, under the segments lock, either a clean close
 * or a close for deletion.
 */
final class LogCloser
{
    private final PartitionLog log;
    private final SegmentList segments;
    private final LogAppender appender;
    private final LogFlusher flusher;
    private final ProducerStateManager producers;
    private final LogEnvironment env;

    LogCloser(final PartitionLog log, final SegmentList segments, final LogAppender appender, final LogFlusher flusher,
        final ProducerStateManager producers, final LogEnvironment env)
    {
        this.log = log;
        this.segments = segments;
        this.appender = appender;
        this.flusher = flusher;
        this.producers = producers;
        this.env = env;
    }

    /**
     * {@link PartitionLog#close()}: flushes, trims the active segment, closes every file and then snapshots producer
     * state — in that order because trimming gives back the preallocated space a snapshot may need on a full disk.
     * Every step is attempted; the first failure is thrown after all of them (a missing snapshot only lengthens the
     * replay at the next open). Waits first, up to 10 s, for an append in progress or a claim open on another thread
     * to end.
     *
     * <p>{@code deleting} ({@link PartitionLog#closeForDeletion()}): appends and claims answer LOG_CLOSED from now on,
     * and the segments are unmapped only after {@code file.delete.delay.ms}, as retention's are — a fetch or an
     * in-place reader that found the log before it went may still be reading its mappings (an unmapped page under a
     * reader is a SIGSEGV). Nothing is flushed or snapshotted: its files go.
     */
    void close(final boolean deleting) throws IOException
    {
        appender.shutOut();
        segments.lock();
        try
        {
            if (!segments.markClosed(log.toString()))
            {
                return;
            }
            if (deleting)
            {
                flusher.closeForDeletion(); // after it no flush writes a file: the directory is renamed next
                for (final Segment s : segments.array())
                {
                    // the directory is renamed next: readers that found the log search the indexes until the delay
                    // passed, and nothing of the log reaches its files through their old paths, a new log's by then
                    s.forDeletion();
                    env.closeLater(s, log.config().fileDeleteDelayMs);
                }
                return;
            }
            closeClean();
        }
        finally
        {
            segments.unlock();
        }
    }

    /**
     * Flushes, trims the active segment, closes every file and then snapshots producer state — in
     * that order because trimming gives back the preallocated space a snapshot may need on a full
     * disk. Every step is attempted; the first failure is thrown after all of them (a missing
     * snapshot only lengthens the replay at the next open).
     */
    private void closeClean() throws IOException
    {
        IOException failure = null;
        try
        {
            flusher.flush();
        }
        catch (final IOException ex)
        {
            failure = ex;
        }
        for (final Segment s : segments.array())
        {
            try
            {
                s.close();
            }
            catch (final IOException ex)
            {
                failure = failure == null ? ex : failure;
            }
        }
        try
        {
            producers.takeSnapshot();
        }
        catch (final IOException ex)
        {
            failure = failure == null ? ex : failure;
        }
        if (failure != null)
        {
            throw failure;
        }
    }
}
