package io.ferrite.perf.damage;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * A stopped broker's files for one partition, as both Kafka and Ferrite lay them out: the log
 * directory (checkpoints, {@code meta.properties}) and the partition directory
 * {@code <topic>-<partition>} (segments {@code <20-digit base offset>.log} with their
 * {@code .index}, {@code .timeindex} and {@code .snapshot}, {@code partition.metadata}), plus the
 * byte-level edits the damage cases make. Everything is read from the files themselves, so a case
 * says exactly which file and byte it changed.
 */
final class LogFiles
{
    /** RecordBatch v2: base offset (8), batch length (4, counting the bytes after it); the records start at 61. */
    static final int LENGTH_OFFSET = 8;
    static final int LOG_OVERHEAD = 12;
    static final int MAGIC_OFFSET = 16;
    static final int RECORDS_OFFSET = 61;

    /** One batch found by walking a segment's frames. */
    record Batch(long baseOffset, long position, int size)
    {
    }

    final Path logDir;
    final Path partitionDir;

    LogFiles(final Path logDir, final String topic, final int partition)
    {
        this.logDir = logDir;
        this.partitionDir = logDir.resolve(topic + "-" + partition);
    }

    /** The segment files ({@code .log}) by base offset. */
    List<Path> segments() throws IOException
    {
        return withSuffix(".log");
    }

    List<Path> withSuffix(final String suffix) throws IOException
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
        }
    }

    /** The file beside a segment with another suffix: {@code 00..N.index} for {@code 00..N.log}. */
    static Path sibling(final Path segment, final String suffix)
    {
        final String name = segment.getFileName().toString();
        return segment.resolveSibling(name.substring(0, name.length() - ".log".length()) + suffix);
    }

    /**
     * The batches of a segment, walked frame by frame from its start while each frame fits in the
     * file and has magic 2; stops at the first that does not (a preallocated segment's zeros).
     */
    static List<Batch> batches(final Path segment) throws IOException
    {
        final List<Batch> out = new ArrayList<>();
        try (FileChannel channel = FileChannel.open(segment, StandardOpenOption.READ))
        {
            final long size = channel.size();
            final ByteBuffer header = ByteBuffer.allocate(RECORDS_OFFSET);
            long position = 0;
            while (position + RECORDS_OFFSET <= size)
            {
                header.clear();
                channel.read(header, position);
                final int length = header.getInt(LENGTH_OFFSET);
                if (length < RECORDS_OFFSET - LOG_OVERHEAD || position + LOG_OVERHEAD + length > size
                    || header.get(MAGIC_OFFSET) != 2)
                {
                    break;
                }
                out.add(new Batch(header.getLong(0), position, LOG_OVERHEAD + length));
                position += LOG_OVERHEAD + length;
            }
        }
        return out;
    }

    /** Flips the bits of {@code mask} in the byte at {@code position}; answers the byte before and after. */
    static String flip(final Path file, final long position, final int mask) throws IOException
    {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw"))
        {
            f.seek(position);
            final int before = f.read();
            f.seek(position);
            f.write(before ^ mask);
            return String.format("0x%02x -> 0x%02x", before, (before ^ mask) & 0xff);
        }
    }

    static void truncate(final Path file, final long size) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            channel.truncate(size);
        }
    }

    /** Overwrites {@code length} bytes at {@code position} with zeros. */
    static void zero(final Path file, final long position, final int length) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE))
        {
            channel.write(ByteBuffer.allocate(length), position);
        }
    }

    /**
     * Replaces a file's content with seeded random bytes of the same length (at least 64, so that an
     * empty file gets garbage too); answers the length written.
     */
    static int garbage(final Path file, final long seed) throws IOException
    {
        final int length = (int) Math.max(64, Files.size(file));
        final byte[] bytes = new byte[length];
        new Random(seed).nextBytes(bytes);
        Files.write(file, bytes);
        return length;
    }
}
