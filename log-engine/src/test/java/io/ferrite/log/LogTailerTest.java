package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.SystemEpochClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A tailer follows a log being written, across segment rolls, seeing every batch once and in order, never past its bound. */
class LogTailerTest
{
    @TempDir
    Path dir;

    @Test
    void aTailerFollowsTheWriterAcrossRollsBatchByBatch() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("tail", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
            final int batches = 3_000;
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final Thread writer = new Thread(() ->
            {
                try
                {
                    final Batches b = new Batches();
                    final AppendResult result = new AppendResult();
                    for (int i = 0; i < batches; i++)
                    {
                        b.records(1 + i % 4, i, SystemEpochClock.INSTANCE.time());
                        log.append(b.buffer, 0, b.length, result);
                        assertEquals(AppendResult.OK, result.status);
                    }
                }
                catch (final Throwable t)
                {
                    failure.set(t);
                }
            });
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            assertFalse(tailer.next(Long.MAX_VALUE, batch), "nothing to read yet");
            writer.start();
            final long[] expected = {0};
            final int[] read = {0};
            await(() ->
            {
                while (read[0] < batches && tailer.next(Long.MAX_VALUE, batch))
                {
                    assertEquals(expected[0], batch.baseOffset(), "batch " + read[0] + " follows the one before");
                    assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
                    expected[0] = batch.lastOffset() + 1;
                    read[0]++;
                }
                return read[0] >= batches || failure.get() != null;
            }, Duration.ofSeconds(60), () -> batches + " batches read, " + read[0] + " so far");
            writer.join();
            assertNull(failure.get());
            assertEquals(batches, read[0]);
            assertEquals(log.logEndOffset(), tailer.nextOffset());
            assertTrue(log.segmentCount() > 10, "the tailer crossed segment rolls: " + log.segmentCount());
            assertFalse(tailer.next(Long.MAX_VALUE, batch), "at the end");

            // a bound: a tailer from the middle stops before the batch that reaches it
            final LogTailer bounded = new LogTailer(log, 100);
            final long bound = 200;
            long last = -1;
            while (bounded.next(bound, batch))
            {
                assertTrue(batch.lastOffset() < bound);
                assertTrue(batch.baseOffset() <= 100 || batch.baseOffset() == last + 1);
                last = batch.lastOffset();
            }
            assertTrue(last >= bound - 4 && last < bound, "read up to the bound: " + last);
        }
    }

    /**
     * Retention deletes the segment a tailer is on: once the segment is closed (unmapped) as well —
     * file.delete.delay.ms 0 — the tailer must not touch it, and it goes on at the new log start. The
     * scheduler is stepped by the test: its next step closes the segment.
     */
    @Test
    void aTailerWhoseSegmentRetentionDeletedAndUnmappedGoesOnAtTheNewLogStart() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir), true))
        {
            final PartitionLog log = filled(manager, "0");
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            assertTrue(tailer.next(Long.MAX_VALUE, batch));
            assertEquals(0, batch.baseOffset());
            final Segment first = log.segments()[0];
            final long newStart = log.segments()[3].baseOffset;
            assertEquals(newStart, log.deleteRecordsBefore(newStart));
            assertTrue(first.log.view().capacity() > 0, "mapped until the scheduler's step");
            manager.background().schedulerInvoker().invoke();
            assertEquals(0, first.log.view().capacity(), "the deleted segment is closed and unmapped");
            assertTrue(tailer.next(Long.MAX_VALUE, batch), "the tailer finds its place again");
            assertEquals(newStart, batch.baseOffset());
            assertReadsOnToTheEnd(log, tailer, batch);
        }
    }

    /** Deleted but still mapped (within file.delete.delay.ms): the tailer leaves it for the new log start too. */
    @Test
    void aTailerLeavesASegmentRetentionDeletedForTheNewLogStart() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = filled(manager, "600000");
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            assertTrue(tailer.next(Long.MAX_VALUE, batch));
            final long newStart = log.segments()[2].baseOffset;
            assertEquals(newStart, log.deleteRecordsBefore(newStart));
            assertTrue(tailer.next(Long.MAX_VALUE, batch));
            assertEquals(newStart, batch.baseOffset(), "the batches below the log start are not served");
            assertReadsOnToTheEnd(log, tailer, batch);

            // a tailer on a segment that stays is not moved: retention of the ones before it changes nothing
            final LogTailer later = new LogTailer(log, log.segments()[1].baseOffset + 1);
            assertTrue(later.next(Long.MAX_VALUE, batch));
            final long at = batch.lastOffset() + 1;
            log.deleteRecordsBefore(log.segments()[1].baseOffset);
            assertTrue(later.next(Long.MAX_VALUE, batch));
            assertEquals(at, batch.baseOffset());
        }
    }

    /** Tailing, slow path at every segment boundary included, allocates nothing (as AppendPathTest counts). */
    @Test
    void tailingAllocatesNothing() throws Exception
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("alloc", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "65536"));
            final Batches b = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 20_000; i++)
            {
                b.records(1, i, SystemEpochClock.INSTANCE.time());
                log.append(b.buffer, 0, b.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertTrue(log.segmentCount() > 20, "segments: " + log.segmentCount());
            final RecordBatch batch = new RecordBatch();
            long fewest = Long.MAX_VALUE;
            for (int window = 0; window < 8 && fewest > 0; window++) // the fewest of several windows, as AppendPathTest
            {
                final LogTailer tailer = new LogTailer(log, 0);
                final long before = threads.getCurrentThreadAllocatedBytes();
                int read = 0;
                while (tailer.next(Long.MAX_VALUE, batch))
                {
                    read++;
                }
                fewest = Math.min(fewest, threads.getCurrentThreadAllocatedBytes() - before);
                assertEquals(20_000, read);
            }
            assertEquals(0, fewest, "bytes allocated by tailing 20000 batches");
        }
    }

    /**
     * A tailer across a clean close and a reopen of the same directory: on the closed log it throws
     * {@link LogClosedException} (not a silent false, which reads as "nothing yet"), the batch it
     * wrapped last before the close stays readable after it, and a tailer on the reopened log from
     * the old one's {@code nextOffset} sees every batch appended — those the old one had not reached
     * and those appended after the reopen — once and in order, across rolls on both sides.
     */
    @Test
    void aTailerResumedAfterACloseAndReopenSeesEveryAppendedBatchOnceInOrder() throws Exception
    {
        final Map<String, String> config = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096");
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        final List<Long> appended = new ArrayList<>();
        final List<Long> seen = new ArrayList<>();
        final RecordBatch batch = new RecordBatch();
        final long resumeAt;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("reopen", 0, config);
            appendBatches(log, 60, b, result, appended);
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch held = new RecordBatch();
            for (int i = 0; i < 25; i++)
            {
                assertTrue(tailer.next(Long.MAX_VALUE, held));
                seen.add(held.baseOffset());
            }
            appendBatches(log, 20, b, result, appended);
            assertTrue(log.segmentCount() > 3, "segments: " + log.segmentCount());
            log.close();
            assertThrows(LogClosedException.class, () -> tailer.next(Long.MAX_VALUE, batch), "the tailer of a closed log");
            assertEquals(RecordBatch.OK, held.check(held.sizeInBytes()), "the batch wrapped before the close, read after it");
            assertEquals(seen.get(seen.size() - 1), held.baseOffset());
            resumeAt = tailer.nextOffset();
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("reopen", 0);
            appendBatches(log, 30, b, result, appended);
            final LogTailer tailer = new LogTailer(log, resumeAt);
            while (tailer.next(Long.MAX_VALUE, batch))
            {
                assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
                seen.add(batch.baseOffset());
            }
        }
        assertEquals(appended, seen, "every batch once, in order");
    }

    private static void appendBatches(final PartitionLog log, final int n, final Batches b, final AppendResult result,
        final List<Long> baseOffsets)
    {
        for (int i = 0; i < n; i++)
        {
            b.records(1 + i % 4, baseOffsets.size(), SystemEpochClock.INSTANCE.time());
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status);
            baseOffsets.add(result.firstOffset);
        }
        log.highWatermark(log.logEndOffset());
    }

    /** A log of about ten segments, deleted segments closed after {@code deleteDelayMs}, every offset below the high watermark. */
    private static PartitionLog filled(final LogManager manager, final String deleteDelayMs) throws Exception
    {
        final PartitionLog log = manager.createLog("ret", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2000",
            LogConfig.FILE_DELETE_DELAY_MS, deleteDelayMs));
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        for (int i = 0; i < 100; i++)
        {
            b.records(1 + i % 3, i, SystemEpochClock.INSTANCE.time());
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status);
        }
        assertTrue(log.segmentCount() >= 6, "segments: " + log.segmentCount());
        log.highWatermark(log.logEndOffset());
        return log;
    }

    private static void assertReadsOnToTheEnd(final PartitionLog log, final LogTailer tailer, final RecordBatch batch)
    {
        long expected = batch.lastOffset() + 1;
        while (tailer.next(Long.MAX_VALUE, batch))
        {
            assertEquals(expected, batch.baseOffset());
            assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
            expected = batch.lastOffset() + 1;
        }
        assertEquals(log.logEndOffset(), expected);
    }
}
