package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.SystemEpochClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
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
            long expected = 0;
            int read = 0;
            final long deadline = System.currentTimeMillis() + 60_000;
            while (read < batches && System.currentTimeMillis() < deadline)
            {
                if (tailer.next(Long.MAX_VALUE, batch))
                {
                    assertEquals(expected, batch.baseOffset(), "batch " + read + " follows the one before");
                    assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
                    expected = batch.lastOffset() + 1;
                    read++;
                }
            }
            writer.join();
            assertNull(failure.get());
            assertEquals(batches, read);
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
}
