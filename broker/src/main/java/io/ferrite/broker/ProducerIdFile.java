package io.ferrite.broker;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The node's file of producer ids, {@value #FILE} in the first log directory: the end of the ids this node may have
 * handed out (one decimal number). A node alone reserves its blocks here ({@link #reserve}): the end of a block is
 * written before any id of it is given — through {@link DurableFile}: the temporary file fsynced, renamed over the old
 * one, and the directory fsynced, so the new end survives a power loss as well as a SIGKILL — and a restart continues
 * after the last block reserved. In a cluster the blocks come from the controller and the file is only raised
 * ({@link #raise}) past each block taken, so a node that goes back to being alone does not hand its ids out again.
 */
public final class ProducerIdFile implements ProducerIdBlocks
{
    public static final String FILE = "ferrite-producer-ids";

    private final Path file;
    /** The end written last (the reserver's only). */
    private long end;

    public ProducerIdFile(final Path dir) throws IOException
    {
        this.file = dir.resolve(FILE);
        this.end = Files.exists(file) ? Long.parseLong(Files.readString(file).trim()) : 0;
    }

    /** The end of the ids reserved so far: the first id a restart alone would give. */
    public long end()
    {
        return end;
    }

    /** Writes {@code newEnd} as the end, durably, if it is past the current one. */
    public void raise(final long newEnd) throws IOException
    {
        if (newEnd > end)
        {
            DurableFile.write(file, Long.toString(newEnd).getBytes(StandardCharsets.US_ASCII));
            end = newEnd;
        }
    }

    @Override
    public long reserve() throws IOException
    {
        final long start = end;
        raise(start + ProducerIds.BLOCK);
        return start;
    }

    @Override
    public boolean reservedAtStart()
    {
        // a start on a full disk goes on without it (the failure kept and tried again after a backoff), since a broker
        // that cannot write must still start and serve what it has (DiskFullBrokerTest)
        return true;
    }

    @Override
    public String toString()
    {
        return file.toString();
    }
}
