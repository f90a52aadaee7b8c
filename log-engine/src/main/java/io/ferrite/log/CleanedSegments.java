package io.ferrite.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.index.TimeIndex;
import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;

import static io.ferrite.log.AbortedTxnDescriptor.ENTRY_LENGTH;
import static io.ferrite.log.AbortedTxnDescriptor.LAST_OFFSET_OFFSET;

/**
 * The new segments of one replacement ({@link SegmentReplacer}), written under Kafka's temporary
 * names: {@code <base>.log.cleaned} with its {@code .index}, {@code .timeindex} and, when an aborted
 * transaction's marker is kept in it, {@code .txnindex}. Each is a {@link Segment} taking appends as
 * the writer's active segment does, so its offset and time indexes are built as the writer builds
 * them (an entry after each {@code index.interval.bytes}, the closing time-index entry at the end).
 * A new one starts where the writer would roll: {@code segment.bytes}, full indexes, or offsets
 * beyond the relative range of its base. Written on the cleaner's thread only; nothing here is
 * seen by a reader until the replacement opens the files again under their final names.
 *
 * <p>Every step that reaches a file by its path — creating, trimming, stamping, renaming or deleting one — runs
 * under the segments lock while the log is open ({@link SegmentList#underOpenLog}), as retention's deletions do: a
 * deletion of the partition closes the log under that lock before it renames the directory, and a new log of the
 * same name takes the old path at once. A step that finds the log closed throws {@link LogClosed} and the
 * replacement is abandoned without touching a path: its files went with the renamed directory (removed after
 * {@code file.delete.delay.ms}), or, after a plain close, the next open deletes them. Appends between those steps
 * write through the open descriptors and the indexes' mappings; an index that takes an entry may open its own
 * file by path to claim room, without creating it, so after the rename it finds none. The fsyncs (not under the
 * lock: one can take seconds) report a failure as {@link FsyncFailed}, which the replacer gives the log's
 * {@link FsyncFailure}.
 */
final class CleanedSegments
{
    static final String CLEANED_SUFFIX = ".cleaned";
    static final String SWAP_SUFFIX = ".swap";
    private static final String[] SUFFIXES = {Segment.LOG_SUFFIX, Segment.INDEX_SUFFIX, Segment.TIME_INDEX_SUFFIX,
        TransactionIndex.SUFFIX};

    private final Path dir;
    private final SegmentList segments;
    private final LogConfig config;
    private final long nowMs;
    /** The replaced segments' aborted transactions, raw entries in marker order. */
    private final ByteBuffer abortedTxns;
    private final List<Long> bases = new ArrayList<>();
    private Segment current;
    private ByteBuffer currentTxns;
    private long lastWritten = -1;

    CleanedSegments(final Path dir, final SegmentList segments, final LogConfig config, final long nowMs,
        final ByteBuffer abortedTxns)
    {
        this.dir = dir;
        this.segments = segments;
        this.config = config;
        this.nowMs = nowMs;
        this.abortedTxns = abortedTxns;
    }

    /** The base offsets of the segments made, in order. */
    List<Long> bases()
    {
        return bases;
    }

    /** The last offset of the last batch written, or -1. */
    long lastWritten()
    {
        return lastWritten;
    }

    /** Starts a new segment at {@code baseOffset}, ending the one in hand. */
    void start(final long baseOffset) throws IOException
    {
        finishCurrent();
        underOpenLog(() -> open(baseOffset));
    }

    private void open(final long baseOffset) throws IOException
    {
        Files.deleteIfExists(path(baseOffset, Segment.LOG_SUFFIX, CLEANED_SUFFIX)); // a leftover of an abandoned run
        bases.add(baseOffset);
        final SegmentFile log = SegmentFile.openWritable(path(baseOffset, Segment.LOG_SUFFIX, CLEANED_SUFFIX),
            WriteStrategy.CHANNEL, SegmentOpener.capacity(config), 0);
        OffsetIndex offsetIndex = null;
        TimeIndex timeIndex = null;
        try
        {
            offsetIndex = new OffsetIndex(path(baseOffset, Segment.INDEX_SUFFIX, CLEANED_SUFFIX), baseOffset,
                config.segmentIndexBytes, true);
            timeIndex = new TimeIndex(path(baseOffset, Segment.TIME_INDEX_SUFFIX, CLEANED_SUFFIX), baseOffset,
                config.segmentIndexBytes, true);
            // never appended to: its entries are copied into the .cleaned name by finishCurrent
            final TransactionIndex txnIndex = TransactionIndex.open(baseOffset, log.path(), false);
            current = new Segment(baseOffset, log, offsetIndex, timeIndex, txnIndex, config, 0, true, nowMs);
            currentTxns = null;
            CleanerTiming.mark(CleanerTiming.Stage.CREATE);
        }
        catch (final IOException | RuntimeException ex)
        {
            CloseSteps.all(log::close, offsetIndex == null ? () -> { } : offsetIndex::close,
                timeIndex == null ? () -> { } : timeIndex::close);
            throw ex;
        }
    }

