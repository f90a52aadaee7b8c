package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Retention of the active segment as Kafka 4.4's {@code UnifiedLog.deleteOldSegments} does it: when every segment is
 * past retention and wholly below the high watermark, all go — the active one after a roll, here the writer's
 * ({@link RetentionRoll}) — and the log start becomes the log end; an empty active segment never goes; nothing at or
 * above the high watermark goes. The scheduler is stepped on the test's thread with the test's clock, and the test is
 * the log's writer: it runs what the {@link WriterTasks} were told, as a broker's log thread would.
 */
class ActiveSegmentRetentionTest
{
    static final long T0 = 1_700_000_000_000L;
    static final long RETENTION_MS = 60_000;
    static final long PID = 7;

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(T0);
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    /** The logs retention asked to roll, in order: what the writer is told. */
    private final List<PartitionLog> rollsAsked = new ArrayList<>();
    private final WriterTasks tasks = new WriterTasks()
    {
        @Override
        public void producerExpiryDue()
        {
        }

        @Override
        public void retentionRollDue(final PartitionLog log)
        {
            rollsAsked.add(log);
        }
    };
    private LogManager manager;
    private int sequence;

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private PartitionLog open(final Map<String, String> overrides) throws IOException
    {
        manager = LogManager.open(managerConfig(dir, clock, tasks), true);
        final PartitionLog existing = manager.log("t", 0);
        return existing != null ? existing : manager.createLog("t", 0, overrides);
    }

    /**
     * The test's (and its crash child's) manager: the test's clock and writer, no cleaner threads (a {@code compact}
     * log here must not be cleaned beside the test's own calls, nor its retention ask for rolls from their thread).
     */
    static LogManagerConfig managerConfig(final Path dir, final MutableClock clock, final WriterTasks tasks)
    {
        return LogManagerConfig.of(dir).withClock(clock).withRetentionCheckIntervalMs(1_000)
            .withProducerIdExpiration(LogManagerConfig.DEFAULT_PRODUCER_ID_EXPIRATION_MS, Long.MAX_VALUE / 4, tasks)
            .withCleaner(CleanerConfig.defaults().withEnable(false));
    }

    private PartitionLog create(final String topic, final Map<String, String> overrides) throws IOException
    {
        if (manager == null)
        {
            open(Map.of());
        }
        final PartitionLog log = manager.createLog(topic, 0, overrides);
        sequence = 0;
        while (log.segmentCount() < 3)
        {
            assertEquals(AppendResult.OK, append(log, sequence), result.toString());
            sequence += 3;
        }
        log.highWatermark(log.logEndOffset());
        return log;
    }

    /** Three records of the idempotent producer at the clock's time, its sequence going on. */
    private int append(final PartitionLog log, final int baseSequence)
    {
        batches.producer(3, PID, (short)0, baseSequence, false, clock.time());
        log.append(batches.buffer, 0, batches.length, result);
        return result.status;
    }

    /** Two sealed segments and records in the active one, all committed (the high watermark at the log end). */
    private PartitionLog filled(final Map<String, String> overrides) throws IOException
    {
        final PartitionLog log = open(overrides);
        while (log.segmentCount() < 3)
        {
            assertEquals(AppendResult.OK, append(log, sequence), result.toString());
            sequence += 3;
        }
        log.highWatermark(log.logEndOffset());
        return log;
    }

    private void step()
    {
        final AgentInvoker scheduler = manager.background().schedulerInvoker();
        scheduler.invoke();
    }

    /** The writer's turn: what a broker's log thread runs when told ({@code LogThreadTasks}). */
    private void runAsked() throws IOException
    {
        final List<PartitionLog> asked = new ArrayList<>(rollsAsked);
        rollsAsked.clear();
        for (final PartitionLog log : asked)
        {
            log.retentionRoll().run();
        }
    }

