package io.ferrite.log;

import io.ferrite.log.config.DurableFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static io.ferrite.log.CleanedSegments.CLEANED_SUFFIX;
import static io.ferrite.log.CleanedSegments.SWAP_SUFFIX;
import static io.ferrite.wire.record.RecordBatchDescriptor.BASE_OFFSET_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.BATCH_LENGTH_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.HEADER_LENGTH;
import static io.ferrite.wire.record.RecordBatchDescriptor.LAST_OFFSET_DELTA_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.LOG_OVERHEAD;
import static io.ferrite.wire.record.RecordBatchDescriptor.MAGIC_OFFSET;
import static io.ferrite.wire.record.RecordBatchDescriptor.MAGIC_V2;

/**
 * The open's first pass over a partition directory: what an interrupted segment replacement
 * ({@link SegmentReplacer}) left, settled as Kafka's {@code LogLoader} settles it, before any segment
 * is opened. {@code .deleted} files are removed. {@code .cleaned} files are deleted, and with them every
 * {@code .swap} file at or above the lowest of their offsets (the replacement had not committed: the
 * first new segment's log is renamed last). The remaining {@code .swap} files complete their
 * replacement: every segment file (log and indexes) whose base offset lies in the range the new
 * segments cover — from the lowest base offset of a {@code .swap} log to the highest offset after a
 * {@code .swap} log's last batch (at least its base offset + 1: an empty new segment covers the
 * segment of its own base) — is deleted, then each {@code .swap} file renamed to its final name and
 * the directory fsynced. So an offset range is either all old or all new, never both, and nothing
 * that was kept is lost.
 */
final class SwapRecovery
{
    private static final Logger LOG = LoggerFactory.getLogger(SwapRecovery.class);
    private static final String[] SEGMENT_SUFFIXES = {Segment.LOG_SUFFIX, Segment.INDEX_SUFFIX, Segment.TIME_INDEX_SUFFIX,
        TransactionIndex.SUFFIX};

    private SwapRecovery()
    {
    }

    /** Settles {@code dir}'s leftovers of replacements; returns whether it found any. */
    static boolean complete(final Path dir) throws IOException
    {
        final List<Path> swaps = new ArrayList<>();
        final List<Path> cleaned = new ArrayList<>();
        boolean found = false;
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final String name = p.getFileName().toString();
                if (name.endsWith(".deleted"))
                {
                    Files.deleteIfExists(p);
                    found = true;
                }
                else if (name.endsWith(CLEANED_SUFFIX))
                {
                    cleaned.add(p);
                }
                else if (name.endsWith(SWAP_SUFFIX))
                {
                    swaps.add(p);
                }
            }
        }
        long minCleaned = Long.MAX_VALUE;
        for (final Path p : cleaned)
        {
            minCleaned = Math.min(minCleaned, offsetOf(p));
        }
        long from = Long.MAX_VALUE;
        long to = Long.MIN_VALUE;
        final List<Path> valid = new ArrayList<>();
        for (final Path p : swaps)
        {
            final long base = offsetOf(p);
            if (base < 0 || base >= minCleaned)
            {
                LOG.info("{}: deleting {}, of a replacement that did not commit", dir.getFileName(), p.getFileName());
                Files.deleteIfExists(p);
                continue;
            }
            valid.add(p);
            if (p.getFileName().toString().endsWith(Segment.LOG_SUFFIX + SWAP_SUFFIX))
            {
                from = Math.min(from, base);
                to = Math.max(to, Math.max(base + 1, nextOffset(p, base)));
            }
        }
        for (final Path p : cleaned)
        {
            // after the .swap files they guard (as Kafka's loader): a crash in between leaves the guard for the next open
            Files.deleteIfExists(p);
        }
        if (valid.isEmpty())
        {
            return found || !cleaned.isEmpty() || !swaps.isEmpty();
        }
        final List<String> replaced = new ArrayList<>();
        try (Stream<Path> files = Files.list(dir))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                // every file of a segment in the range, not only those whose log is still there: a
                // replaced segment's .txnindex left behind would be taken for the new segment's
                final String name = p.getFileName().toString();
                for (final String suffix : SEGMENT_SUFFIXES)
                {
                    final long base = name.length() == 20 + suffix.length() && name.endsWith(suffix) ? offsetOf(p) : -1;
                    if (base >= from && base < to)
                    {
                        replaced.add(name);
                        Files.deleteIfExists(p);
                    }
                }
            }
        }
        valid.sort(Path::compareTo); // by base offset (20 digits), the first new segment first, as the replacement renames
        for (final Path p : valid)
        {
            final String name = p.getFileName().toString();
            final Path target = p.resolveSibling(name.substring(0, name.length() - SWAP_SUFFIX.length()));
            Files.move(p, target, StandardCopyOption.ATOMIC_MOVE);
        }
        DurableFile.fsyncDirectory(dir);
        LOG.warn("{}: completed an interrupted segment replacement of offsets [{}, {}): {} deleted",
            dir.getFileName(), from, to, replaced);
        return true;
    }

    /** The 20-digit offset a segment file's name starts with, or -1. */
    private static long offsetOf(final Path p)
    {
        final String name = p.getFileName().toString();
        if (name.length() < 20)
        {
            return -1;
        }
        try
        {
            return Long.parseLong(name.substring(0, 20));
        }
        catch (final NumberFormatException ex)
        {
            return -1;
        }
    }

    /**
     * The offset after the last whole batch of a {@code .swap} log, read header by header (Kafka's
     * {@code readNextOffset}); {@code base} when it has none. The file was fsynced before its commit.
     */
    private static long nextOffset(final Path log, final long base) throws IOException
    {
        long next = base;
        final ByteBuffer header = ByteBuffer.allocate(HEADER_LENGTH);
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ))
        {
            final long size = ch.size();
            long p = 0;
            while (p + HEADER_LENGTH <= size)
            {
                header.clear();
                while (header.hasRemaining() && ch.read(header, p + header.position()) >= 0)
                {
                    // positional reads until the header is whole
                }
                final long length = LOG_OVERHEAD + (long)header.getInt(BATCH_LENGTH_OFFSET);
                if (header.get(MAGIC_OFFSET) != MAGIC_V2 || length < HEADER_LENGTH || p + length > size)
                {
                    break;
                }
                next = header.getLong(BASE_OFFSET_OFFSET) + header.getInt(LAST_OFFSET_DELTA_OFFSET) + 1;
                p += length;
            }
        }
        return next;
    }
}
