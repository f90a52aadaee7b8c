package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's own {@code DumpLogSegments} (kafka-tools 4.4, in a child JVM) reads our segment files,
 * offset and time indexes, producer snapshots and transaction indexes, deep-iterating every record
 * and verifying the indexes against the log, and reports no error; it prints each aborted
 * transaction as we indexed it.
 */
class DumpLogSegmentsCompatibilityTest
{
    /** Segments of a few batches each, indexed often; timestamps of any age taken. */
    private static final Map<String, String> SMALL_SEGMENTS = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "6000",
        LogConfig.INDEX_INTERVAL_BYTES, "512", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    @TempDir
    Path dir;

    @Test
    void kafkasDumpLogSegmentsReadsOurFilesWithoutComplaint() throws Exception
    {
        final List<Path> files = new ArrayList<>();
        final int records;
        final List<String> abortedTxns = new ArrayList<>();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("dump", 0, SMALL_SEGMENTS);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            long sequence = 0;
            for (int i = 0; i < 120; i++)
            {
                final boolean idempotent = i % 3 == 0;
                batches.build(1 + i % 7, i, 1_700_000_000_000L + i * 100L, CompressionType.values()[i % 5],
                    idempotent ? 77 : -1, (short)(idempotent ? 0 : -1), idempotent ? (int)sequence : -1);
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                if (idempotent)
                {
                    sequence += 1 + i % 7;
                }
                if (i % 10 == 9) // this batch standing in for an ABORT marker: its segment indexes the transaction
                {
                    final Segment[] segs = log.segments();
                    final long first = Math.max(0, result.lastOffset - 20);
                    segs[segs.length - 1].appendAbortedTxn(1000 + i, first, result.lastOffset, first);
                    abortedTxns.add("version: 0 producerId: " + (1000 + i) + " firstOffset: " + first + " lastOffset: " +
                        result.lastOffset + " lastStableOffset: " + first);
                }
            }
            records = (int)log.logEndOffset();
            assertTrue(log.segmentCount() > 3);
        }
        try (Stream<Path> all = Files.list(dir.resolve("dump-0")))
        {
            all.filter(p -> p.toString().matches(".*\\.(log|index|timeindex|snapshot|txnindex)$")).sorted().forEach(files::add);
        }
        assertTrue(files.stream().filter(p -> p.toString().endsWith(".txnindex")).count() > 1, "transaction indexes: " + files);
        final String joined = String.join(",", files.stream().map(Path::toString).toList());

