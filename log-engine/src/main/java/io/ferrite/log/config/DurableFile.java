package io.ferrite.log.config;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A small file replaced whole and made durable, as a power loss must find it: the new content is
 * written to a temporary file beside it and fsynced, renamed over the old one, and the directory
 * holding it fsynced so that the rename is durable too (Kafka flushes its small metadata files,
 * {@code partition.metadata} and the checkpoints, the same way). A crash at any point leaves the old
 * content or the new, never a mix.
 */
public final class DurableFile
{
    private DurableFile()
    {
    }

    /** Replaces {@code file} with {@code bytes} and fsyncs it and its directory. */
    public static void write(final Path file, final byte[] bytes) throws IOException
    {
        writeInPlace(file, bytes);
        fsyncDirectory(file.getParent());
    }

    /**
     * Replaces {@code file} with {@code bytes}, the file's content fsynced, but not its directory:
     * for a caller that fsyncs the directory itself once after several files (a new partition's).
     */
    public static void writeInPlace(final Path file, final byte[] bytes) throws IOException
    {
        final Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING))
        {
            final ByteBuffer buffer = ByteBuffer.wrap(bytes);
            while (buffer.hasRemaining())
            {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Makes the entries of {@code dir} (files made, renamed or removed in it) durable. */
    public static void fsyncDirectory(final Path dir) throws IOException
    {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ))
        {
            channel.force(true);
        }
    }
}
