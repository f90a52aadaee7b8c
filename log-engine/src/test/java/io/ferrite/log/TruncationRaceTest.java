package io.ferrite.log;

import io.ferrite.log.epoch.LeaderEpochCheckpoint;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A truncation beside retention and DeleteRecords, a kill before its log-start checkpoint, a no-op's epoch trim and the
 * cleaner checkpoint after it ({@link LogTruncation}).
 */
class TruncationRaceTest extends OrdersLogFixture
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    private void append(final PartitionLog log, final int batchCount)
    {
        for (int i = 0; i < batchCount; i++)
        {
            batches.records(3, log.logEndOffset(), clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
    }

    /** Runs {@code call} on a new thread and waits until it has finished or waits (for the segments lock). */
    private static Thread runUntilDoneOrWaiting(final String name, final Runnable call)
    {
        final Thread t = new Thread(call, name);
        t.start();
        await(() -> t.getState() == Thread.State.TERMINATED || t.getState() == Thread.State.WAITING, DEADLINE,
            name + " done or waiting");
        return t;
    }

    @Test
    void deleteRecordsBesideATruncationWaitsForItAndFindsTheNewEnd() throws Exception
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30); // 0..89
            log.highWatermark(90);
            final Segment[] segs = log.segments();
            assertTrue(segs.length > 4, "several segments: " + segs.length);
            assertTrue(segs[4].baseOffset - segs[3].baseOffset > 3, "segment 3 holds more than one batch");
            final long target = segs[3].baseOffset + 3; // a batch boundary inside segment 3: a prefix is written
            final long newStart = segs[1].baseOffset;
            final AtomicLong below = new AtomicLong(Long.MIN_VALUE);
            final AtomicLong above = new AtomicLong(Long.MIN_VALUE);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread[] threads = new Thread[2];
            log.truncation().prefixWritten = () ->
            {
                // the prefix of segment 3 is written, its swap not made: DeleteRecords below it, and above the target
                // (still under the high watermark the truncation has not lowered yet)
                threads[0] = runUntilDoneOrWaiting("delete-below", () -> call(() -> below.set(log.deleteRecordsBefore(newStart)), failure));
                threads[1] = runUntilDoneOrWaiting("delete-above", () -> call(() -> above.set(log.deleteRecordsBefore(target + 6)), failure));
            };
            assertTrue(log.truncateTo(target));
            log.truncation().prefixWritten = () -> { };
            for (final Thread t : threads)
            {
                t.join(DEADLINE.toMillis());
                assertFalse(t.isAlive(), t.getName());
            }
            assertNull(failure.get());
            assertEquals(newStart, below.get(), "DeleteRecords below the target: done, after the truncation");
            assertEquals(-1, above.get(), "DeleteRecords above the new log end: out of range (Kafka's OFFSET_OUT_OF_RANGE)");
            assertEquals(target, log.logEndOffset());
            assertEquals(newStart, log.logStartOffset());
            final Segment[] after = log.segments();
            for (int i = 1; i < after.length; i++)
            {
                assertTrue(after[i - 1].baseOffset < after[i].baseOffset, "bases strictly increasing at " + i);
                assertFalse(after[i - 1].isRetired(), "a retired segment in the list");
            }
            assertEquals(target, after[after.length - 1].baseOffset, "the new active segment at the target");
            assertEquals(target, lastOffsetPlusOne(log), "no batch above the target");
        }
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(target(log), log.logEndOffset());
            assertEquals(log.logEndOffset(), lastOffsetPlusOne(log), "reopened: the batches end at the log end");
        }
    }

    private static long target(final PartitionLog log)
    {
        return log.segments()[log.segmentCount() - 1].baseOffset;
    }

    private static long lastOffsetPlusOne(final PartitionLog log)
    {
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        long next = log.logStartOffset();
        while (log.readBatch(next, Long.MAX_VALUE, batch) != PartitionLog.NO_BATCH)
        {
            next = batch.lastOffset() + 1;
        }
        return next;
    }

    private interface IoCall
    {
        void run() throws IOException;
    }

    private static void call(final IoCall call, final AtomicReference<Throwable> failure)
    {
        try
        {
            call.run();
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
    }

    @Test
    void aKillBeforeTheLogStartCheckpointAfterAFullTruncationReopensWithTheStartAtTheEnd() throws IOException
    {
        final Path starts = dir.resolve(OffsetCheckpoint.LOG_START_OFFSETS);
        final Path saved = dir.resolve("saved-log-starts");
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30); // 0..89
            log.highWatermark(90);
            assertEquals(60, log.deleteRecordsBefore(60));
            manager.checkpoint();
            assertEquals(60, OffsetCheckpoint.read(starts).get("orders-0"));
            Files.copy(starts, saved);
            assertTrue(log.truncateTo(30), "below the log start: a full truncation");
            assertEquals(30, log.logStartOffset());
            assertEquals(30, log.logEndOffset());
        }
        // as a SIGKILL after the segments' renames and before the log-start checkpoint's write: the old checkpoint
        Files.move(saved, starts, StandardCopyOption.REPLACE_EXISTING);
        uncleanStop();
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(30, log.logEndOffset());
            assertEquals(30, log.logStartOffset(), "the log start never above the log end");
            append(log, 1);
            assertEquals(33, log.logEndOffset());
            assertEquals(30, log.logStartOffset());
        }
    }

    @Test
    void aNoOpTruncationTrimsAnEpochAssignedAtTheLogEndWithNothingUnderIt() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            log.leaderEpoch(3);
            append(log, 4); // 0..11 under epoch 3
            log.leaderEpoch(5); // (5, 12): no batch under it, as a leader that failed to append
            log.flush();
            assertArrayEquals(new long[][] {{3, 0}, {5, 12}}, log.leaderEpochCache().snapshot());
            assertFalse(log.truncateTo(12), "at the log end: nothing removed");
            assertArrayEquals(new long[][] {{3, 0}}, log.leaderEpochCache().snapshot(), "the epoch with no batch goes, as Kafka 4.4's");
            assertEquals("0\n1\n3 0\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)), "the file at once");
        }
    }

    @Test
    void theCleanerCheckpointGoesDownToTheNewActiveSegment() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(CleanerConfig.defaults().withEnable(false)), true))
        {
            final PartitionLog log = manager.createLog("orders", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
                LogConfig.CLEANUP_POLICY, "compact"));
            append(log, 30); // 0..89
            log.highWatermark(90);
            final CleanerManager cleaner = manager.cleaner().manager();
            final CleanerManager.LogToClean ltc = cleaner.grabFilthiest(clock.time());
            final Segment[] segs = log.segments();
            final long cleanTo = segs[segs.length - 2].baseOffset;
            assertNotNull(ltc, "the compacted log is chosen for a clean");
            cleaner.doneCleaning(ltc, cleanTo); // as a clean up to the last inactive segment
            assertEquals(cleanTo, cleaner.checkpoint(log));
            final long target = segs[1].baseOffset;
            assertTrue(log.truncateTo(target));
            assertEquals(target, cleaner.checkpoint(log), "lowered to the new active segment's base, as Kafka's");
            assertEquals(target, OffsetCheckpoint.read(dir.resolve(CleanerCheckpoints.FILE)).get("orders-0"), "and written");
        }
    }

    @Test
    void aNoOpTruncationLeavesAClean() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withCleaner(CleanerConfig.defaults().withEnable(false)), true))
        {
            final PartitionLog log = manager.createLog("orders", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
                LogConfig.CLEANUP_POLICY, "compact"));
            append(log, 30);
            log.highWatermark(90);
            final CleanerManager cleaner = manager.cleaner().manager();
            final CleanerManager.LogToClean ltc = cleaner.grabFilthiest(clock.time());
            assertNotNull(ltc, "a clean of the log in progress");
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            // a stand-in for the cleaner thread: it lets go of the log once told to stop (else the truncation waits forever)
            final java.util.concurrent.atomic.AtomicBoolean truncated = new java.util.concurrent.atomic.AtomicBoolean();
            final Thread cleanerThread = new Thread(() ->
            {
                await(() -> truncated.get() || ltc.aborted().get(), DEADLINE, "the truncation's end or the clean's abort");
                if (ltc.aborted().get())
                {
                    call(() -> cleaner.doneCleaning(ltc, ltc.firstDirtyOffset()), failure);
                }
            }, "cleaner-stand-in");
            cleanerThread.start();
            assertFalse(log.truncateTo(log.logEndOffset()), "at the log end: nothing removed");
            truncated.set(true);
            cleanerThread.join(DEADLINE.toMillis());
            assertFalse(cleanerThread.isAlive());
            assertNull(failure.get());
            assertFalse(ltc.aborted().get(), "the clean was not told to stop");
            cleaner.doneCleaning(ltc, ltc.firstDirtyOffset());
        }
    }

    @Test
    void aFailedEpochFileWriteAfterTheCutStillMovesTheRecoveryPointOnDisk() throws IOException
    {
        final Path points = dir.resolve(OffsetCheckpoint.RECOVERY_POINTS);
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            log.leaderEpoch(0);
            append(log, 15); // 0..44
            log.leaderEpoch(2);
            append(log, 15); // 45..89
            log.highWatermark(90);
            log.flush();
            manager.checkpoint();
            assertEquals(90, OffsetCheckpoint.read(points).get("orders-0"));
            // the epoch file cannot be replaced now: the truncation's write of it fails after the cut
            final Path epochs = partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME);
            Files.delete(epochs);
            Files.createDirectories(epochs.resolve("in-the-way"));
            org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> log.truncateTo(30)); // (2, 45) goes: the file changes
            assertEquals(30, log.logEndOffset(), "cut");
            assertTrue(OffsetCheckpoint.read(points).get("orders-0") <= 30, "the recovery point on disk follows the cut");
            Files.delete(epochs.resolve("in-the-way"));
            Files.delete(epochs);
        }
    }
}
