package io.ferrite.log;

import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deleted partition's files are given back to the disk once {@code file.delete.delay.ms} has
 * passed: every segment, the active one included, is then closed and unmapped explicitly, not left
 * to the GC (a long-running embedding app that deletes topics would otherwise keep their blocks for
 * as long as its heap keeps the buffers). The active segment's close runs into files that are
 * gone — its directory was renamed and deleted at once — and that must not stop the rest.
 */
class DeletedLogUnmapTest
{
    @TempDir
    Path dir;

    @Test
    void aDeletedLogsActiveSegmentIsUnmappedAndClosedAfterTheDelay() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("gone", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "50"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 3; i++)
            {
                batches.records(2, i, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertTrue(mappedOrOpen(dir, "gone-0") > 0, "the active .log is mapped and open before the deletion");

            manager.deleteLog("gone", 0);

            final long[] seen = {-1};
            Await.await(() ->
            {
                seen[0] = mappedOrOpen(dir, "gone-0");
                return seen[0] == 0;
            }, Duration.ofSeconds(10), () -> "no mapping or descriptor left on the deleted log's files after the delay; saw " + seen[0]);
        }
    }

    /** Lines of /proc/self/maps and descriptors of this process naming a {@code .log} file in a directory under {@code dir} starting with {@code name}. */
    private static long mappedOrOpen(final Path dir, final String name) throws IOException
    {
        final String root = dir.toRealPath().toString() + "/" + name;
        long n;
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps")))
        {
            n = lines.filter(line -> line.contains(root) && line.contains(".log")).count();
        }
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            n += fds.filter(fd ->
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString();
                    return target.startsWith(root) && target.contains(".log");
                }
                catch (final IOException ex)
                {
                    return false;
                }
            }).count();
        }
        return n;
    }
}