        final List<String> outputs = checkVerifyAndPrint(joined);
        final String printed = outputs.get(2);
        // every record of every segment was read back by Kafka's code
        final long recordLines = printed.lines().filter(l -> l.trim().startsWith("| offset:")).count();
        assertEquals(records, recordLines, printed.lines().limit(40).reduce("", (a, b) -> a + "\n" + b));
        assertEquals(abortedTxns, printed.lines().filter(l -> l.startsWith("version: 0 producerId:")).toList(),
            "the aborted transactions as Kafka's TransactionIndex reads them, in segment order");
    }

    @Test
    void kafkasDumpLogSegmentsReadsSegmentsAReplacementWrote() throws Exception
    {
        final List<Path> files = new ArrayList<>();
        long kept = 0;
        final List<String> abortedTxns = new ArrayList<>();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("swapped", 0, SMALL_SEGMENTS);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 150; i++)
            {
                batches.build(1 + i % 7, i, 1_700_000_000_000L + i * 100L, CompressionType.values()[i % 5], -1, (short)-1, -1);
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                if (i % 10 == 9 && i < 100) // an entry standing in for an ABORT marker, as above; those of dropped batches go
                {
                    final Segment[] segs = log.segments();
                    final long first = Math.max(0, result.firstOffset - 20);
                    segs[segs.length - 1].appendAbortedTxn(1000 + i, first, result.lastOffset, result.lastOffset + 1);
                    if (i % 4 != 1)
                    {
                        abortedTxns.add("version: 0 producerId: " + (1000 + i) + " firstOffset: " + first + " lastOffset: " +
                            result.lastOffset + " lastStableOffset: " + (result.lastOffset + 1));
                    }
                }
            }
            final long[] bases = log.segmentReplacer().inactiveSegmentBases();
            assertTrue(bases.length > 4, "segments " + bases.length);
            final int[] index = {0};
            final java.util.Set<Long> droppedBatches = new java.util.HashSet<>();
            assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], bases.length, batch ->
            {
                final int i = index[0]++;
                if (i % 4 == 1)
                {
                    droppedBatches.add(batch.baseOffset());
                    return null;
                }
                return batch;
            }));
            final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
            final LogTailer tailer = new LogTailer(log, 0);
            while (tailer.next(Long.MAX_VALUE, batch))
            {
                kept += batch.recordCount();
            }
            assertTrue(!droppedBatches.isEmpty() && kept < log.logEndOffset());
        }
        try (Stream<Path> all = Files.list(dir.resolve("swapped-0")))
        {
            all.filter(p -> p.toString().matches(".*\\.(log|index|timeindex|txnindex)$")).sorted().forEach(files::add);
        }
        assertTrue(files.stream().anyMatch(p -> p.toString().endsWith(".txnindex")), "transaction indexes: " + files);
        final String joined = String.join(",", files.stream().map(Path::toString).toList());
        final String printed = checkVerifyAndPrint(joined).get(2);
        assertEquals(kept, printed.lines().filter(l -> l.trim().startsWith("| offset:")).count(), "every record kept, read by Kafka");
        assertEquals(abortedTxns, printed.lines().filter(l -> l.startsWith("version: 0 producerId:")).toList(),
            "the entries of the markers kept, carried into the new segments");
    }

    @Test
    void kafkasDumpLogSegmentsPrintsOurTransactionMarkersAndOpenTransactions() throws Exception
    {
        final Path partition = dir.resolve("txn-0");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("txn", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 3; i++)
            {
                batches.producer(2, 40, (short)0, 2 * i, true, System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                log.transactions().appendMarker(40, (short)0, 17, i != 1, false, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            batches.producer(1, 41, (short)3, 0, true, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result); // left open: in the snapshot
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
        final String printed = dump("--files", partition.resolve(Segment.fileName(0, Segment.LOG_SUFFIX)) + "," +
            partition.resolve(Segment.fileName(10, ProducerSnapshots.SNAPSHOT_SUFFIX)), "--deep-iteration", "--print-data-log");
        assertClean(printed);
        assertEquals(2, printed.lines().filter(l -> l.contains("endTxnMarker: COMMIT coordinatorEpoch: 17")).count(), printed);
        assertEquals(1, printed.lines().filter(l -> l.contains("endTxnMarker: ABORT coordinatorEpoch: 17")).count(), printed);
        assertEquals(3, printed.lines().filter(l -> l.contains("isTransactional: true") && l.contains("isControl: true")).count(),
            printed);
        assertTrue(printed.lines().anyMatch(l -> l.contains("producerId: 41 producerEpoch: 3 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong[9]")),
            printed);
        assertTrue(printed.lines().anyMatch(l -> l.contains("producerId: 40 producerEpoch: 0 coordinatorEpoch: 17 currentTxnFirstOffset: OptionalLong.empty")),
            printed);
    }

    static void assertClean(final String output)
    {
        for (final String line : output.lines().toList())
        {
            final String l = line.toLowerCase();
            assertTrue(!l.contains("mismatch") && !l.contains("invalid") && !l.contains("corrupt") && !l.contains("exception") &&
                !l.contains("error") && !l.contains("out of order") && !l.contains("not match") && !l.contains("failed"),
                "DumpLogSegments complained: " + line + "\n---\n" + output);
        }
    }

    /**
     * DumpLogSegments over {@code files} three times, each output {@link #assertClean}: the index sanity check, the
     * indexes verified against the log, and every record printed (deep iteration in each); the outputs in that order.
     */
    private static List<String> checkVerifyAndPrint(final String files) throws IOException, InterruptedException
    {
        final List<String> outputs = dumps(List.of(
            List.of("--files", files, "--deep-iteration", "--index-sanity-check"),
            List.of("--files", files, "--deep-iteration", "--verify-index-only"),
            List.of("--files", files, "--deep-iteration", "--print-data-log")));
        outputs.forEach(DumpLogSegmentsCompatibilityTest::assertClean);
        return outputs;
    }

    static String dump(final String... args) throws IOException, InterruptedException
    {
        return dumps(List.of(List.of(args))).get(0);
    }

    /**
     * Kafka's DumpLogSegments run once per argument list, one after the other in one child JVM ({@link Runs}: a JVM's
     * start per run was most of this class's time); what each run printed (the child's own output before the first
     * run, a JVM warning say, counts as the first's), in order. The child must end with 0, as DumpLogSegments does.
     */
    static List<String> dumps(final List<List<String>> runs) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-cp", System.getProperty("java.class.path"), Runs.class.getName()));
        for (final List<String> run : runs)
        {
            command.add(Runs.NEXT);
            command.addAll(run);
        }
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), output);
        final List<StringBuilder> parts = new ArrayList<>(List.of(new StringBuilder())); // what came before the first run
        for (final String line : output.lines().toList())
        {
            if (line.equals(Runs.NEXT))
            {
                parts.add(new StringBuilder());
            }
            else
            {
                parts.get(parts.size() - 1).append(line).append('\n');
            }
        }
        assertEquals(runs.size() + 1, parts.size(), output);
        parts.get(1).insert(0, parts.remove(0));
        return parts.stream().map(StringBuilder::toString).toList();
    }

    /** The child: {@code DumpLogSegments.main} for each argument list that follows a {@link #NEXT}, which it prints first. */
    public static final class Runs
    {
        static final String NEXT = "--next-dump-log-segments-run";

        public static void main(final String[] args) throws Exception
        {
            final List<String> run = new ArrayList<>();
            for (int i = 1; i <= args.length; i++)
            {
                if (i == args.length || args[i].equals(NEXT))
                {
                    System.out.println(NEXT);
                    System.out.flush();
                    org.apache.kafka.tools.DumpLogSegments.main(run.toArray(new String[0]));
                    System.out.flush();
                    run.clear();
                }
                else
                {
                    run.add(args[i]);
                }
            }
        }
    }
}
