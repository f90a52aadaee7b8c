package io.ferrite.broker;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Producer ids for InitProducerId, never handed out twice: ids are taken in blocks, and the end of
 * the current block is written to disk (fsynced) before any id in it is given, so a restart — clean
 * or not — continues after the last block, wasting at most one block.
 */
public final class ProducerIds
{
    static final String FILE = "ferrite-producer-ids";
    private static final long BLOCK = 1000;

    private final Path file;
    private long next;
    private long blockEnd;

    public ProducerIds(final Path dir) throws IOException
    {
        this.file = dir.resolve(FILE);
        long start = 0;
        if (Files.exists(file))
        {
            start = Long.parseLong(Files.readString(file).trim());
        }
        next = start;
        blockEnd = start;
    }

    public synchronized long next() throws IOException
    {
        if (next >= blockEnd)
        {
            blockEnd = next + BLOCK;
            final Path tmp = file.resolveSibling(FILE + ".tmp");
            Files.writeString(tmp, Long.toString(blockEnd));
            try (var channel = java.nio.channels.FileChannel.open(tmp, java.nio.file.StandardOpenOption.WRITE))
            {
                channel.force(true);
            }
            Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        }
        return next++;
    }
}
