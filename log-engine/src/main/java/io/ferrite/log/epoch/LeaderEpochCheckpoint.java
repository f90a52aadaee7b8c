package io.ferrite.log.epoch;

import io.ferrite.log.config.DurableFile;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.regex.Pattern;

/**
 * A partition's {@code leader-epoch-checkpoint}, Kafka's format (its {@code LeaderEpochCheckpointFile}):
 * <pre>
 *   0                      the version
 *   2                      the number of entries
 *   0 0                    epoch startOffset, one line per entry, in order
 *   3 1200
 * </pre>
 * written whole to a temporary file, fsynced, renamed over the old one and the directory fsynced
 * ({@link DurableFile}), so a crash leaves the old file or the new one. Kafka reads these files and
 * Ferrite reads Kafka's.
 *
 * <p>The cache's writer does not write the file itself: {@link #writeIfChanged} is called by the
 * log's flush before it moves the recovery point (and by the close, which flushes), so an entry
 * whose batch is below the recovery point is in the file, and one above it is in a segment the next
 * unclean open re-reads — what the open rebuilds the cache from. A new epoch costs the append path
 * no file and no fsync. Calls are serialised on this object.
 */
public final class LeaderEpochCheckpoint
{
    public static final String FILE_NAME = "leader-epoch-checkpoint";
    private static final int VERSION = 0;
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");

    private final LeaderEpochCache cache;
    /** The entries the file holds (as far as this process knows). */
    private volatile LeaderEpochCache.Entries written;

    /** {@code inFile}: whether the file holds the cache's entries as they are now (they were just read from it). */
    public LeaderEpochCheckpoint(final LeaderEpochCache cache, final boolean inFile)
    {
        this.cache = cache;
        this.written = inFile ? cache.entries() : null;
    }

    public LeaderEpochCache cache()
    {
        return cache;
    }

    /** Whether the cache changed since the file was last written (one volatile read each). */
    public boolean changed()
    {
        return cache.entries() != written;
    }

    /** Writes the cache's entries to {@code dir}'s file when they changed since the last write; returns whether it wrote. */
    public synchronized boolean writeIfChanged(final Path dir) throws IOException
    {
        final LeaderEpochCache.Entries e = cache.entries();
        if (e == written)
        {
            return false;
        }
        write(dir, e);
        written = e;
        return true;
    }

    static void write(final Path dir, final LeaderEpochCache.Entries e) throws IOException
    {
        final StringBuilder sb = new StringBuilder(16 + 24 * e.size()).append(VERSION).append('\n').append(e.size()).append('\n');
        for (int i = 0; i < e.size(); i++)
        {
            sb.append(e.epochs[i]).append(' ').append(e.startOffsets[i]).append('\n');
        }
        DurableFile.write(dir.resolve(FILE_NAME), sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Reads {@code dir}'s file; null when there is none. A damaged file is an {@link IOException} with
     * the message Kafka's {@code CheckpointFile} gives (an unknown version, a malformed line, fewer
     * entries than the count says), as Kafka refuses it: its entries decide where followers truncate.
     */
    public static LeaderEpochCache read(final Path dir) throws IOException
    {
        final Path file = dir.resolve(FILE_NAME);
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            final String versionLine = in.readLine();
            if (versionLine == null)
            {
                throw malformed(file, null);
            }
            final int version = parseInt(file, versionLine);
            if (version != VERSION)
            {
                throw new IOException("Unrecognised version:" + version + ", expected version: " + VERSION +
                    " in checkpoint file at: " + file);
            }
            final String countLine = in.readLine();
            if (countLine == null)
            {
                throw malformed(file, null);
            }
            final int expected = parseInt(file, countLine);
            int[] epochs = new int[Math.max(0, Math.min(expected, 1024))];
            long[] starts = new long[epochs.length];
            int n = 0;
            for (String line = in.readLine(); line != null; line = in.readLine())
            {
                final String[] parts = WHITESPACE.split(line);
                if (parts.length != 2)
                {
                    throw malformed(file, line);
                }
                if (n == epochs.length)
                {
                    epochs = Arrays.copyOf(epochs, n * 2 + 1);
                    starts = Arrays.copyOf(starts, n * 2 + 1);
                }
                try
                {
                    epochs[n] = Integer.parseInt(parts[0]);
                    starts[n] = Long.parseLong(parts[1]);
                }
                catch (final NumberFormatException ex)
                {
                    throw malformed(file, line);
                }
                if (epochs[n] < 0 || starts[n] < 0)
                {
                    throw malformed(file, line);
                }
                n++;
            }
            if (n != expected)
            {
                throw new IOException("Expected [" + expected + "] entries in checkpoint file [" + file + "], but found only [" + n + "]");
            }
            final LeaderEpochCache cache = new LeaderEpochCache();
            for (int i = 0; i < n; i++)
            {
                cache.assign(epochs[i], starts[i]); // as Kafka loads its file: a negative entry refused, a conflicting one dropped
            }
            return cache;
        }
        catch (final NoSuchFileException ex)
        {
            return null;
        }
    }

    private static int parseInt(final Path file, final String line) throws IOException
    {
        try
        {
            return Integer.parseInt(line.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw malformed(file, line);
        }
    }

    private static IOException malformed(final Path file, final String line)
    {
        return new IOException(String.format("Malformed line in checkpoint file [%s]: %s", file, line));
    }
}