    /**
     * Appends one batch, first starting a new segment at its base offset where the writer would roll;
     * the replaced segments' index entries of the aborted transactions whose marker it holds go with it.
     */
    void append(final RecordBatch batch) throws IOException
    {
        final int length = batch.sizeInBytes();
        final long last = batch.lastOffset();
        final int size = current.size();
        if ((size > 0 && size > config.segmentBytes - length) || current.indexesFull() ||
            last - current.baseOffset > Integer.MAX_VALUE)
        {
            start(batch.baseOffset());
        }
        current.append(batch.buffer(), batch.offset(), length, last, batch.maxTimestamp());
        lastWritten = last;
        while (abortedTxns.remaining() >= ENTRY_LENGTH)
        {
            final long marker = abortedTxns.getLong(abortedTxns.position() + LAST_OFFSET_OFFSET);
            if (marker > last)
            {
                break;
            }
            if (marker >= batch.baseOffset()) // else its marker was dropped: the transaction has no batch left here
            {
                if (currentTxns == null)
                {
                    currentTxns = ByteBuffer.allocate(abortedTxns.capacity());
                }
                currentTxns.put(abortedTxns.array(), abortedTxns.position(), ENTRY_LENGTH);
            }
            abortedTxns.position(abortedTxns.position() + ENTRY_LENGTH);
        }
    }

    /**
     * Ends the segment in hand as a roll ends the active one (file and indexes cut to their data, the
     * closing time-index entry), writes its {@code .txnindex}, and fsyncs its files. The log file
     * takes {@code lastModifiedMs} (as Kafka's cleaner: time retention of a segment without
     * timestamps goes by it).
     */
    void finish(final long lastModifiedMs) throws IOException
    {
        finishCurrent();
        underOpenLog(() ->
        {
            for (final long base : bases)
            {
                Files.setLastModifiedTime(path(base, Segment.LOG_SUFFIX, CLEANED_SUFFIX), FileTime.fromMillis(lastModifiedMs));
            }
        });
        CleanerTiming.mark(CleanerTiming.Stage.FINISH);
    }

