package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partition directory's fsync of a deletion that keeps only the active segment ({@link LogRetention}): made only
 * when the active segment's name is not yet known durable (a fresh roll's), so a DeleteRecords to the high watermark
 * (or a follower's log start passing its sealed segments) does no fsync on the log thread in the common case; and a
 * failed one leaks nothing: the removed segments are closed and unmapped all the same, their files left for the
 * reload. The fsyncs are real and seen (or failed, EIO) in a child JVM through the LD_PRELOAD shim
 * {@code recording_fsync.c}.
 */
class RetentionFsyncTest
{
    @TempDir
    Path dir;

    @Test
    void aPurgeOfALogWhoseNamesAreDurableFsyncsNoDirectory() throws Exception
    {
        final Path shim = TxnIndexFsyncOrderTest.compileShim(dir);
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path record = dir.resolve("fsyncs.txt");
        final ChildJvm.Result child = ChildJvm.run(RetentionFsyncChild.class, dir, List.of(),
            Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FSYNC_LOG", record.toString()), "purge", data.toString(),
            record.toString());
        assertEquals(List.of("RESULT start true segments 1", "RESULT done"), results(child),
            () -> "child exit " + child.exitCode() + ":\n" + String.join("\n", child.output()));
        final List<String> lines = Files.readAllLines(record);
        final List<String> during = lines.subList(lines.indexOf("delete") + 1, lines.indexOf("deleted"));
        final String partition = data.resolve("t-0").toString();
        // a rolled flush queued by the rolls may run meanwhile and write the leader-epoch checkpoint the new log
        // start changed: that write fsyncs its file, then the directory; every other fsync of it is the purge's
        // (its directory's fsync may fall after "deleted", never before its file's)
        final long checkpointWrites = during.stream().filter(l -> l.endsWith("/leader-epoch-checkpoint.tmp")).count();
        final long directoryFsyncs = during.stream().filter(partition::equals).count();
        assertTrue(directoryFsyncs <= checkpointWrites,
            "no fsync of the partition directory by the DeleteRecords but a checkpoint's own: " + during);
    }

    @Test
    void aFailedFsyncOfTheDirectoryClosesTheRemovedSegmentsAndKeepsTheirFiles() throws Exception
    {
        final Path shim = TxnIndexFsyncOrderTest.compileShim(dir);
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final ChildJvm.Result crashed = ChildJvm.run(RetentionFsyncChild.class, dir, List.of(), "crash", data.toString());
        assertEquals(List.of("RESULT done"), results(crashed), () -> String.join("\n", crashed.output()));

        final Path trigger = dir.resolve("armed");
        final ChildJvm.Result child = ChildJvm.run(RetentionFsyncChild.class, dir, List.of(),
            Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FAIL_FSYNC_TRIGGER", trigger.toString(),
                "FERRITE_FAIL_FSYNC_SUFFIX", "/t-0"), "failing", data.toString(), trigger.toString());
        assertEquals(List.of("RESULT open before true", "RESULT thrown IOException", "RESULT segments 1",
                "RESULT closed true", "RESULT files kept true", "RESULT done"), results(child),
            () -> "child exit " + child.exitCode() + ":\n" + String.join("\n", child.output()));
    }

    private static List<String> results(final ChildJvm.Result child)
    {
        return child.output().stream().filter(l -> l.startsWith("RESULT ")).toList();
    }
}
