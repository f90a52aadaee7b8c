package io.ferrite.log;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The fsyncs of an ABORT's flush, seen as the kernel gets them: a child JVM runs with an LD_PRELOAD
 * shim ({@code recording_fsync.c}) that records the path of every successful fsync and fdatasync in
 * order ({@link TxnIndexFsyncOrderChild}). A flush covering the marker fsyncs the segment's
 * {@code .log}, then its {@code .txnindex}, then — once, the flush after the file was made — the
 * partition directory that holds the index's new name, and only then moves the durable offset past
 * the marker: a power loss cannot keep an acknowledged ABORT and lose the index entry that says what
 * it aborted. The second ABORT's flush fsyncs the index again but not the directory.
 */
class TxnIndexFsyncOrderTest
{
    @TempDir
    Path dir;

    @Test
    void anAbortsIndexEntryAndItsNameAreDurableBeforeTheDurableOffsetPassesTheMarker() throws Exception
    {
        final Path shim = compileShim(dir);
        final Path data = Files.createDirectories(dir.resolve("data")).toRealPath();
        final Path record = dir.resolve("fsyncs.txt");
        final ChildJvm.Result child = ChildJvm.run(TxnIndexFsyncOrderChild.class, dir, List.of(),
            Map.of("LD_PRELOAD", shim.toString(), "FERRITE_FSYNC_LOG", record.toString()), data.toString(), record.toString());
        assertEquals(List.of("DONE"), child.output(), "child exit " + child.exitCode());
        assertEquals(0, child.exitCode());

        final Path partition = data.resolve("t-0");
        final String log = partition.resolve(Segment.fileName(0, Segment.LOG_SUFFIX)).toString();
        final String txnIndex = partition.resolve(Segment.fileName(0, TransactionIndex.SUFFIX)).toString();
        final List<String> seen = partitionLinesAfterFirstAbort(Files.readAllLines(record), partition);
        assertEquals(List.of(
                log, txnIndex, partition.toString(), "durable 3", // the marker at 2: index made, its name made durable
                log, "durable 5", // the next transaction's batch
                "abort", log, txnIndex, "durable 6"), // the index written again, its name durable already
            seen, "the partition's fsyncs and the durable offset's moves, in order");
    }

    /**
     * Between the first {@code abort} and the close: the lines of the partition's files and directory
     * (not the log directory's checkpoints), and the child's own.
     */
    private static List<String> partitionLinesAfterFirstAbort(final List<String> lines, final Path partition)
    {
        final List<String> kept = new ArrayList<>();
        final int first = lines.indexOf("abort");
        for (final String line : lines.subList(first + 1, lines.indexOf("close")))
        {
            if (!line.startsWith("/") || line.equals(partition.toString()) || line.startsWith(partition + "/"))
            {
                kept.add(line);
            }
        }
        return kept;
    }

    /** Builds {@code recording_fsync.c} into {@code into}; a machine without gcc skips the test. */
    static Path compileShim(final Path into) throws IOException, InterruptedException
    {
        return compileShim(into, "recording_fsync");
    }

    /** Builds the test resource {@code <name>.c} into {@code into} (SwapCrashTest's kill points too); without gcc, skipped. */
    static Path compileShim(final Path into, final String name) throws IOException, InterruptedException
    {
        final Path source = into.resolve(name + ".c");
        try (InputStream in = TxnIndexFsyncOrderTest.class.getResourceAsStream(name + ".c"))
        {
            Files.copy(in, source);
        }
        final Path shim = into.resolve(name + ".so");
        final Process gcc;
        try
        {
            gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-o", shim.toString(), source.toString(), "-ldl")
                .redirectErrorStream(true).start();
        }
        catch (final IOException noGcc)
        {
            Assumptions.abort("no gcc here to build the shim: " + noGcc.getMessage());
            throw noGcc;
        }
        final String said = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, gcc.waitFor(), said);
        return shim;
    }
}
