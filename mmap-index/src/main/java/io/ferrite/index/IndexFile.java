package io.ferrite.index;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The file under a {@link MappedIndex}: its length as the index last set it (no one else sizes it),
 * whether it is made yet, and the descriptor held while the index claims blocks. Every call is made
 * under the index's monitor, except {@link #absent} and {@link #force} (the flush's, which reads only it).
 *
 * <p>A writable index whose file does not exist makes it only when it first needs it — its first
 * claim, a mapping for writes, or {@link MappedIndex#makeFile} (ahead of the first entry, or before
 * a roll) — or empty at the trim: a new partition's segment costs no index
 * files while it holds nothing (two of the five files a new partition made, on disks where one file
 * creation can cost most of a millisecond).
 */
final class IndexFile
{
    private final Path path;
    private long length;
    private volatile boolean absent;
    /**
     * Open for claims from the first claim until the index is sealed: an index that takes entries
     * keeps it (an open per claim allocates on the append path), one that has none — an idle
     * partition's — or is sealed holds no descriptor.
     */
    private FileChannel claimChannel;

    IndexFile(final Path path, final boolean absent)
    {
        this.path = path;
        this.absent = absent;
    }

    boolean absent()
    {
        return absent;
    }

    long length()
    {
        return length;
    }

    /**
     * The length of the file found in place, for the index's constructor; a writable one of whole
     * entries is lengthened (sparse) to {@code minLength} when it is shorter.
     */
    long openFound(final boolean writable, final long minLength, final int entrySize) throws IOException
    {
        if (!writable)
        {
            length = Files.size(path);
            return length;
        }
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw")) // one open: a FileChannel cannot lengthen
        {
            final long found = file.length();
            length = found;
            if (found % entrySize == 0 && found < minLength)
            {
                file.setLength(minLength);
                length = minLength;
            }
            return found;
        }
    }

    /** Opens the file for a mapping; a writable one is made first when it is {@link #absent}. */
    FileChannel openForMapping(final boolean forWrites, final long capacity) throws IOException
    {
        if (!forWrites)
        {
            return FileChannel.open(path, StandardOpenOption.READ);
        }
        makeIfAbsent(capacity);
        return FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
    }

    /** Makes an {@link #absent} file, preallocated sparse to {@code capacity}. */
    void makeIfAbsent(final long capacity) throws IOException
    {
        if (absent)
        {
            setLength(capacity);
        }
    }

    /** Sets the length (a file {@link #absent} is made). */
    void setLength(final long newLength) throws IOException
    {
        try (RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw"))
        {
            file.setLength(newLength);
        }
        length = newLength;
        absent = false;
    }

    /**
     * Writes zeros over {@code [from, to)} to claim their blocks ({@link MappedIndex#ensureRoomAllocated}),
     * making an absent file first.
     */
    void zeroFill(final long from, final long to, final long capacity) throws IOException
    {
        makeIfAbsent(capacity);
        if (claimChannel == null)
        {
            // no CREATE: a file deleted under the index stays deleted (the claim fails instead)
            claimChannel = FileChannel.open(path, StandardOpenOption.WRITE);
        }
        long at = from;
        while (at < to)
        {
            at += ZeroFill.write(claimChannel, at, to - at);
        }
    }

    /** Gives back the claims' descriptor. */
    void releaseClaimChannel() throws IOException
    {
        final FileChannel channel = claimChannel;
        claimChannel = null;
        if (channel != null)
        {
            channel.close();
        }
    }

    /** fsync of the file, for what was written through a mapping given back since; none when it is absent or deleted. */
    void force() throws IOException
    {
        if (absent)
        {
            return;
        }
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.WRITE))
        {
            channel.force(false);
        }
        catch (final NoSuchFileException deleted)
        {
            // deleted with its segment under a flush that held it: nothing to make durable, no failed fsync
        }
    }
}
