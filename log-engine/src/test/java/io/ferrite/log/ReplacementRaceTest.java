package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replacements racing the writer (appends and rolls), DeleteRecords (no time or size retention) and a tailer, each
 * on its own thread, on real files: the tailer only ever reads whole batches of their own offset
 * (bytes valid through every swap) and passes over no offset but those the rewriter drops and those
 * below the log start (a replacement never makes it skip kept batches), the log start never moves back, a replacement that lost its run
 * to retention leaves nothing behind, and after the race, and after a reopen, the log holds every
 * offset appended at or above the log start but those the rewriter dropped.
 */
class ReplacementRaceTest
{
    private static final long T0 = 1_700_000_000_000L;
    private static final int MIN_APPENDS = 2_500;
    private static final int MAX_APPENDS = 40_000;
    private static final int MIN_REPLACED = 3;

    @TempDir
    Path dir;

    @Test
    void replacementsRaceTheWriterRetentionAndATailer() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("replacement race seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicBoolean writing = new AtomicBoolean(true);
        // by 1 - answer: REPLACED, RUN_GONE, LOG_CLOSED, BUSY, DAMAGED, FAILED
        final AtomicIntegerArray answers = new AtomicIntegerArray(7);
        final long logStart;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("race", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1024",
                LogConfig.INDEX_INTERVAL_BYTES, "128", LogConfig.RETENTION_MS, "-1",
                LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE), LogConfig.FILE_DELETE_DELAY_MS, "60000"));
            final Thread writer = thread("writer", failure, () ->
            {
                final Batches batches = new Batches();
                final AppendResult result = new AppendResult();
                // at least MIN_APPENDS; then on until some replacements went through, which on a loaded machine
                // retention can keep from happening for a long time (every run gone before its commit)
                for (int i = 0; i < MAX_APPENDS && (i < MIN_APPENDS || answers.get(1) < MIN_REPLACED); i++)
                {
                    final long offset = log.logEndOffset();
                    log.append(batches.records(1, offset, T0 + offset).buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    log.highWatermark(log.logEndOffset());
                }
                writing.set(false);
            });
            final Thread retention = thread("retention", failure, () ->
            {
                final Random random = new Random(seed);
                long lastStart = 0;
                while (writing.get())
                {
                    final long to = Math.min(log.highWatermark(), log.logStartOffset() + random.nextInt(40));
                    final long start = log.deleteRecordsBefore(to);
                    assertTrue(start >= lastStart, "the log start moved back from " + lastStart + " to " + start);
                    lastStart = start;
                    Thread.yield();
                }
            });
            final Thread replacer = thread("replacer", failure, () ->
            {
                final Random random = new Random(seed + 1);
                final BatchRewriter rewriter = batch -> batch.baseOffset() % 3 == 0 ? null : batch;
                while (writing.get())
                {
                    final long[] bases = log.segmentReplacer().inactiveSegmentBases();
                    if (bases.length > 0)
                    {
                        final int from = random.nextInt(bases.length);
                        answers.incrementAndGet(1 - log.segmentReplacer().replace(bases[from],
                            1 + random.nextInt(Math.min(4, bases.length - from)), rewriter));
                    }
                }
            });
            final Thread reader = thread("tailer", failure, () ->
            {
                final LogTailer tailer = new LogTailer(log, 0);
                final RecordBatch batch = new RecordBatch();
                long last = -1;
                while (true)
                {
                    final boolean more = writing.get(); // read before the tailer looks: once false, it sees every batch
                    if (tailer.next(Long.MAX_VALUE, batch))
                    {
                        assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), "batch at " + batch.baseOffset());
                        assertEquals(T0 + batch.baseOffset(), batch.maxTimestamp(), "the batch of its offset");
                        assertTrue(batch.baseOffset() > last, "offsets increase");
                        passedOverOnlyDropped(log, last, batch.baseOffset());
                        last = batch.lastOffset();
                    }
                    else if (!more)
                    {
                        break;
                    }
                }
            });
            // tailers walking the inactive segments the replacements take, again and again from the log start
            final Thread rereader = thread("rereader", failure, () ->
            {
                final RecordBatch batch = new RecordBatch();
                while (writing.get())
                {
                    final LogTailer tailer = new LogTailer(log, log.logStartOffset());
                    long last = tailer.nextOffset() - 1;
                    while (tailer.next(Long.MAX_VALUE, batch))
                    {
                        passedOverOnlyDropped(log, last, batch.baseOffset());
                        last = batch.lastOffset();
                    }
                }
            });
            for (final Thread t : List.of(writer, retention, replacer, reader, rereader))
            {
                t.join();
            }
            assertNull(failure.get(), () -> failure.get().toString());
            System.out.println("replaced " + answers.get(1) + ", run gone " + answers.get(2) + ", appends " + log.logEndOffset());
            assertTrue(answers.get(1) >= MIN_REPLACED, "some replacements went through in " + MAX_APPENDS + " appends");
            assertEquals(0, answers.get(3) + answers.get(4) + answers.get(5) + answers.get(6),
                "no closed log, second replacement, damage or failure");
            logStart = log.logStartOffset();
            check(log, logStart);
        }
        try (Stream<Path> files = Files.list(dir.resolve("race-0")))
        {
            assertEquals(List.of(), files.map(p -> p.getFileName().toString())
                .filter(n -> n.endsWith(".cleaned") || n.endsWith(".swap")).toList());
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("race", 0);
            assertEquals(logStart, log.logStartOffset(), "the log start after a reopen");
            check(log, logStart);
        }
    }

    /**
     * What a tailer passed over between {@code last} and the batch it read at {@code next} is what the rewriter
     * drops or what DeleteRecords took (below the log start read after the batch).
     */
    private static void passedOverOnlyDropped(final PartitionLog log, final long last, final long next)
    {
        final long start = log.logStartOffset();
        for (long o = last + 1; o < next; o++)
        {
            assertTrue(o % 3 == 0 || o < start, "a tailer skipped kept offset " + o + " (log start " + start +
                ", next batch " + next + ")");
        }
    }

    /** Every offset from the log start on is there, but offsets the rewriter drops, which may be gone. */
    private static void check(final PartitionLog log, final long logStart)
    {
        final LogTailer tailer = new LogTailer(log, logStart);
        final RecordBatch batch = new RecordBatch();
        long expected = logStart;
        while (tailer.next(Long.MAX_VALUE, batch))
        {
            for (; expected < batch.baseOffset(); expected++)
            {
                assertEquals(0, expected % 3, "offset " + expected + " is missing, and is not one the rewriter drops");
            }
            assertEquals(T0 + batch.baseOffset(), batch.maxTimestamp());
            expected = batch.lastOffset() + 1;
        }
        assertEquals(log.logEndOffset(), expected);
    }

    private static Thread thread(final String name, final AtomicReference<Throwable> failure, final ThrowingRunnable body)
    {
        final Thread t = new Thread(() ->
        {
            try
            {
                body.run();
            }
            catch (final Throwable ex)
            {
                failure.compareAndSet(null, ex);
            }
        }, name);
        t.start();
        return t;
    }

    @FunctionalInterface
    private interface ThrowingRunnable
    {
        void run() throws Exception;
    }
}
