package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A roll flushes the segments it sealed in the background, on a thread of its own: a slow fsync (a
 * writer going flat out leaves hundreds of MB for it) holds back neither retention nor the writer's
 * active segment. A review saw a partition reach 211 MB against a {@code retention.bytes} of 20 MB
 * while rolled segments' fsyncs queued in front of retention on one scheduler thread.
 */
class RolledFlushTest
{
    @TempDir
    Path dir;

    @Test
    void retentionRunsWhileARolledSegmentsFsyncIsStillGoing() throws Exception
    {
        final CountDownLatch flushing = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        // the listener is called inside the flush: holding it there is a flush that takes its time
        final DurabilityListener slowDisk = (log, offset) ->
        {
            if (log.topic().equals("slow"))
            {
                flushing.countDown();
                awaitQuietly(release);
            }
        };
        final Map<String, String> small = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withDurabilityListener(slowDisk)
            .withRetentionCheckIntervalMs(20)))
        {
            final PartitionLog slow = manager.createLog("slow", 0, small);
            final PartitionLog kept = manager.createLog("kept", 0,
                Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048", LogConfig.RETENTION_BYTES, "4096"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (slow.segmentCount() < 2)
            {
                append(slow, batches, result);
            }
            assertTrue(flushing.await(60, TimeUnit.SECONDS), "the rolled segment's flush started");
            try
            {
                while (kept.segmentCount() < 8)
                {
                    append(kept, batches, result);
                }
                await(() -> kept.segmentCount() <= 4, Duration.ofSeconds(60), "retention deleted kept's old segments while slow's fsync runs");
                // retention publishes the shorter segment list before it moves the log start (LogRetention): wait for both
                await(() -> kept.logStartOffset() > 0, Duration.ofSeconds(60), "log start moved to the first kept segment");
            }
            finally
            {
                release.countDown();
            }
        }
    }

    @Test
    void aRollsFlushCoversTheSealedSegmentsAndLeavesTheActiveOneToTheNextFlush() throws Exception
    {
        final LogManagerConfig config = LogManagerConfig.of(dir);
        try (LogManager manager = LogManager.open(config))
        {
            final PartitionLog log = manager.createLog("rolled", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 3)
            {
                append(log, batches, result);
            }
            final long activeBase = log.segments()[log.segments().length - 1].baseOffset;
            append(log, batches, result); // into the active segment, past its base
            await(() -> log.recoveryPoint() == activeBase, Duration.ofSeconds(60), "the roll's flush moved the recovery point to the active base");
            assertTrue(log.logEndOffset() > activeBase);
            assertEquals(activeBase, log.durableOffset(), "the active segment's records are not called durable");
            log.flush();
            assertEquals(log.logEndOffset(), log.durableOffset(), "a full flush covers the active segment too");
        }
    }

    private static void append(final PartitionLog log, final Batches batches, final AppendResult result)
    {
        batches.records(5, log.logEndOffset(), System.currentTimeMillis());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, () -> "append to " + log + ": " + result);
        log.highWatermark(log.logEndOffset()); // the owner's on one node: retention deletes nothing above it
    }

    private static void awaitQuietly(final CountDownLatch latch)
    {
        try
        {
            latch.await(30, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
