package io.ferrite.broker.metrics;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The broker's counters file, {@code ferrite-counters.dat} in the first log directory: Agrona's counters (a values and a
 * metadata buffer, as Aeron's media driver keeps them in its {@code cnc.dat}) behind a small header that tells another
 * process where they are. A fresh file is made at each start; nothing removes it at the end, so the last values stay
 * readable after the broker stopped or died.
 *
 * <pre>
 *   0  int   layout version (1), stored last: a reader that sees it sees the rest of the header
 *   4  int   header length (128): the values buffer starts there
 *   8  long  the broker's process id
 *  16  long  the start time (epoch ms)
 *  24  int   values buffer length (a multiple of 128: one counter each)
 *  28  int   metadata buffer length (4 x the values': 512 bytes of metadata per counter)
 * 128        values buffer, then the metadata buffer
 * </pre>
 */
public final class CountersFile
{
    public static final String NAME = "ferrite-counters.dat";
    public static final int VERSION = 1;
    static final int HEADER_LENGTH = 128;
    private static final int VERSION_OFFSET = 0;
    private static final int HEADER_LENGTH_OFFSET = 4;
    private static final int PID_OFFSET = 8;
    private static final int START_OFFSET = 16;
    private static final int VALUES_LENGTH_OFFSET = 24;
    private static final int METADATA_LENGTH_OFFSET = 28;

    private final MappedByteBuffer mapping;
    private final UnsafeBuffer header;
    private final UnsafeBuffer values;
    private final UnsafeBuffer metadata;

    private CountersFile(final MappedByteBuffer mapping)
    {
        this.mapping = mapping;
        this.header = new UnsafeBuffer(mapping, 0, HEADER_LENGTH);
        final int valuesLength = header.getInt(VALUES_LENGTH_OFFSET);
        final int metadataLength = header.getInt(METADATA_LENGTH_OFFSET);
        final int start = header.getInt(HEADER_LENGTH_OFFSET);
        if (start != HEADER_LENGTH || valuesLength <= 0 || metadataLength != valuesLength * metadataPerValue() ||
            (long)start + valuesLength + metadataLength > mapping.capacity())
        {
            throw new IllegalStateException("not a counters file of layout " + VERSION + " (or cut short)");
        }
        this.values = new UnsafeBuffer(mapping, start, valuesLength);
        this.metadata = new UnsafeBuffer(mapping, start + valuesLength, metadataLength);
    }

    private static int metadataPerValue()
    {
        return CountersReader.METADATA_LENGTH / CountersReader.COUNTER_LENGTH;
    }

    /** The length of a file of room for {@code counters} counters. */
    public static long length(final int counters)
    {
        return HEADER_LENGTH + (long)counters * CountersReader.COUNTER_LENGTH * (1 + metadataPerValue());
    }

    /**
     * Makes a fresh file of room for {@code counters} counters in {@code dir} (an older one is replaced), written whole:
     * on a full disk this fails (and leaves no file), the broker's start with it.
     */
    public static CountersFile create(final Path dir, final int counters) throws IOException
    {
        final Path file = dir.resolve(NAME);
        final int valuesLength = counters * CountersReader.COUNTER_LENGTH;
        final long length = length(counters);
        // a new inode: a reader (or a crashed broker's last values being read) keeps the old one
        Files.deleteIfExists(file);
        final MappedByteBuffer mapping;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            // written whole, zeros, as Aeron makes its cnc.dat: every block is the file's before a counter is stored,
            // so a full disk fails here, at the start, never as a SIGBUS on a thread's first store into a hole's page
            IoUtil.fill(channel, 0, length, (byte)0);
            mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, length);
        }
        catch (final IOException ex)
        {
            try
            {
                Files.deleteIfExists(file);
            }
            catch (final IOException deleting)
            {
                ex.addSuppressed(deleting);
            }
            throw ex;
        }
        final UnsafeBuffer header = new UnsafeBuffer(mapping, 0, HEADER_LENGTH);
        header.putInt(HEADER_LENGTH_OFFSET, HEADER_LENGTH);
        header.putLong(PID_OFFSET, ProcessHandle.current().pid());
        header.putLong(START_OFFSET, System.currentTimeMillis());
        header.putInt(VALUES_LENGTH_OFFSET, valuesLength);
        header.putInt(METADATA_LENGTH_OFFSET, valuesLength * metadataPerValue());
        header.putIntRelease(VERSION_OFFSET, VERSION);
        return new CountersFile(mapping);
    }

    /** Maps an existing file to read (another process's, live or dead). */
    public static CountersFile open(final Path dir) throws IOException
    {
        final Path file = dir.resolve(NAME);
        final MappedByteBuffer mapping;
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            if (channel.size() < HEADER_LENGTH)
            {
                throw new IllegalStateException(file + " is cut short (" + channel.size() + " bytes)");
            }
            mapping = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        final int version = new UnsafeBuffer(mapping, 0, HEADER_LENGTH).getIntVolatile(VERSION_OFFSET);
        if (version != VERSION)
        {
            throw new IllegalStateException(file + " has layout " + version + ", this reader knows " + VERSION);
        }
        return new CountersFile(mapping);
    }

    public UnsafeBuffer values()
    {
        return values;
    }

    public UnsafeBuffer metadata()
    {
        return metadata;
    }

    /** The process id of the broker that made the file. */
    public long pid()
    {
        return header.getLong(PID_OFFSET);
    }

    public long startTimeMs()
    {
        return header.getLong(START_OFFSET);
    }

    /** A reader of its counters. */
    public CountersReader reader()
    {
        return new CountersReader(metadata, values);
    }

    /** Unmaps it: only once no counter of it is written or read any more. */
    public void close()
    {
        IoUtil.unmap(mapping);
    }
}
