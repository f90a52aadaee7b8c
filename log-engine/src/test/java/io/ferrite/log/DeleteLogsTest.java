package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogManager#deleteLogs}: a name is free for a new log the moment its deletion returns, as in
 * Kafka 4.4 — the old directory renamed to {@code <topic>-<partition>.<uuid>-delete} at once and removed
 * after {@code file.delete.delay.ms} — and nothing the old log still does afterwards (its writer's
 * appends and rolls, retention, the delayed close of its segments) reaches a file of the new log,
 * which has the old directory's path. A restart between the rename and the removal removes the
 * leftovers and loads the new log as it was. A topic's partitions go as one batch.
 *
 * <p>The scheduler is stepped by the test ({@code AgentInvoker}) with a clock of the test's, so the
 * delayed closes and the removal run exactly when the test says.
 */
class DeleteLogsTest
{
    private static final Map<String, String> SMALL_SEGMENTS = Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000",
        LogConfig.INTERNAL_SEGMENT_BYTES, "4096");

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();

    @Test
    void theNameIsFreeAtOnceAndTheDelayedCloseOfTheOldLogLeavesTheNewLogsFilesAlone() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog old = manager.createLog("t", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            appendUntil(old, 12_000, clock); // index entries in the old active segment, whose close trims its indexes
            assertTrue(old.segments()[0].offsetIndex.entries() > 0, "the old active segment has index entries");

            manager.deleteLog("t", 0);
            final PartitionLog fresh = manager.createLog("t", 0, Map.of());
            assertTrue(fresh != old && manager.log("t", 0) == fresh, "the name is the new log's");
            assertEquals(1, deleted(dir, "t-0").size(), "the old directory renamed to <topic>-<partition>.<uuid>-delete");
            appendUntil(fresh, 6_000, clock);
            final Path index = dir.resolve("t-0").resolve(Segment.fileName(0, Segment.INDEX_SUFFIX));
            final long indexBytes = Files.size(index);
            final Set<String> files = names(dir.resolve("t-0"));

            clock.advance(5_000);
            scheduler.invoke(); // the old segments closed and unmapped, the renamed directory removed

            assertEquals(indexBytes, Files.size(index), "the old log's delayed close cut the new log's offset index");
            assertEquals(files, names(dir.resolve("t-0")), "the new log's files");
            assertEquals(List.of(), deleted(dir, "t-0"), "the renamed directory removed after the delay");
            assertEquals(0, manager.background().schedulerErrors().count());
            final long end = fresh.logEndOffset();
            appendUntil(fresh, 20_000, clock);
            assertTrue(fresh.logEndOffset() > end, "the new log takes appends through its index");
        }
    }

    /**
     * The old log's writer may still hold it after the deletion (a log thread with appends queued):
     * whatever it does then — appends that would roll, a claim, retention, DeleteRecords — makes no
     * file in the new log's directory (which has the old one's path) and deletes none there.
     */
    @Test
    void whatTheOldLogsWriterDoesAfterTheDeleteMakesNoFileInTheNewDirectory() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final PartitionLog old = manager.createLog("t", 0, SMALL_SEGMENTS);
            while (old.segmentCount() < 3)
            {
                append(old, 10, clock);
            }
            old.highWatermark(old.logEndOffset());
            manager.deleteLog("t", 0);
            final Path renamed = deleted(dir, "t-0").get(0);
            assertEquals(renamed, old.dir(), "the old log knows its renamed directory");
            final Set<String> renamedFiles = names(renamed);
            final PartitionLog fresh = manager.createLog("t", 0, SMALL_SEGMENTS);
            append(fresh, 10, clock);
            final Set<String> files = names(dir.resolve("t-0"));

            for (int i = 0; i < 20; i++) // 20 batches of about 700 bytes: several rolls into 4096-byte segments, if taken
            {
                batches.records(10, old.logEndOffset(), clock.time());
                old.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.LOG_CLOSED, result.status, "append " + i + " to the deleted log");
            }
            assertFalse(old.claim(1024, new BatchClaim(), result), "a claim on the deleted log");
            assertEquals(0, old.deleteOldSegments(clock.time() + 365L * 24 * 3600 * 1000), "retention of the deleted log");
            assertThrows(LogClosedException.class, () -> old.deleteRecordsBefore(old.logEndOffset()), "DeleteRecords on the deleted log");

            assertEquals(files, names(dir.resolve("t-0")), "the new log's directory");
            assertEquals(renamedFiles, names(renamed), "the renamed directory");
            assertEquals(10, fresh.logEndOffset());
        }
    }

    /**
     * A flush queued before the deletion and run after it (the rolled-segment flusher, the group
     * committer) writes no file: not the leader-epoch checkpoint of an epoch the log took since its
     * last flush, which landed in the renamed directory, or failed its rename when the directory moved
     * between writing the temporary file and renaming it (a test failure in CI before the fix).
     */
    @Test
    void aFlushAfterTheDeleteWritesNoCheckpointIntoTheRenamedDirectory() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final PartitionLog old = manager.createLog("t", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            old.leaderEpoch(7);
            append(old, 10, clock); // epoch 7 from offset 0: in memory, its checkpoint not written (no flush asked)
            assertFalse(Files.exists(old.dir().resolve(io.ferrite.log.epoch.LeaderEpochCheckpoint.FILE_NAME)), "no checkpoint yet");
            manager.deleteLog("t", 0);
            final Path renamed = deleted(dir, "t-0").get(0);
            final Set<String> renamedFiles = names(renamed);

            old.flushQuietly(true);
            old.flushQuietly(false);

            assertEquals(renamedFiles, names(renamed), "the renamed directory");
            assertFalse(Files.exists(dir.resolve("t-0")), "no directory of the old name");
        }
    }

    /**
     * The same with a writer thread appending as fast as it can into small segments (rolling every few
     * batches, a producer snapshot at each roll) while the log is deleted and made again: once it has
     * been told LOG_CLOSED, the new directory holds the new log's files and nothing else.
     */
    @Test
    void aWriterRollingAsTheLogIsDeletedLeavesNothingInTheNewDirectory() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final PartitionLog old = manager.createLog("t", 0, SMALL_SEGMENTS);
            final AtomicInteger appended = new AtomicInteger();
            final AtomicBoolean refused = new AtomicBoolean();
            final Thread writer = new Thread(() ->
            {
                final Batches own = new Batches();
                final AppendResult r = new AppendResult();
                while (true)
                {
                    own.records(10, old.logEndOffset(), clock.time());
                    old.append(own.buffer, 0, own.length, r);
                    if (r.status == AppendResult.LOG_CLOSED)
                    {
                        refused.set(true);
                        return;
                    }
                    appended.incrementAndGet();
                }
            }, "old-log-writer");
            writer.start();
            io.ferrite.testing.Await.await(() -> old.segmentCount() >= 3, java.time.Duration.ofSeconds(20), "the writer rolling");
            manager.deleteLog("t", 0);
            final PartitionLog fresh = manager.createLog("t", 0, SMALL_SEGMENTS);
            writer.join(20_000);
            assertTrue(refused.get(), "the writer was told LOG_CLOSED");
            // a new log's indexes are made at their first entry (IndexFile): its log file and overrides only
            assertEquals(Set.of(Segment.fileName(0, Segment.LOG_SUFFIX), PartitionOverrides.PARTITION_CONFIG_FILE), names(fresh.dir()),
                "the new directory after " + appended.get() + " appends to the old log");
            assertEquals(0, fresh.logEndOffset());
        }
    }

    /**
     * A stop (or a crash) after the rename and before the removal: the next open removes the
     * {@code -delete} directory, never loads it, and the new log of the same name comes back as it
     * was — also after an unclean stop with the checkpoints as the deletion left them (the old log's
     * log start offset is not in them, so the new log does not take it).
     */
    @Test
    void aRestartBetweenTheRenameAndTheRemovalRemovesTheLeftoversAndLoadsTheNewLogIntact() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        final Path checkpoints = Files.createDirectory(dir.resolve("saved"));
        final Path data = dir.resolve("data");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data).withClock(clock), true))
        {
            oldLogCheckpointed(manager, clock); // the old log's log start offset and recovery point on disk

            manager.deleteLog("t", 0);
            final PartitionLog fresh = manager.createLog("t", 0, Map.of());
            append(fresh, 3, clock);
            for (final String name : List.of(OffsetCheckpoint.RECOVERY_POINTS, OffsetCheckpoint.LOG_START_OFFSETS))
            {
                Files.copy(data.resolve(name), checkpoints.resolve(name)); // as a crash now would leave them
            }
        } // the delay has not passed: the renamed directory stays
        assertEquals(1, deleted(data, "t-0").size(), "the renamed directory left by the stop");

        for (final boolean clean : new boolean[] {true, false})
        {
            if (!clean)
            {
                Files.deleteIfExists(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
                for (final String name : List.of(OffsetCheckpoint.RECOVERY_POINTS, OffsetCheckpoint.LOG_START_OFFSETS))
                {
                    Files.copy(checkpoints.resolve(name), data.resolve(name), StandardCopyOption.REPLACE_EXISTING);
                }
                Files.createDirectory(data.resolve("t-0.0123456789abcdef0123456789abcdef-delete")); // as a crash could leave one
            }
            try (LogManager manager = LogManager.open(LogManagerConfig.of(data).withClock(clock)))
            {
                assertEquals(List.of(), deleted(data, "t-0"), "leftovers removed by the open (" + (clean ? "clean" : "unclean") + ")");
                assertEquals(1, manager.logs().size(), "no partition loaded from a leftover");
                final PartitionLog log = manager.log("t", 0);
                assertNotNull(log);
                assertEquals(0, log.logStartOffset(), "the new log's start, not the old one's");
                assertEquals(3, log.logEndOffset(), "the new log's records");
            }
        }
    }

    /**
     * A deletion stopped by a crash between its rename and its checkpoint write leaves the old log's
     * entries in the checkpoints. The next open removes the renamed directory and drops those entries
     * before anything can make a log of that name: else a same-name log made then, after one more
     * crash, would take the old log's start offset (above its own end) and hide its records.
     */
    @Test
    void aStartDropsTheCheckpointEntriesOfALogWhoseDeletionACrashCutShort() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        final Path saved = Files.createDirectory(dir.resolve("saved"));
        final Path data = dir.resolve("data");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data).withClock(clock), true))
        {
            oldLogCheckpointed(manager, clock);
            for (final String name : List.of(OffsetCheckpoint.RECOVERY_POINTS, OffsetCheckpoint.LOG_START_OFFSETS))
            {
                Files.copy(data.resolve(name), saved.resolve(name)); // with the old log's entries
            }
        }
        // what the crash left: the directory renamed, the checkpoints not yet written without it
        Files.move(data.resolve("t-0"), data.resolve("t-0.0123456789abcdef0123456789abcdef-delete"));
        for (final String name : List.of(OffsetCheckpoint.RECOVERY_POINTS, OffsetCheckpoint.LOG_START_OFFSETS))
        {
            Files.copy(saved.resolve(name), data.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
        Files.deleteIfExists(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        final Path crashed = dir.resolve("crashed");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data).withClock(clock), true))
        {
            final PartitionLog fresh = manager.createLog("t", 0, Map.of());
            append(fresh, 3, clock);
            OpenFilesTest.copy(data, crashed); // the files as a SIGKILL now would leave them (no checkpoint written since the open)
        }
        Files.deleteIfExists(crashed.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(crashed).withClock(clock)))
        {
            final PartitionLog log = manager.log("t", 0);
            assertEquals(0, log.logStartOffset(), "the new log's start, not the old one's");
            assertEquals(3, log.logEndOffset(), "the new log's records");
        }
    }

    /** A topic's deletion: every partition goes in one batch, over every log directory, and nothing else does. */
    @Test
    void aTopicsPartitionsGoAsOneBatchFromEveryLogDirectory() throws Exception
    {
        final Path a = dir.resolve("a");
        final Path b = dir.resolve("b");
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(List.of(a, b), Map.of()).withClock(clock), true))
        {
            manager.createLogs("kept", 0, 2, Map.of());
            final PartitionLog[] doomed = manager.createLogs("gone", 0, 6, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            for (final PartitionLog log : doomed)
            {
                append(log, 2, clock);
            }

            assertThrows(IllegalArgumentException.class, () -> manager.deleteLogs("gone", 4, 7), "partition 6 does not exist");
            assertEquals(8, manager.logs().size(), "a batch naming a missing partition deletes nothing");

            manager.deleteLogs("gone", 0, 6);

            for (int p = 0; p < 6; p++)
            {
                assertNull(manager.log("gone", p), "partition " + p);
                assertTrue(doomed[p].isClosed(), "partition " + p + " closed");
                assertTrue(doomed[p].dir().getFileName().toString().matches("gone-" + p + "\\.[0-9a-f]{32}-delete"), doomed[p].dir().toString());
            }
            assertEquals(3, deleted(a, "gone-").size(), "renamed in their own log directory");
            assertEquals(3, deleted(b, "gone-").size(), "renamed in their own log directory");
            assertEquals(2, manager.logs().size());
            assertEquals(2, manager.background().logs().length, "the log array rebuilt without them");
            assertNotNull(manager.log("kept", 0));
            assertEquals(6, manager.createLogs("gone", 0, 6, Map.of()).length, "the names free again");

            clock.advance(5_000);
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            while (manager.background().scheduler().waitingCloses() > 0)
            {
                scheduler.invoke();
            }
            assertEquals(List.of(), deleted(a, "gone-"));
            assertEquals(List.of(), deleted(b, "gone-"));
        }
    }

    private void append(final PartitionLog log, final int records, final MutableClock clock)
    {
        batches.records(records, log.logEndOffset(), clock.time());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.message);
    }

    private void appendUntil(final PartitionLog log, final long bytes, final MutableClock clock)
    {
        while (log.sizeInBytes() < bytes)
        {
            append(log, 10, clock);
        }
    }

    /** The directories in {@code logDir} named {@code <prefix>...-delete}. */
    /** Log t-0 of three segments with its log start moved up to the second, checkpointed. */
    private void oldLogCheckpointed(final LogManager manager, final MutableClock clock) throws Exception
    {
        final PartitionLog old = manager.createLog("t", 0, SMALL_SEGMENTS);
        while (old.segmentCount() < 3)
        {
            append(old, 10, clock);
        }
        old.highWatermark(old.logEndOffset());
        assertTrue(old.deleteRecordsBefore(old.segments()[1].baseOffset) > 0);
        manager.checkpoint();
    }

    private static List<Path> deleted(final Path logDir, final String prefix) throws Exception
    {
        try (Stream<Path> children = Files.list(logDir))
        {
            return children.filter(p -> p.getFileName().toString().startsWith(prefix) && p.getFileName().toString().endsWith("-delete"))
                .sorted().collect(Collectors.toList());
        }
    }

    private static Set<String> names(final Path directory) throws Exception
    {
        try (Stream<Path> files = Files.list(directory))
        {
            return files.map(p -> p.getFileName().toString()).collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /**
     * A topic name of 249 characters (the longest Kafka allows) deletes like any other: its renamed
     * directory is cut to the file system's 255 bytes, as Kafka cuts it (before, the rename failed
     * with "File name too long", the name stayed taken and the next start failed on it).
     */
    @Test
    void aTopicWithTheLongestNameIsDeletedAndItsNameFreeAgain() throws Exception
    {
        final String topic = "t".repeat(249);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog[] old = manager.createLogs(topic, 0, 2, Map.of());
            manager.deleteLogs(topic, 0, 2);
            // DeleteRecords that found the log before: the topic's error, not a moved start (was: the start moved)
            assertThrows(LogClosedException.class, () -> old[0].deleteRecordsBefore(0));
            assertEquals(0, manager.logs().size());
            try (java.util.stream.Stream<Path> left = Files.list(dir))
            {
                final List<Path> renamed = left.filter(p -> p.getFileName().toString().endsWith("-delete")).toList();
                assertEquals(2, renamed.size(), "both partitions renamed: " + renamed);
                for (final Path p : renamed)
                {
                    assertTrue(p.getFileName().toString().length() <= 255, p.toString());
                }
            }
            assertEquals(2, manager.createLogs(topic, 0, 2, Map.of()).length, "the name is free again");
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            assertEquals(2, manager.logs().size(), "after a restart: the new partitions, the renamed ones removed");
        }
    }
}
