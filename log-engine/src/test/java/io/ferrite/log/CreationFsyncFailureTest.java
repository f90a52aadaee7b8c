package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What a failed fsync after a creation batch's files costs ({@link LogCreation}): a partition directory's fails that
 * topic alone, closed and removed, the others published; a log directory's fails every topic of the batch (a topic
 * with no partition there too: {@code single}), none published and none left on disk. The fsyncs fail for real, in a
 * child JVM ({@link CreationFsyncFailureChild}) with the LD_PRELOAD shim {@code recording_fsync.c} (EIO for a path
 * ending with the suffix given, once the trigger file exists); a restart without the shim then finds what the
 * child's batch left.
 */
class CreationFsyncFailureTest
{
    @TempDir
    Path dir;

    @Test
    void aPartitionDirectorysFailedFsyncFailsItsTopicAlone() throws Exception
    {
        final Path[] dirs = run("/failing-1");
        assertEquals(List.of("RESULT orders made", "RESULT orders-0 published on disk", "RESULT orders-1 published on disk",
            "RESULT orders-2 published on disk",
            "RESULT failing failed IOException", "RESULT failing-0 unpublished gone", "RESULT failing-1 unpublished gone",
            "RESULT failing-2 unpublished gone",
            "RESULT payments made", "RESULT payments-0 published on disk", "RESULT payments-1 published on disk",
            "RESULT single made", "RESULT single-0 published on disk"), results);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(List.of(dirs[0], dirs[1]), Map.of())))
        {
            assertEquals(6, manager.logs().size(), "orders 0-2, payments 0-1 and single-0 after a restart: " + manager.logs());
            assertNull(manager.log("failing", 1));
            assertNotNull(manager.log("payments", 1));
            assertEquals(1048576, manager.log("orders", 2).config().segmentBytes, "overrides after the restart");
        }
    }

    @Test
    void aLogDirectorysFailedFsyncFailsEveryTopicOfTheBatch() throws Exception
    {
        final Path[] dirs = run("/logdir-b");
        final List<String> expected = new ArrayList<>();
        for (final NewLogs entry : CreationFsyncFailureChild.BATCH)
        {
            expected.add("RESULT " + entry.topic() + " failed IOException");
            for (int p = entry.from(); p < entry.to(); p++)
            {
                expected.add("RESULT " + entry.topic() + "-" + p + " unpublished gone");
            }
        }
        assertEquals(expected, results);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(List.of(dirs[0], dirs[1]), Map.of())))
        {
            assertEquals(0, manager.logs().size(), "nothing of the batch after a restart: " + manager.logs());
        }
    }

    private List<String> results;

    /** The child's batch with the fsyncs of paths ending with {@code failing} failing; the two log directories. */
    private Path[] run(final String failing) throws Exception
    {
        final Path shim = TxnIndexFsyncOrderTest.compileShim(dir);
        final Path a = Files.createDirectories(dir.resolve("logdir-a")).toRealPath();
        final Path b = Files.createDirectories(dir.resolve("logdir-b")).toRealPath();
        final Path trigger = dir.resolve("armed");
        final ChildJvm.Result child = ChildJvm.run(CreationFsyncFailureChild.class, dir, List.of(),
            Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FAIL_FSYNC_TRIGGER", trigger.toString(),
                "FERRITE_FAIL_FSYNC_SUFFIX", failing), a.toString(), b.toString(), trigger.toString());
        assertEquals(0, child.exitCode(), () -> "child exit " + child.exitCode() + ":\n" + String.join("\n", child.output()));
        results = child.output().stream().filter(l -> l.startsWith("RESULT ")).toList();
        return new Path[] {a, b};
    }
}
