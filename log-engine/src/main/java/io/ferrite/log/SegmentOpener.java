package io.ferrite.log;

import io.ferrite.index.CorruptIndexException;
import io.ferrite.index.OffsetIndex;
import io.ferrite.index.TimeIndex;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Creates and opens a {@link Segment}'s files: the log mapped at its capacity when it takes
 * appends, read-only otherwise, and indexes that are not even whole entries replaced by empty ones
 * for the loader to rebuild (indexes carry no checksum: they are rebuildable by design).
 */
final class SegmentOpener
{
    private SegmentOpener()
    {
    }

    /** Creates the files of a new, empty, active segment. */
    static Segment create(final Path dir, final long baseOffset, final LogConfig config, final WriteStrategy strategy,
        final long nowMs) throws IOException
    {
        final Path logFile = dir.resolve(Segment.fileName(baseOffset, Segment.LOG_SUFFIX));
        Files.deleteIfExists(logFile);
        Files.deleteIfExists(dir.resolve(Segment.fileName(baseOffset, Segment.INDEX_SUFFIX)));
        Files.deleteIfExists(dir.resolve(Segment.fileName(baseOffset, Segment.TIME_INDEX_SUFFIX)));
        Files.deleteIfExists(dir.resolve(Segment.fileName(baseOffset, TransactionIndex.SUFFIX)));
        return open(dir, baseOffset, config, strategy, true, 0, nowMs, false);
    }

    /**
     * Opens a segment's files. An active one is mapped for appends at its capacity; its data size
     * comes from recovery or, after a clean shutdown, from the file's length. {@code txnIndexFound}:
     * the directory holds its {@code .txnindex} (else it has none until its first aborted transaction).
     */
    static Segment open(final Path dir, final long baseOffset, final LogConfig config, final WriteStrategy strategy,
        final boolean active, final int dataSize, final long nowMs, final boolean txnIndexFound) throws IOException
    {
        final Path logFile = dir.resolve(Segment.fileName(baseOffset, Segment.LOG_SUFFIX));
        final int capacity = capacity(config);
        final SegmentFile log = active ?
            SegmentFile.openWritable(logFile, strategy, capacity, dataSize) : SegmentFile.openReadOnly(logFile, strategy);
        OffsetIndex offsetIndex = null;
        TimeIndex timeIndex = null;
        try
        {
            // a rolled segment's indexes keep their size: no room to append, none preallocated
            final int maxIndexBytes = active ? config.segmentIndexBytes : 0;
            offsetIndex = openIndex(OffsetIndex::new, dir.resolve(Segment.fileName(baseOffset, Segment.INDEX_SUFFIX)), baseOffset,
                maxIndexBytes);
            timeIndex = openIndex(TimeIndex::new, dir.resolve(Segment.fileName(baseOffset, Segment.TIME_INDEX_SUFFIX)),
                baseOffset, maxIndexBytes);
            final TransactionIndex txnIndex = TransactionIndex.open(baseOffset, logFile, txnIndexFound);
            return new Segment(baseOffset, log, offsetIndex, timeIndex, txnIndex, config, active ? dataSize : log.capacity(),
                active, nowMs);
        }
        catch (final IOException | RuntimeException ex)
        {
            log.close();
            if (offsetIndex != null)
            {
                offsetIndex.close();
            }
            if (timeIndex != null)
            {
                timeIndex.close();
            }
            throw ex;
        }
    }

    /** An index file that is not even whole entries is replaced by an empty one (the loader then rebuilds it). */
    private static <T> T openIndex(final IndexConstructor<T> index, final Path file, final long baseOffset,
        final int maxIndexBytes) throws IOException
    {
        try
        {
            return index.open(file, baseOffset, maxIndexBytes, true);
        }
        catch (final CorruptIndexException ex)
        {
            Files.delete(file);
            return index.open(file, baseOffset, maxIndexBytes, true);
        }
    }

    /** {@link OffsetIndex}'s and {@link TimeIndex}'s constructor. */
    @FunctionalInterface
    private interface IndexConstructor<T>
    {
        T open(Path file, long baseOffset, int maxIndexBytes, boolean writable) throws IOException;
    }

    /** Room for a full segment, and always for one batch of the largest size allowed. */
    static int capacity(final LogConfig config)
    {
        return (int)Math.min(Integer.MAX_VALUE, Math.max(config.segmentBytes, (long)config.maxMessageBytes + 64));
    }
}
