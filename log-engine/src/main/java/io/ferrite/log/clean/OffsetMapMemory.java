package io.ferrite.log.clean;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * The block of an {@link OffsetMap}: zeroed memory that becomes resident only where touched, when it can be had.
 *
 * <p>It is a private (copy-on-write) mapping of a sparse file made in a disk-backed directory the log manager owns
 * (its first log directory, whose writability the start checks) and deleted at once: the OS hands out its pages
 * zeroed on first touch and never writes them back. A page a clean reads before it writes it costs a page of the
 * file's page cache (reclaimable, as any file's) besides the anonymous copy the write makes.
 *
 * <p>On a file system held in memory ({@code tmpfs}, {@code ramfs}: {@code /dev/shm}, a {@code --tmpfs} mount, a
 * memory {@code emptyDir}) the file's pages are not reclaimable but shared memory, and a touched page would cost two
 * pages until the map is unmapped; there, or when the file cannot be made or mapped (a read-only or missing
 * directory), the block is {@link ByteBuffer#allocateDirect}, which zeroes and so touches it all when made: resident
 * at once, but never twice. One INFO or WARN line says why.
 */
final class OffsetMapMemory
{
    private static final Logger LOG = LoggerFactory.getLogger(OffsetMapMemory.class);
    /** File stores whose pages are memory that no page-out frees ({@code FileStore.type()} on Linux). */
    private static final Set<String> IN_MEMORY = Set.of("tmpfs", "ramfs");

    private OffsetMapMemory()
    {
    }

    /**
     * {@code bytes} of zeroed memory, resident only where touched: a private mapping of a sparse file in {@code dir};
     * null (said in the log) when {@code dir} is in memory or the file cannot be made or mapped, or (silently) when
     * {@code dir} is null. The caller then allocates direct memory.
     */
    static ByteBuffer mapSparse(final int bytes, final Path dir)
    {
        if (dir == null)
        {
            return null;
        }
        Path file = null;
        try
        {
            final String type = Files.getFileStore(dir).type();
            if (IN_MEMORY.contains(type))
            {
                LOG.info("the offset map's {} bytes are direct memory, resident at once: {} is on {}, where a file's pages would "
                    + "cost memory twice", bytes, dir, type);
                return null;
            }
            file = Files.createTempFile(dir, "ferrite-offset-map-", ".tmp");
            try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw"))
            {
                raf.setLength(bytes); // a hole: no block of the disk is used
                return raf.getChannel().map(FileChannel.MapMode.PRIVATE, 0, bytes);
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.warn("the offset map's {} bytes are direct memory, resident at once: no sparse file could be mapped in {}: {}", bytes,
                dir, ex.toString());
            return null;
        }
        finally
        {
            if (file != null)
            {
                try
                {
                    Files.deleteIfExists(file);
                }
                catch (final IOException ignored)
                {
                    // a file of holes left in the log directory; the map works the same
                }
            }
        }
    }
}