    static Map<String, String> config(final String policy)
    {
        return Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.RETENTION_MS, Long.toString(RETENTION_MS),
            LogConfig.CLEANUP_POLICY, policy);
    }

    @Test
    void everySegmentPastRetentionGoesTheActiveOneAfterTheWritersRollAndTheLogGoesOnAtItsEnd() throws IOException
    {
        PartitionLog log = filled(config("delete"));
        final long end = log.logEndOffset();
        final long activeBase = log.segments()[2].baseOffset;

        clock.advance(RETENTION_MS + 1_000);
        step();
        assertEquals(activeBase, log.logStartOffset(), "the sealed segments go at once");
        assertEquals(List.of(log), rollsAsked, "the writer is asked to roll the active one");
        assertTrue(log.retentionRoll().wanted());
        assertEquals(1, log.segmentCount(), "not rolled on the scheduler's thread");

        runAsked();
        assertFalse(log.retentionRoll().wanted());
        assertEquals(2, log.segmentCount(), "the writer rolled an empty segment at the log end");
        assertEquals(end, log.segments()[1].baseOffset);

        step(); // no clock change: the roll asked for a pass now
        assertEquals(1, log.segmentCount());
        assertEquals(end, log.logStartOffset(), "the log start is the log end");
        assertEquals(end, log.logEndOffset());
        assertEquals(0, log.segments()[0].size());
        final FileRegion region = new FileRegion();
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.read(0, 1 << 20, end, true, region));
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.read(end - 1, 1 << 20, end, true, region));
        assertEquals(PartitionLog.READ_OK, log.read(end, 1 << 20, end, true, region));
        assertTrue(region.isEmpty());

        clock.advance(RETENTION_MS + 1_000);
        step();
        assertEquals(List.of(), rollsAsked, "an empty active segment is never rolled nor deleted");
        assertEquals(1, log.segmentCount());

        assertEquals(AppendResult.OK, append(log, sequence), "the idempotent producer goes on: " + result);
        assertEquals(end, result.firstOffset);
        sequence += 3;

        manager.close(); // a clean restart: the close's snapshot at the log end (the crash variant is below)
        log = open(Map.of());
        assertEquals(end, log.logStartOffset());
        assertEquals(end + 3, log.logEndOffset());
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, sequence + 3), "a gap is still refused: " + result);
        assertEquals(AppendResult.OK, append(log, sequence), result.toString());
    }

    @Test
    void theIdempotentProducerIsRememberedWhenItsOnlySegmentsAreDeleted() throws IOException
    {
        final PartitionLog log = filled(config("delete"));
        clock.advance(RETENTION_MS + 1_000);
        step();
        runAsked();
        step();
        assertEquals(log.logEndOffset(), log.logStartOffset());
        final long end = log.logEndOffset();
        assertEquals(AppendResult.DUPLICATE, append(log, sequence - 3), "a retry of the last batch: " + result);
        assertEquals(end - 3, result.firstOffset, "answered with its original offsets");
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, sequence + 3), result.toString());
        assertEquals(AppendResult.OK, append(log, sequence), result.toString());
    }

    /**
     * A crash (SIGKILL, no close) right after the deletion, before any append: the producer's state comes back from the
     * roll's snapshot at the log end alone (no segment is left to replay, no close took one), so a retry of its last
     * batch is still a DUPLICATE with the original offsets, as Kafka 4.4 keeps it.
     */
    @Test
    void theRollsSnapshotKeepsTheIdempotentProducerAcrossACrashAfterTheDeletion() throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(java, ChildJvm.class.desiredAssertionStatus() ? "-ea" : "-da",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-XX:ErrorFile=" + dir.resolve("hs_err_pid%p.log"),
            "-cp", System.getProperty("java.class.path"), ActiveSegmentRetentionCrashChild.class.getName(),
            dir.resolve("data").toString()).redirectErrorStream(true).start();
        final List<String> output = new ArrayList<>();
        String ready = null;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while (ready == null && (line = out.readLine()) != null) // a child that fails ends its output
            {
                output.add(line);
                ready = line.startsWith("READY ") ? line : null;
            }
        }
        finally
        {
            child.destroyForcibly(); // SIGKILL on Linux
        }
        assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        assertTrue(ready != null, () -> "the child never deleted the log's segments:\n" + String.join("\n", output));
        assertEquals(137, child.exitValue(), "killed by SIGKILL");
        final String[] words = ready.split(" ");
        final int next = Integer.parseInt(words[1]);
        final long end = Long.parseLong(words[2]);

        manager = LogManager.open(managerConfig(dir.resolve("data"), clock, tasks), true);
        final PartitionLog log = manager.log("t", 0);
        assertEquals(end, log.logStartOffset(), "the log start is the old log end");
        assertEquals(end, log.logEndOffset());
        assertEquals(AppendResult.DUPLICATE, append(log, next - 3), "a retry of the last batch: " + result);
        assertEquals(end - 3, result.firstOffset, "answered with its original offsets");
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, next + 3), "a gap is refused: " + result);
        assertEquals(AppendResult.OK, append(log, next), result.toString());
        assertEquals(end, result.firstOffset);
    }

    /** The README's opening example: an owner with no {@link WriterTasks} commits what it appends and rolls itself. */
    @Test
    void anEmbeddedOwnerWithNoWriterTasksRollsInItsOwnLoop() throws IOException
    {
        manager = LogManager.open(managerConfig(dir, clock, WriterTasks.NONE), true);
        final PartitionLog log = manager.createLog("t", 0, config("delete"));
        while (log.segmentCount() < 3)
        {
            assertEquals(AppendResult.OK, append(log, sequence), result.toString());
            sequence += 3;
            log.highWatermark(log.logEndOffset()); // alone, the owner commits what it appended
            assertFalse(log.retentionRoll().run(), "nothing asked yet");
        }
        final long end = log.logEndOffset();
        clock.advance(RETENTION_MS + 1_000);
        step();
        assertEquals(1, log.segmentCount(), "the sealed segments went");
        assertTrue(log.retentionRoll().run(), "the writer's loop rolls what retention asked");
        step();
        assertEquals(end, log.logStartOffset(), "the log start is the log end");
        assertEquals(end, log.logEndOffset());
        assertEquals(1, log.segmentCount());
    }

    @Test
    void nothingAtOrAboveTheHighWatermarkGoes() throws IOException
    {
        final PartitionLog log = filled(config("delete"));
        final long secondBase = log.segments()[1].baseOffset;
        log.highWatermark(secondBase); // the first segment committed, the rest not yet
        clock.advance(RETENTION_MS + 1_000);
        step();
        assertEquals(secondBase, log.logStartOffset(), "only the segment wholly below the high watermark");
        assertEquals(List.of(), rollsAsked);
        assertEquals(2, log.segmentCount());

        log.highWatermark(log.logEndOffset() - 1); // one record of the active segment not committed
        clock.advance(1_000);
        step();
        assertEquals(1, log.segmentCount());
        assertEquals(List.of(), rollsAsked, "the active segment reaches past the high watermark");

        log.highWatermark(log.logEndOffset());
        clock.advance(1_000);
        step();
        assertEquals(List.of(log), rollsAsked);
    }

    @Test
    void aRecordWrittenBeforeTheRollKeepsTheRolledSegment() throws IOException
    {
        final PartitionLog log = filled(config("delete"));
        clock.advance(RETENTION_MS + 1_000);
        step();
        assertEquals(AppendResult.OK, append(log, sequence), result.toString()); // fresh, before the writer's turn
        log.highWatermark(log.logEndOffset());
        final long start = log.logStartOffset();
        runAsked();
        step();
        assertEquals(start, log.logStartOffset(), "the rolled segment holds a record within retention");
        assertEquals(2, log.segmentCount());
    }

    @Test
    void byTimeUnderDeleteAndCompactDeleteNotUnderCompactAlone() throws IOException
    {
        final PartitionLog delete = create("d", config("delete"));
        final PartitionLog compactDelete = create("cd", config("compact,delete"));
        final PartitionLog compact = create("c", config("compact"));
        final long later = clock.time() + RETENTION_MS + 1_000;
        delete.deleteOldSegments(later);
        compactDelete.deleteOldSegments(later);
        assertEquals(0, compact.deleteOldSegments(later));
        assertEquals(List.of(delete, compactDelete), rollsAsked);
        assertEquals(3, compact.segmentCount());
    }

    @Test
    void bySizeOnlyWhenTheActiveSegmentAloneIsOverTheLimitByItsWholeSize() throws IOException
    {
        final PartitionLog none = create("zero", Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.RETENTION_BYTES, "0"));
        final PartitionLog some = create("some", Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "600", LogConfig.RETENTION_BYTES, "100"));
        assertEquals(2, none.deleteOldSegments(clock.time()));
        assertEquals(List.of(none), rollsAsked, "retention.bytes=0: the active segment goes too");
        assertEquals(2, some.deleteOldSegments(clock.time()));
        assertEquals(List.of(none), rollsAsked, "retention.bytes=100 keeps an active segment larger than 100 (as Kafka)");
        assertEquals(1, some.segmentCount());
    }
}
