package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
import org.agrona.concurrent.EpochClock;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.ClosedChannelException;
import java.nio.file.NoSuchFileException;

/**
 * The durability of one partition log: what asks for an fsync (fsync durability, {@code flush.messages},
 * {@code flush.ms}, a roll), the fsyncs themselves, and the durable offset and recovery point they
 * move. Flushes run on flushing threads (the group committer, the rolled-segment flusher, close),
 * never on the writer, which only counts its appends and enqueues a request.
 */
final class LogFlusher
{
    private static final VarHandle FLUSH_REQUESTED;
    private static final VarHandle APPENDED_MESSAGES;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            FLUSH_REQUESTED = lookup.findVarHandle(LogFlusher.class, "flushRequested", int.class);
            APPENDED_MESSAGES = lookup.findVarHandle(LogFlusher.class, "appendedMessages", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final PartitionLog log;
    private final LogOffsets offsets;
    private final SegmentList segments;
    private final EpochClock clock;
    private final LogEnvironment env;
    private final LogEpochs epochs;
    private final Object flushLock = new Object();
    /** Waiters of {@link #awaitDurable} wait on this; a flush wakes them only when there are some. */
    private final Object durableMonitor = new Object();
    /** Set by the first fsync that failed: the durable offset never moves again (see {@link FsyncFailure}). */
    private final FsyncFailure fsyncFailure = new FsyncFailure();

    @SuppressWarnings("unused") // through FLUSH_REQUESTED
    private volatile int flushRequested;
    private volatile long flushedMessages;
    /** Records appended so far: written by the writer only, with a release store (through APPENDED_MESSAGES). */
    private volatile long appendedMessages;
    private volatile long lastFlushMs;
    private volatile int durableWaiters;
    /** Sealed segments below this base offset were flushed after they were sealed (under flushLock). */
    private long sealedFlushedBelow = -1;
    /**
     * The active segment when the partition directory's names were last made durable (under
     * flushLock): a flush that finds another one fsyncs the directory first, or a power loss could
     * take a rolled segment's file — and what was acknowledged in it — with its name. Volatile: retention reads it
     * without the lock ({@link #nameDurable}).
     */
    private volatile Segment namesDurableWith;
    /**
     * Set under flushLock by the partition's deletion before its directory is renamed: a flush that
     * was queued before it writes no file of the log's after it (the renamed directory is removed
     * later, and a new log of the same name has the old path at once).
     */
    private boolean deleted;

    LogFlusher(final PartitionLog log, final LogOffsets offsets, final SegmentList segments, final EpochClock clock,
        final LogEnvironment env, final LogEpochs epochs)
    {
        this.epochs = epochs;
        this.log = log;
        this.offsets = offsets;
        this.segments = segments;
        this.clock = clock;
        this.env = env;
        this.lastFlushMs = clock.time();
    }

    /**
     * The partition is being deleted: waits for a flush in progress (which then wrote its files through
     * the old path, renamed with the directory next) and makes later ones write no file.
     */
    void closeForDeletion()
    {
        synchronized (flushLock)
        {
            deleted = true;
        }
    }

    /** The active segment a start or creation found with its name durable (the directory fsynced, or found so). */
    void namesDurableWith(final Segment active)
    {
        synchronized (flushLock)
        {
            namesDurableWith = active;
        }
    }

    /**
     * Whether {@code active}'s file name is known durable: the directory was fsynced (or found so) with it the active
     * segment. No lock: a flush holding it for seconds must not hold up the log thread's DeleteRecords.
     */
    boolean nameDurable(final Segment active)
    {
        return namesDurableWith == active;
    }

    /**
     * The writer counts a published batch's records and asks for a flush when the config wants one.
     * The count is a single writer's: a release store, not a volatile one, so an append pays no full
     * fence here (one after its copy into the mapping waits for all of the copy's stores). Only a
     * flush request needs one: it pairs with flush()'s clearing of the request flag and then reading
     * the count (Dekker's), so that either that flush sees this count or this writer sees the flag
     * clear and asks again. A stale {@code flushedMessages} only makes a request likelier.
     */
    void appended(final int records, final LogConfig cfg)
    {
        final long appended = appendedMessages + records;
        APPENDED_MESSAGES.setRelease(this, appended);
        if (cfg.fsyncDurability || appended - flushedMessages >= cfg.flushMessages)
        {
            VarHandle.fullFence();
            requestFlush();
        }
    }

    /** At most one request queued per log: the flag is cleared by the flush that serves it. */
    private void requestFlush()
    {
        if ((int)FLUSH_REQUESTED.getOpaque(this) == 0 && FLUSH_REQUESTED.compareAndSet(this, 0, 1))
        {
            env.requestFlush(log);
        }
    }

    /** See {@link PartitionLog#flush()}. */
    void flush() throws IOException
    {
        synchronized (flushLock)
        {
            fsyncFailure.throwIfFailed(log);
            FLUSH_REQUESTED.setVolatile(this, 0);
            final long target = offsets.logEndOffset();
            final long messages = appendedMessages;
            final Segment[] segs = segments.array();
            try
            {
                flushSealed(segs);
                final Segment active = segs[segs.length - 1];
                flush(active);
                if (active.txnIndex.takeNewName())
                {
                    fsyncDirectory(); // its transaction index was made since: once per segment that has one
                }
            }
            catch (final java.nio.channels.ClosedChannelException deleted)
            {
                throw deleted; // a segment retention deleted meanwhile: not a failed fsync
            }
            catch (final IOException | java.io.UncheckedIOException ex)
            {
                throw fsyncFailure.record(log, ex, env.durabilityListener(), durableMonitor);
            }
            final IOException epochsFailed = writeEpochs();
            flushedMessages = messages;
            lastFlushMs = clock.time();
            durableTo(target, epochsFailed == null);
            throwIfFailed(epochsFailed);
        }
    }

    /**
     * A roll's background flush: fsyncs the sealed segments, not the active one, and moves the
     * durable offset and recovery point to the active segment's base (Kafka flushes up to the new
     * segment's base offset on a roll). Why not the active one: under a writer going flat out its
     * fsync is the longest, and it queued every later background task behind it (retention fell
     * 190 MB behind {@code retention.bytes}); the writer's next pages are the next flush's.
     */
    void flushRolled() throws IOException
    {
        synchronized (flushLock)
        {
            fsyncFailure.throwIfFailed(log);
            final Segment[] segs = segments.array();
            try
            {
                flushSealed(segs);
            }
            catch (final java.nio.channels.ClosedChannelException deleted)
            {
                throw deleted;
            }
            catch (final IOException | java.io.UncheckedIOException ex)
            {
                throw fsyncFailure.record(log, ex, env.durabilityListener(), durableMonitor);
            }
            final IOException epochsFailed = writeEpochs();
            durableTo(segs[segs.length - 1].baseOffset, epochsFailed == null);
            throwIfFailed(epochsFailed);
        }
    }

    /**
     * The leader-epoch checkpoint, before the recovery point moves past an entry's batch (else an
     * unclean open re-reading from the recovery point would not find that epoch). Returns a failure (ENOSPC, EIO)
     * rather than throwing it: the data's fsyncs succeeded, so the durable offset still moves and only the recovery
     * point is held back ({@link LogOffsets#advanceDurable}); the flush then throws it (the close fails, so no clean
     * shutdown is marked), and the next flush writes the file again. Not a failed fsync: the log stays writable.
     */
    private IOException writeEpochs()
    {
        if (deleted)
        {
            return null; // its files go: a checkpoint written now would land in the renamed directory, or fail its rename
        }
        try
        {
            epochs.writeIfChanged(log.dir());
            return null;
        }
        catch (final IOException | java.io.UncheckedIOException ex)
        {
            return new IOException(log + ": writing the leader-epoch checkpoint failed; the recovery point stays at "
                + offsets.recoveryPoint() + " until a flush writes it", ex);
        }
    }

    private static void throwIfFailed(final IOException failure) throws IOException
    {
        if (failure != null)
        {
            throw failure;
        }
    }

    /**
     * Fsyncs the sealed segments not yet flushed since they were sealed (a sealed segment is flushed
     * once — log and indexes — and never changes again), so a flush costs the segments written since
     * the last one, not every segment of the log.
     */
    private void flushSealed(final Segment[] segs) throws IOException
    {
        final long flushedBelow = sealedFlushedBelow;
        int first = segs.length - 1;
        while (first > 0 && segs[first].baseOffset > flushedBelow)
        {
            first--;
        }
        boolean newTxnIndex = false;
        for (int i = first; i < segs.length - 1; i++)
        {
            flush(segs[i]);
            newTxnIndex |= segs[i].txnIndex.takeNewName();
        }
        sealedFlushedBelow = segs[segs.length - 1].baseOffset;
        final Segment active = segs[segs.length - 1];
        if (active != namesDurableWith || newTxnIndex)
        {
            // a roll (or truncation) made files since: their names are durable only with the directory, as
            // Kafka's flush does for a new segment. Once per roll: the sealed segments' files were made before it,
            // but for a transaction index made at the first aborted transaction of a segment
            fsyncDirectory();
            namesDurableWith = active;
        }
    }

    /**
     * Fsyncs one segment. A closed channel is a segment retention (or a close) took meanwhile — its
     * data goes on purpose, and the caller passes the {@code ClosedChannelException} on — only when the
     * segment really was retired; a channel closed under a segment still in the log (an interrupt of
     * a thread using it) leaves its bytes unflushed for good: a failed fsync like any other.
     */
    private void flush(final Segment segment) throws IOException
    {
        try
        {
            segment.flush();
        }
        catch (final ClosedChannelException closed)
        {
            if (segment.isRetired() || segments.isClosed())
            {
                throw closed;
            }
            throw new IOException(segment + ": a file closed under its flush while the segment is in the log", closed);
        }
    }

    private void fsyncDirectory() throws IOException
    {
        try
        {
            DurableFile.fsyncDirectory(log.dir());
        }
        catch (final NoSuchFileException gone)
        {
            if (segments.isClosed())
            {
                // the log was deleted and its directory removed under this flush: nothing to make durable
                throw (ClosedChannelException)new ClosedChannelException().initCause(gone);
            }
            throw gone; // a live log's directory gone: a failed fsync
        }
    }

    /**
     * Moves the durable offset, and with {@code recoveryToo} the recovery point (under flushLock, so the listener sees
     * it in order), and tells whoever waits.
     */
    private void durableTo(final long target, final boolean recoveryToo)
    {
        if (offsets.advanceDurable(target, recoveryToo))
        {
            env.durabilityListener().onDurable(log, target);
            if (durableWaiters > 0)
            {
                synchronized (durableMonitor)
                {
                    durableMonitor.notifyAll();
                }
            }
        }
    }

    /**
     * A truncation's change of the offsets and the segment list ({@link LogTruncation}), under the flush lock so that no
     * flush that read the old log end moves the durable offset past the new one after it: the offsets first (a reader
     * that sees the new log end reads the old list only below it), then {@code publish} the new list.
     */
    void truncated(final long logEnd, final boolean fully, final Runnable publish)
    {
        synchronized (flushLock)
        {
            offsets.truncated(logEnd, fully);
            publish.run();
            sealedFlushedBelow = Math.min(sealedFlushedBelow, logEnd); // the kept segments below were flushed or are after it
            namesDurableWith = null; // the next flush fsyncs the directory again (cheap; the truncation did already)
        }
    }

    /** {@link #flush()}, or with {@code rolled} {@link #flushRolled()}, for background callers. */
    void flushQuietly(final boolean rolled)
    {
        try
        {
            if (rolled)
            {
                flushRolled();
            }
            else
            {
                flush();
            }
        }
        catch (final java.nio.channels.ClosedChannelException ignored)
        {
            // a segment retention deleted while we flushed; its data is gone on purpose
        }
        catch (final IOException ex)
        {
            if (fsyncFailure.cause() != null)
            {
                return; // logged once where it failed; later flushes of the log all fail the same way
            }
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /**
     * A failed fsync of the log's files made outside a flush (a segment replacement's new segments or its directory
     * fsync): kept, logged, told and woken up as a flush's own; returns the IOException to throw.
     */
    IOException fsyncFailed(final Exception failure)
    {
        synchronized (flushLock)
        {
            return fsyncFailure.record(log, failure, env.durabilityListener(), durableMonitor);
        }
    }

    /** See {@link PartitionLog#fsyncFailure()}. */
    Throwable fsyncFailure()
    {
        return fsyncFailure.cause();
    }

    /** Whether flush.ms has passed since the last flush with appends not yet flushed. */
    boolean flushDue(final long nowMs)
    {
        return appendedMessages != flushedMessages && nowMs - lastFlushMs >= log.config().flushMs;
    }

    /** See {@link PartitionLog#awaitDurable}. */
    boolean awaitDurable(final long offset, final long timeoutMs) throws InterruptedException
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        synchronized (durableMonitor)
        {
            durableWaiters++;
            try
            {
                while (offsets.durableOffset() < offset)
                {
                    if (fsyncFailure.cause() != null)
                    {
                        return false; // never: see PartitionLog.fsyncFailure()
                    }
                    final long left = deadline - System.nanoTime();
                    if (left <= 0)
                    {
                        return false;
                    }
                    durableMonitor.wait(Math.max(1, left / 1_000_000L));
                }
                return true;
            }
            finally
            {
                durableWaiters--;
            }
        }
    }
}
