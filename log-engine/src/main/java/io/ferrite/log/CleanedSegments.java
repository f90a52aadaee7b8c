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
 */
final class CleanedSegments
{
    static final String CLEANED_SUFFIX = ".cleaned";
    static final String SWAP_SUFFIX = ".swap";
    private static final String[] SUFFIXES = {Segment.LOG_SUFFIX, Segment.INDEX_SUFFIX, Segment.TIME_INDEX_SUFFIX,
        TransactionIndex.SUFFIX};

    private final Path dir;
    private final LogConfig config;
    private final long nowMs;
    /** The replaced segments' aborted transactions, raw entries in marker order. */
    private final ByteBuffer abortedTxns;
    private final List<Long> bases = new ArrayList<>();
    private Segment current;
    private ByteBuffer currentTxns;
    private long lastWritten = -1;

    CleanedSegments(final Path dir, final LogConfig config, final long nowMs, final ByteBuffer abortedTxns)
    {
        this.dir = dir;
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
        for (final long base : bases)
        {
            Files.setLastModifiedTime(path(base, Segment.LOG_SUFFIX, CLEANED_SUFFIX), FileTime.fromMillis(lastModifiedMs));
        }
    }

    private void finishCurrent() throws IOException
    {
        final Segment s = current;
        if (s == null)
        {
            return;
        }
        current = null;
        try
        {
            s.makeIndexFiles();
            s.deactivate();
            s.flush();
            if (currentTxns != null && currentTxns.position() > 0)
            {
                currentTxns.flip();
                try (FileChannel ch = FileChannel.open(path(s.baseOffset, TransactionIndex.SUFFIX, CLEANED_SUFFIX),
                    StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING))
                {
                    while (currentTxns.hasRemaining())
                    {
                        ch.write(currentTxns);
                    }
                    ch.force(true);
                }
            }
        }
        finally
        {
            s.close();
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
        rename(bases.get(0), Segment.LOG_SUFFIX, CLEANED_SUFFIX, SWAP_SUFFIX);
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
        boolean all = true;
        final Segment s = current;
        current = null;
        if (s != null)
        {
            try
            {
                s.close();
            }
            catch (final IOException ignored)
            {
                // its files are deleted next
            }
        }
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

    private void rename(final long base, final String suffix, final String from, final String to) throws IOException
    {
        final Path source = path(base, suffix, from);
        if (Files.exists(source))
        {
            Files.move(source, path(base, suffix, to), StandardCopyOption.ATOMIC_MOVE);
        }
    }

    private Path path(final long base, final String suffix, final String temporary)
    {
        return dir.resolve(Segment.fileName(base, suffix) + temporary);
    }
}
