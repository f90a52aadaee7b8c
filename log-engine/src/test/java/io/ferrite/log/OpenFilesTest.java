package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;


/**
 * A partition that holds little costs one open file, its active segment's {@code .log}, as in
 * Kafka — while running, and after a clean or an unclean restart. At three per partition, 10 000
 * partitions needed 30 000 descriptors (the machine's limit is 20 000) and the broker could not start
 * again; even at one while running, a restart that rebuilt indexes held three again.
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
            copy(data, dir.resolve("unclean")); // the files as a SIGKILL would leave them
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            assertEquals(PARTITIONS, openUnder(data, ".log"), "after a clean restart");
            assertEquals(0, openUnder(data, "index"), "after a clean restart: no index file open");
        }
        final Path unclean = dir.resolve("unclean");
        Files.deleteIfExists(unclean.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(unclean)))
        {
            assertEquals(3, manager.log("small", 7).logEndOffset());
            assertEquals(PARTITIONS, openUnder(unclean, ".log"), "after an unclean restart");
            assertEquals(0, openUnder(unclean, "index"), "after an unclean restart: no index file open");
        }
    }

    private static void copy(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> files = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(target);
                }
                else if (!p.getFileName().toString().equals(".lock"))
                {
                    Files.copy(p, target);
                }
            }
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

}
