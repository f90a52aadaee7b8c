package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A retention pass deletes its segments' files one segment per hold of the segments lock, so the writer's roll (which
 * takes that lock) waits for one segment's unlinks, never for a whole pass. Issue 11 saw an acknowledgement wait 2.7 s
 * while retention of a flat-out producer's partition ran; with every file of a pass deleted under one hold of the lock,
 * a roll behind a pass of hundreds of large segments waits for all their unlinks.
 *
 * <p>The pass runs on the test thread; the log's single writer is a thread of its own. After the pass has deleted its
 * first segment (the hook {@link LogRetention#afterSegmentDeleted}, outside the lock), the writer appends until its
 * active segment rolls, and the hook waits for that (bounded) before the pass goes on to the next segment: with the
 * lock held across the pass, the roll cannot happen until the pass ends, and the bound runs out.
 */
class RetentionDeletionLockTest
{
    private static final int SEGMENTS = 8;

    @TempDir
    Path dir;

    @Test
    void theWriterRollsBetweenTwoSegmentDeletionsOfOneRetentionPass() throws Exception
    {
        final ExecutorService writer = Executors.newSingleThreadExecutor(r -> new Thread(r, "the-writer"));
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withRetentionCheckIntervalMs(3_600_000)))
        {
            final PartitionLog log = manager.createLog("retained", 0,
                Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048", LogConfig.RETENTION_BYTES, "2048"));
            writer.submit(() ->
            {
                while (log.segmentCount() < SEGMENTS)
                {
                    append(log, batches, result);
                }
            }).get(60, TimeUnit.SECONDS);

            final AtomicInteger deletions = new AtomicInteger();
            final AtomicReference<String> rollBetweenDeletions = new AtomicReference<>("the hook did not run");
            LogRetention.afterSegmentDeleted = () ->
            {
                if (deletions.incrementAndGet() != 1)
                {
                    return; // once, after the pass's first segment: more of them are still to be deleted
                }
                final long activeBase = activeBase(log);
                final Future<?> roll = writer.submit(() ->
                {
                    while (activeBase(log) == activeBase)
                    {
                        append(log, batches, result);
                    }
                });
                try
                {
                    roll.get(30, TimeUnit.SECONDS);
                    rollBetweenDeletions.set(null);
                }
                catch (final TimeoutException ex)
                {
                    rollBetweenDeletions.set("the writer's roll waited 30 s for the retention pass (it holds the segments lock)");
                }
                catch (final InterruptedException | ExecutionException ex)
                {
                    rollBetweenDeletions.set("the writer failed: " + ex);
                }
            };
            final int deleted;
            try
            {
                deleted = log.deleteOldSegments(System.currentTimeMillis());
            }
            finally
            {
                LogRetention.afterSegmentDeleted = null;
            }
            assertTrue(deleted >= 2, "one pass deletes several segments: " + deleted);
            assertEquals(deleted, deletions.get(), "the hook ran after each deleted segment");
            assertNull(rollBetweenDeletions.get());
            // the roll's wait for the lock ended with the pass at the latest: the writer is done either way
            writer.submit(() -> append(log, batches, result)).get(60, TimeUnit.SECONDS);
        }
        finally
        {
            writer.shutdownNow();
        }
    }

    private static long activeBase(final PartitionLog log)
    {
        final Segment[] segments = log.segments();
        return segments[segments.length - 1].baseOffset;
    }

    /** On the writer thread: one batch, then the high watermark to the log end (the owner's, one node). */
    private static void append(final PartitionLog log, final Batches batches, final AppendResult result)
    {
        batches.records(5, log.logEndOffset(), System.currentTimeMillis());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, () -> "append to " + log + ": " + result);
        log.highWatermark(log.logEndOffset());
    }
}