    private void finishCurrent() throws IOException
    {
        final Segment s = current;
        if (s == null)
        {
            return;
        }
        current = null;
        CleanerTiming.mark(CleanerTiming.Stage.COPY);
        try
        {
            underOpenLog(() ->
            {
                s.makeIndexFiles();
                s.deactivate(); // trims the files, by path
            });
            CleanerTiming.mark(CleanerTiming.Stage.FINISH);
            fsync(s::flush);
            if (currentTxns != null && currentTxns.position() > 0)
            {
                currentTxns.flip();
                final FileChannel[] txns = new FileChannel[1];
                try
                {
                    underOpenLog(() ->
                    {
                        txns[0] = FileChannel.open(path(s.baseOffset, TransactionIndex.SUFFIX, CLEANED_SUFFIX),
                            StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
                        while (currentTxns.hasRemaining())
                        {
                            txns[0].write(currentTxns);
                        }
                    });
                    fsync(() -> txns[0].force(true));
                }
                finally
                {
                    if (txns[0] != null)
                    {
                        txns[0].close();
                    }
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            try
            {
                close(s);
            }
            catch (final IOException | RuntimeException suppressed)
            {
                ex.addSuppressed(suppressed); // the first failure is the one to report (a failed fsync, most often)
            }
            throw ex;
        }
        CleanerTiming.mark(CleanerTiming.Stage.FSYNC_SEGMENT);
        fsync(() -> close(s)); // its indexes' close flushes them again: a failure there is a failed fsync as well
        CleanerTiming.mark(CleanerTiming.Stage.CLOSE);
    }

    /**
     * Closes a new segment's files: under the lock while the log is open (an active one is trimmed by path);
     * else with nothing reached by path. Its indexes are mapped or have no file yet, so {@link Segment#forDeletion}
     * maps nothing by path either. Either way its mappings are given back at once, outside the lock: no reader ever
     * had this {@link Segment} (the swap opens the files afresh), and a mapping left to the GC would keep the blocks
     * of a deleted file (an abandoned {@code .cleaned} one, or a swapped-in one retention deletes later) allocated.
     */
    private void close(final Segment s) throws IOException
    {
        try
        {
            if (!segments.underOpenLog(s::close))
            {
                s.forDeletion();
                s.close();
            }
        }
        finally
        {
            CloseSteps.all(s.offsetIndex::unmapNow, s.timeIndex::unmapNow, s.log::unmapNow); // each, even when one throws
        }
    }

    private void underOpenLog(final SegmentList.FileWork work) throws IOException
    {
        if (!segments.underOpenLog(work))
        {
            throw new LogClosed(dir);
        }
    }

    /** An fsync of a new segment's file; a failure is {@link FsyncFailed}, a channel an interrupt closed is not. */
    private static void fsync(final CloseSteps.Step fsync) throws IOException
    {
        try
        {
            fsync.run();
        }
        catch (final java.nio.channels.ClosedChannelException interrupted)
        {
            throw interrupted; // the replacing thread's interrupt (a cleaner stopping): the log's own files are untouched
        }
        catch (final IOException | java.io.UncheckedIOException ex)
        {
            throw new FsyncFailed(ex);
        }
    }

    /**
     * Renames every file of the new segments from {@code .cleaned} to {@code .swap}, the last
     * segment first, except the first segment's {@code .log}: while it is still {@code .cleaned},
     * recovery deletes every {@code .swap} at or above its offset (Kafka's rule), so the rename of
     * that one file ({@link #commit}) is the moment the replacement becomes the log's.
     */
    void prepareSwap() throws IOException
    {
        for (int i = bases.size() - 1; i >= 0; i--)
        {
            for (final String suffix : SUFFIXES)
            {
                if (i > 0 || !suffix.equals(Segment.LOG_SUFFIX))
                {
                    rename(bases.get(i), suffix, CLEANED_SUFFIX, SWAP_SUFFIX);
                }
            }
        }
    }

    /** The commit: the first segment's {@code .log} renamed to {@code .swap} (see {@link #prepareSwap}). */
    void commit() throws IOException
    {
        // unconditional: a missing file throws here, before the replaced segments' files are touched
        Files.move(path(bases.get(0), Segment.LOG_SUFFIX, CLEANED_SUFFIX), path(bases.get(0), Segment.LOG_SUFFIX, SWAP_SUFFIX),
            StandardCopyOption.ATOMIC_MOVE);
    }

    /** After the replaced segments' files are deleted: each {@code .swap} to its final name, the first segment first. */
    void completeSwap() throws IOException
    {
        for (final long base : bases)
        {
            for (final String suffix : SUFFIXES)
            {
                rename(base, suffix, SWAP_SUFFIX, "");
            }
        }
    }

    /**
     * Deletes whatever this replacement made (it is abandoned, before its commit): every {@code .swap} first, the
     * first segment's {@code .log.cleaned} last — while it is there, recovery takes no {@code .swap} of this
     * replacement for committed, so a crash in the middle of this leaves nothing it would complete.
     *
     * @return false when a file could not be deleted
     */
    boolean abandon()
    {
        final Segment s = current;
        current = null;
        if (s != null)
        {
            try
            {
                close(s);
            }
            catch (final IOException | RuntimeException ignored)
            {
                // its files are deleted next (a failed msync of an index comes unchecked)
            }
        }
        final boolean[] all = {true};
        try
        {
            // a closed log's files are not reached by path: they went with its renamed directory, or the open deletes them
            segments.underOpenLog(() -> all[0] = deleteAll());
        }
        catch (final IOException cannotHappen)
        {
            return false; // deleteAll throws nothing
        }
        return all[0];
    }

    private boolean deleteAll()
    {
        boolean all = true;
        for (final String temporary : new String[] {SWAP_SUFFIX, CLEANED_SUFFIX})
        {
            for (int i = bases.size() - 1; i >= 0; i--)
            {
                for (int j = SUFFIXES.length - 1; j >= 0; j--) // the .log (SUFFIXES[0]) last
                {
                    try
                    {
                        Files.deleteIfExists(path(bases.get(i), SUFFIXES[j], temporary));
                    }
                    catch (final IOException ex)
                    {
                        all = false; // the next open deletes .cleaned files and the .swap files they guard
                    }
                }
            }
        }
        return all;
    }

    /** Renames one file, if it exists (the indexes and the transaction index may have none): one rename(2), no stat, under the lock. */
    private void rename(final long base, final String suffix, final String from, final String to) throws IOException
    {
        try
        {
            Files.move(path(base, suffix, from), path(base, suffix, to), StandardCopyOption.ATOMIC_MOVE);
        }
        catch (final java.nio.file.NoSuchFileException none)
        {
            // a file the segment does not have
        }
    }

    private Path path(final long base, final String suffix, final String temporary)
    {
        return dir.resolve(Segment.fileName(base, suffix) + temporary);
    }

    /** A step found the log closed (or deleted): the replacement is abandoned ({@link SegmentReplacer#LOG_CLOSED}). */
    static final class LogClosed extends IOException
    {
        private static final long serialVersionUID = 1L;

        LogClosed(final Path dir)
        {
            super("the log of " + dir + " was closed during a segment replacement");
        }
    }

    /** An fsync of a new segment's file failed: the log's {@link FsyncFailure} takes it, as any other. */
    static final class FsyncFailed extends IOException
    {
        private static final long serialVersionUID = 1L;

        FsyncFailed(final Exception cause)
        {
            super(cause.getMessage(), cause);
        }
    }
}
