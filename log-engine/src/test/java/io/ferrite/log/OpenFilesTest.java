package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;


/**
 * A partition that holds little costs one open file and one mapping, its active segment's
 * {@code .log} — while running, and after a clean or an unclean restart. Open files: at three per
 * partition, 10 000 partitions needed 30 000 descriptors (the machine's limit is 20 000) and the broker
 * could not start again; even at one while running, a restart that rebuilt indexes held three again.
 * Mappings ({@code vm.max_map_count}, 65 530 by default): an index is mapped when it first takes or
 * gives an entry, as Kafka's lazy indexes are, and given back after the checks of the open until a
 * read or append needs it; at three per segment, 10 000 partitions held 30 000 where Kafka 4.4 holds
 * 20 000 (two indexes per active segment).
 */
class OpenFilesTest
{
    private static final int PARTITIONS = 50;

    @TempDir
    Path dir;

    @Test
    void aSmallPartitionHoldsOneOpenFileRunningAndAfterRestarts() throws Exception
    {
        final Path data = dir.resolve("data");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int p = 0; p < PARTITIONS; p++)
            {
                final PartitionLog log = manager.createLog("small", p, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "65536"));
                batches.records(3, p, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertEquals(PARTITIONS, openUnder(data, ".log"), "running: a .log per partition");
            assertEquals(0, openUnder(data, "index"), "running: no index file open");
            assertEquals(PARTITIONS, mappedUnder(data, ".log"), "running: the active .log of each partition mapped");
            assertEquals(0, mappedUnder(data, "index"), "running: no index mapped");
            copy(data, dir.resolve("unclean")); // the files as a SIGKILL would leave them
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            assertEquals(PARTITIONS, openUnder(data, ".log"), "after a clean restart");
            assertEquals(0, openUnder(data, "index"), "after a clean restart: no index file open");
            assertEquals(PARTITIONS, mappedOnceCollected(data, ".log", PARTITIONS), "after a clean restart: .log mapped");
            assertEquals(0, mappedOnceCollected(data, "index", 0), "after a clean restart: no index mapped");
        }
        final Path unclean = dir.resolve("unclean");
        Files.deleteIfExists(unclean.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(unclean)))
        {
            assertEquals(3, manager.log("small", 7).logEndOffset());
            assertEquals(PARTITIONS, openUnder(unclean, ".log"), "after an unclean restart");
            assertEquals(0, openUnder(unclean, "index"), "after an unclean restart: no index file open");
            assertEquals(PARTITIONS, mappedUnder(unclean, ".log"), "after an unclean restart: .log mapped");
            assertEquals(0, mappedUnder(unclean, "index"), "after an unclean restart: no index mapped");
        }
    }

    /**
     * Copies a log directory as a SIGKILL would leave it, while the log may still be flushing: a
     * directory stream, not {@code Files.walk} (which fails on a name gone between its listing and
     * its stat), and a checkpoint's temporary file a flush renamed meanwhile is left out (a kill
     * leaves it or not; an open removes it anyway). Files are copied sparse ({@link #copySparse}).
     */
    static void copy(final Path from, final Path to) throws IOException
    {
        Files.createDirectories(to);
        try (java.nio.file.DirectoryStream<Path> files = Files.newDirectoryStream(from))
        {
            for (final Path p : files)
            {
                final String name = p.getFileName().toString();
                final Path target = to.resolve(name);
                if (Files.isDirectory(p))
                {
                    copy(p, target);
                }
                else if (!name.equals(".lock"))
                {
                    try
                    {
                        copySparse(p, target);
                    }
                    catch (final java.nio.file.NoSuchFileException renamed)
                    {
                        if (!name.endsWith(".tmp"))
                        {
                            throw renamed;
                        }
                    }
                }
            }
        }
    }

    /**
     * Copies {@code from} to a new file {@code to} of the same length and bytes, writing only the blocks that are not all
     * zeros: the holes of a preallocated segment (sparse, 1 GiB by default) or index (10 MiB) stay holes. {@code
     * Files.copy} wrote every zero of them (2 GiB and 4 s for two new default partitions, a share of a two-core build's
     * time and disk before issue 17's build work). A file cut while copied is copied as far as it was read.
     */
    static void copySparse(final Path from, final Path to) throws IOException
    {
        final byte[] chunk = new byte[1 << 20];
        final byte[] zeros = new byte[chunk.length];
        try (java.nio.channels.FileChannel in = java.nio.channels.FileChannel.open(from, java.nio.file.StandardOpenOption.READ);
             java.io.RandomAccessFile out = new java.io.RandomAccessFile(Files.createFile(to).toFile(), "rw"))
        {
            final long size = in.size();
            long position = 0;
            while (position < size)
            {
                final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(chunk);
                final int read = in.read(buffer, position);
                if (read <= 0)
                {
                    break;
                }
                if (java.util.Arrays.mismatch(chunk, 0, read, zeros, 0, read) >= 0)
                {
                    out.seek(position);
                    out.write(chunk, 0, read);
                }
                position += read;
            }
            out.setLength(position);
        }
    }

    /** Descriptors of this process open on files under {@code dir} whose name ends with {@code suffix}. */
    private static long openUnder(final Path dir, final String suffix) throws IOException
    {
        final Path root = dir.toRealPath();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.filter(fd ->
            {
                try
                {
                    final Path target = Files.readSymbolicLink(fd);
                    return target.startsWith(root) && target.toString().endsWith(suffix);
                }
                catch (final IOException ex)
                {
                    return false;
                }
            }).count();
        }
    }

    @Test
    void aRolledSegmentsIndexesAreMappedByTheFirstReadThatNeedsThem() throws Exception
    {
        final Path data = dir.resolve("data");
        writeRolledLogAndStop(data);
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = manager.log("rolled", 0);
            final int segments = log.segments().length;
            assertEquals(0, mappedOnceCollected(data, "index", 0), "after a clean restart: no index mapped");
            assertEquals(segments, mappedOnceCollected(data, ".log", segments), "after a clean restart: every .log mapped");
            final FileRegion region = new FileRegion();
            final long inFirst = log.segments()[0].baseOffset + 5;
            assertEquals(PartitionLog.READ_OK, log.read(inFirst, 1024, Long.MAX_VALUE, true, region), "a read in the first segment");
            assertTrue(region.length > 0, "it found batches");
            assertEquals(1, mappedUnder(data, ".index"), "the read mapped the first segment's offset index");
            assertEquals(0, mappedUnder(data, ".timeindex"), "and no time index");
            batches.records(4, 1, System.currentTimeMillis());
            while (log.segments().length == segments)
            {
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertTrue(mappedUnder(data, ".index") >= 2, "appends past the index interval mapped the active offset index");
            assertEquals(log.segments().length, mappedUnder(data, ".log"), "every .log mapped");
        }
    }

    /** Writes log rolled-0 (8 KiB segments, an index entry per 512 bytes, 300 batches: at least three segments) and stops cleanly. */
    static void writeRolledLogAndStop(final Path data) throws IOException
    {
        final Map<String, String> small = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "8192", LogConfig.INDEX_INTERVAL_BYTES, "512");
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = manager.createLog("rolled", 0, small);
            for (int i = 0; i < 300; i++)
            {
                batches.records(4, i, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertTrue(log.segments().length >= 3, log.segments().length + " segments");
        }
    }

    /**
     * {@link #mappedUnder} once the closed manager's mappings are gone: a clean close leaves them to
     * the GC (a reader racing the close must not find them unmapped), so in the same JVM they go only
     * when it collects them. Gives the count it settled at, or the last seen after the deadline.
     */
    static long mappedOnceCollected(final Path dir, final String suffix, final long expected) throws IOException
    {
        final long[] seen = {-1};
        try
        {
            io.ferrite.testing.Await.await(() ->
            {
                System.gc();
                seen[0] = mappedUnder(dir, suffix);
                return seen[0] == expected;
            }, java.time.Duration.ofSeconds(30), () -> expected + " mappings of *" + suffix + ", saw " + seen[0]);
        }
        catch (final AssertionError ex)
        {
            return seen[0];
        }
        return seen[0];
    }

    /** Mappings of this process (lines of /proc/self/maps) naming a file under {@code dir} that ends with {@code suffix}. */
    static long mappedUnder(final Path dir, final String suffix) throws IOException
    {
        final String root = dir.toRealPath().toString() + "/";
        try (var lines = Files.lines(Path.of("/proc/self/maps")))
        {
            return lines.filter(line ->
            {
                final int at = line.indexOf(root);
                return at >= 0 && line.trim().endsWith(suffix);
            }).count();
        }
    }
}
