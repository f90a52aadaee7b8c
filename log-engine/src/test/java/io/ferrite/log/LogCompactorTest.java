package io.ferrite.log;

import io.ferrite.log.clean.CleanStats;
import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompaction;
import io.ferrite.log.clean.LogCompactor;
import io.ferrite.log.clean.OffsetMap;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogCompactor} on real logs: readers at offsets a clean removed go on at the next offset present (a
 * {@link LogTailer} made before the clean and held across it, a new one, {@link PartitionLog#readBatch}); the
 * cleaned segments are grouped up to {@code segment.bytes} of what the clean leaves of them, and a group that leaves
 * more than that is written into several new segments, none above it; the bytes read and written are given to the throttle;
 * and a clean allocates nothing per batch.
 */
class LogCompactorTest
{
    private static final int KEYS = 20;
    private static final long NOW = 1_700_000_000_000L;

    @TempDir
    Path dir;

    private LogManager manager;
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
    private final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
    private final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    /**
     * {@code batches} batches of {@code perBatch} records whose keys cycle through {@value #KEYS} (most are
     * duplicates), the second half timestamped 2 s after the first, then one batch 2 s later: with a
     * {@code segment.ms} of 1 s each half is one segment and the last batch is in the active one.
     */
    private PartitionLog log(final String topic, final int segmentBytes, final long segmentMs, final int batches, final int perBatch)
        throws IOException
    {
        final PartitionLog log = manager().createLog(topic, 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(segmentBytes),
            LogConfig.SEGMENT_MS, Long.toString(segmentMs), LogConfig.CLEANUP_POLICY, "compact",
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
            LogConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS, Long.toString(Long.MAX_VALUE)));
        final AppendResult result = new AppendResult();
        long offset = 0;
        for (int b = 0; b <= batches; b++)
        {
            final long timestamp = NOW + (b == batches ? 4000 : b * 2 / batches * 2000L);
            builder.wrap(buffer, 0).compression(b % 2 == 0 ? CompressionType.NONE : CompressionType.LZ4);
            for (int i = 0; i < (b == batches ? 1 : perBatch); i++, offset++)
            {
                key.putLong(0, offset % KEYS);
                builder.appendRecord(timestamp, key, 0, 8, value, 0, 100);
            }
            log.append(buffer, 0, builder.build(), result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
        log.highWatermark(log.logEndOffset());
        return log;
    }

    /** The test's log manager, without cleaner threads of its own (the test runs every clean itself). */
    private LogManager manager() throws IOException
    {
        if (manager == null)
        {
            final LogManagerConfig config = LogManagerConfig.of(dir);
            manager = LogManager.open(config.withCleaner(config.cleaner().withEnable(false)));
        }
        return manager;
    }

    private static long activeBase(final PartitionLog log)
    {
        final SegmentsView view = new SegmentsView().take(log);
        return view.baseOffset(view.count() - 1);
    }

    private static long cleanAll(final LogCompaction compaction, final PartitionLog log, final CleanStats stats) throws Exception
    {
        final long end = activeBase(log);
        long at = 0;
        while (at < end)
        {
            at = compaction.clean(log, at, end, 86_400_000L, NOW, stats);
            assertTrue(at > 0, "not abandoned");
        }
        return end;
    }

    @Test
    void readersAtARemovedOffsetGoOnAtTheNextOnePresent() throws Exception
    {
        final PartitionLog log = log("readers", 4096, Long.MAX_VALUE, 200, 4);
        final LogTailer held = new LogTailer(log, 0);
        final RecordBatch batch = new RecordBatch();
        assertTrue(held.next(Long.MAX_VALUE, batch));
        final long heldAt = held.nextOffset();
        final List<long[]> before = batches(log);
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final CleanStats stats = new CleanStats();
            final long end = cleanAll(new LogCompactor(map, CleanerThrottle.NONE, 1 << 20), log, stats);
            final List<long[]> after = batches(log);
            assertTrue(after.size() < before.size() / 4, "duplicates removed: " + after.size() + " of " + before.size());
            // the held tailer goes on in the new segments, at the first offset present after where it was
            long expected = -1;
            for (final long[] b : after)
            {
                if (b[1] >= heldAt)
                {
                    expected = b[0];
                    break;
                }
            }
            assertTrue(held.next(Long.MAX_VALUE, batch));
            assertEquals(expected, batch.baseOffset(), "the held tailer's next batch");
            for (int i = 0; i + 1 < after.size() && after.get(i + 1)[0] < end; i++)
            {
                final long removed = after.get(i)[1] + 1;
                if (removed == after.get(i + 1)[0])
                {
                    continue; // no gap here
                }
                assertEquals(PartitionLog.READ_OK, log.readBatch(removed, Long.MAX_VALUE, batch));
                assertEquals(after.get(i + 1)[0], batch.baseOffset(), "readBatch at the removed offset " + removed);
                final LogTailer tailer = new LogTailer(log, removed);
                assertTrue(tailer.next(Long.MAX_VALUE, batch));
                assertEquals(after.get(i + 1)[0], batch.baseOffset(), "a tailer from the removed offset " + removed);
            }
        }
    }

    @Test
    void cleanedSegmentsAreGroupedUpToSegmentBytesAndTheThrottleSeesTheBytes() throws Exception
    {
        final PartitionLog log = log("groups", 8192, Long.MAX_VALUE, 400, 4);
        final int segmentsBefore = log.segmentCount();
        final long[] throttled = {0};
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final CleanStats stats = new CleanStats();
            cleanAll(new LogCompactor(map, bytes -> throttled[0] += bytes, 1 << 20), log, stats);
            assertEquals(segmentsBefore - 1, stats.segmentsReplaced, "every inactive segment cleaned");
            assertEquals(stats.mapBytesRead + stats.producerStateBytesRead + stats.bytesRead + stats.bytesWritten, throttled[0],
                "every byte read and written throttled");
            assertTrue(stats.recordsKept < stats.recordsRead && stats.recordsKept >= KEYS, stats.recordsKept + " of " + stats.recordsRead);
            // groups go by what the clean leaves of each segment (where Kafka's first clean rewrites full segments
            // one by one and its next one merges them): the 20 keys' latest values fit one segment, so the inactive
            // ones become one at once and the active one stays; the next clean keeps that
            assertEquals(2, log.segmentCount(), "segments after the first clean: grouped up to segment.bytes of what it leaves");
            cleanAll(new LogCompactor(map, CleanerThrottle.NONE, 1 << 20), log, stats);
            assertEquals(2, log.segmentCount(), "segments after the second clean");
        }
    }

    /**
     * The grouping's estimate of what a segment keeps is its bytes less its superseded offsets' share; where the
     * superseded records are small and the kept ones large, a group keeps far more than that, and its new segments roll
     * where the writer would: none is above {@code segment.bytes}, every record kept is there.
     */
    @Test
    void aGroupThatKeepsMoreThanItsEstimateIsWrittenIntoSegmentsNoneAboveSegmentBytes() throws Exception
    {
        final int segmentBytes = 8192;
        final PartitionLog log = manager().createLog("outgrown", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES,
            Integer.toString(segmentBytes), LogConfig.SEGMENT_MS, Long.toString(Long.MAX_VALUE), LogConfig.CLEANUP_POLICY, "compact",
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
            LogConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS, Long.toString(Long.MAX_VALUE)));
        final UnsafeBuffer large = new UnsafeBuffer(new byte[1000]);
        final AppendResult result = new AppendResult();
        final List<Long> kept = new ArrayList<>();
        long offset = 0;
        for (int round = 0; round < 40; round++)
        {
            // one 1000-byte record under a key of its own (kept), then 50 8-byte records under 50 keys every round
            // rewrites (all but the last round's superseded): 98% of a segment's offsets go, about half of its bytes stay
            builder.wrap(buffer, 0).compression(CompressionType.NONE);
            key.putLong(0, 1_000_000 + round);
            builder.appendRecord(NOW, key, 0, 8, large, 0, large.capacity());
            log.append(buffer, 0, builder.build(), result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            kept.add(offset++);
            builder.wrap(buffer, 0).compression(CompressionType.NONE);
            for (int k = 0; k < 50; k++, offset++)
            {
                key.putLong(0, k);
                builder.appendRecord(NOW, key, 0, 8, value, 0, 8);
            }
            log.append(buffer, 0, builder.build(), result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
        log.highWatermark(log.logEndOffset());
        final int segmentsBefore = log.segmentCount();
        assertTrue(segmentsBefore > 4, "segments before: " + segmentsBefore);
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final CleanStats stats = new CleanStats();
            final long end = cleanAll(new LogCompactor(map, CleanerThrottle.NONE, 1 << 20), log, stats);
            assertEquals(segmentsBefore - 1, stats.segmentsReplaced, "every inactive segment cleaned");
            final SegmentsView view = new SegmentsView().take(log);
            for (int i = 0; i < view.count() - 1; i++)
            {
                assertTrue(view.sizeInBytes(i) <= segmentBytes, "segment " + view.baseOffset(i) + ": " + view.sizeInBytes(i) + " bytes");
            }
            assertTrue(view.count() < segmentsBefore, "groups of several segments: " + view.count() + " segments of " + segmentsBefore);
            assertTrue(view.count() > 2, "what is kept needs several segments: " + view.count());
            final long[] present = records(log);
            for (final long o : kept)
            {
                if (o < end)
                {
                    assertEquals(1, present[(int)o], "the large record at " + o);
                }
            }
        }
    }

    @Test
    void theProducerStateCopysReadsAreThrottledAndCounted() throws Exception
    {
        final PartitionLog log = log("replay", 1 << 22, 1000, 40, 4);
        // ~1 MiB of idempotent batches in the active segment: what the copy of the producer state replays per clean
        final AppendResult result = new AppendResult();
        long active = 0;
        for (int b = 0; b < 100; b++)
        {
            builder.wrap(buffer, 0).compression(CompressionType.NONE).producer(7 + b % 3, (short)0, b / 3 * 100);
            for (int i = 0; i < 100; i++)
            {
                key.putLong(0, i % KEYS);
                builder.appendRecord(NOW + 4000, key, 0, 8, value, 0, 100);
            }
            final int length = builder.build();
            log.append(buffer, 0, length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            active += length;
        }
        log.highWatermark(log.logEndOffset());
        assertTrue(active > 1 << 20, "active segment bytes: " + active);
        final long[] throttled = {0};
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final CleanStats stats = new CleanStats();
            cleanAll(new LogCompactor(map, bytes -> throttled[0] += bytes, 1 << 20), log, stats);
            assertTrue(stats.segmentsReplaced > 0, "cleaned");
            assertTrue(throttled[0] >= stats.mapBytesRead + stats.bytesRead + stats.bytesWritten + active,
                "the replay of the active segment throttled too: " + throttled[0]);
            assertTrue(stats.producerStateBytesRead >= active, "the replay counted: " + stats.producerStateBytesRead);
            assertEquals(stats.mapBytesRead + stats.producerStateBytesRead + stats.bytesRead + stats.bytesWritten, throttled[0],
                "every byte read and written throttled");
        }
    }

    /**
     * The same bytes in half as many batches, cleaned the same way: what a clean allocates does not grow with the
     * batches (the replacement's files, the producer state's copy and the groups are per clean and per group).
     */
    @Test
    void aCleanAllocatesNothingPerBatch() throws Exception
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final LogCompactor compactor = new LogCompactor(map, CleanerThrottle.NONE, 1 << 20);
            final CleanStats stats = new CleanStats();
            final List<Long> fewer = new ArrayList<>();
            final List<Long> more = new ArrayList<>();
            for (int round = 0; round < 6; round++)
            {
                final PartitionLog a = log("few" + round, 1 << 20, 1000, 100, 8);
                final PartitionLog b = log("many" + round, 1 << 20, 1000, 800, 1);
                assertEquals(3, a.segmentCount());
                assertEquals(3, b.segmentCount());
                long before = threads.getCurrentThreadAllocatedBytes();
                cleanAll(compactor, a, stats);
                fewer.add(threads.getCurrentThreadAllocatedBytes() - before);
                before = threads.getCurrentThreadAllocatedBytes();
                cleanAll(compactor, b, stats);
                more.add(threads.getCurrentThreadAllocatedBytes() - before);
            }
            // the fewest bytes of the rounds (a round holding a JIT tier change does not count); 700 more batches
            final long fewest = fewer.stream().mapToLong(Long::longValue).min().orElseThrow();
            final long most = more.stream().mapToLong(Long::longValue).min().orElseThrow();
            assertTrue(most - fewest < 700, "700 more batches cost " + (most - fewest) + " bytes more (" + fewest + " for 100 batches)");
        }
    }

    @Test
    void aMapThatFillsUpCleansUpToWhereItGotAndTheNextCleanGoesOnFromThere() throws Exception
    {
        final PartitionLog log = log("passes", 4096, Long.MAX_VALUE, 200, 4);
        final long end = activeBase(log);
        final long[] recordsBefore = records(log);
        try (OffsetMap map = new OffsetMap(24 * 8, 0.9)) // 7 keys a pass of the 20
        {
            final LogCompactor compactor = new LogCompactor(map, CleanerThrottle.NONE, 1 << 20);
            final CleanStats stats = new CleanStats();
            final long next = compactor.clean(log, 0, end, 86_400_000L, NOW, stats);
            assertTrue(next > 0 && next < end, "the map filled: cleaned to " + next + " of " + end);
            assertEquals(map.latestOffset() + 1, next);
            final long[] recordsAfter = records(log);
            for (long o = next; o < recordsBefore.length; o++)
            {
                assertEquals(recordsBefore[(int)o], recordsAfter[(int)o], "the record at " + o + ", past the map, is untouched");
            }
            long at = next;
            int passes = 1;
            while (at < end)
            {
                final long further = compactor.clean(log, at, end, 86_400_000L, NOW, stats);
                assertTrue(further > at, "progress from " + at);
                at = further;
                passes++;
            }
            assertTrue(passes > 2, "several passes: " + passes);
            final long[] cleaned = records(log);
            assertEquals(KEYS, countBelow(cleaned, end), "below the cleaned offset, one record per key");
        }
    }

    @Test
    void aCleanerStoppedInItsThrottleLeavesTheLogAsItWasAndCleansLater() throws Exception
    {
        final PartitionLog log = log("stopped", 4096, Long.MAX_VALUE, 200, 4);
        final long end = activeBase(log);
        final List<long[]> before = batches(log);
        final long[] budget = {0};
        final CleanerThrottle stopsOnce = bytes ->
        {
            budget[0] += bytes;
            if (budget[0] > 100_000 && budget[0] - bytes <= 100_000)
            {
                throw new InterruptedException("stopped"); // inside the rewrite of a group: after the map is built
            }
        };
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final LogCompactor compactor = new LogCompactor(map, stopsOnce, 1 << 20);
            final CleanStats stats = new CleanStats();
            org.junit.jupiter.api.Assertions.assertThrows(InterruptedException.class,
                () -> compactor.clean(log, 0, end, 86_400_000L, NOW, stats));
            assertTrue(!Thread.interrupted(), "the interrupt is said by the exception (the abandon's file work ran uninterrupted)");
            assertTrue(stats.segmentsReplaced > 0 && stats.bytesRead > stats.mapBytesRead / 2, "stopped inside the rewrite");
            assertTrue(batches(log).size() < before.size(), "the groups replaced before the stop stay replaced");
            assertNothingLeftAndALaterCleanCompletes(compactor, log, end, stats);
        }
    }

    @Test
    void aCleanerInterruptedOutsideItsThrottleSaysSoWithInterruptedExceptionAndCleansLater() throws Exception
    {
        final PartitionLog log = log("interrupted", 4096, Long.MAX_VALUE, 200, 4);
        final long end = activeBase(log);
        final boolean[] once = {false};
        // a stop that lands between two throttle calls: the thread's interrupt is set and the clean's next file
        // work (the transaction index's read, the replacer's writes) fails on it
        final CleanerThrottle interruptsOnce = bytes ->
        {
            if (!once[0])
            {
                once[0] = true;
                Thread.currentThread().interrupt();
            }
        };
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final LogCompactor compactor = new LogCompactor(map, interruptsOnce, 1 << 20);
            final CleanStats stats = new CleanStats();
            try
            {
                org.junit.jupiter.api.Assertions.assertThrows(InterruptedException.class,
                    () -> compactor.clean(log, 0, end, 86_400_000L, NOW, stats), "a stop, not a failure of the log");
            }
            finally
            {
                Thread.interrupted(); // whatever happened, not this test thread's next test's
            }
            assertTrue(once[0], "interrupted");
            assertNothingLeftAndALaterCleanCompletes(compactor, log, end, stats);
        }
    }

    @Test
    void aFirstUncleanableOffsetAboveTheActiveSegmentIsClampedToItsBase() throws Exception
    {
        final PartitionLog log = log("clamped", 4096, Long.MAX_VALUE, 200, 4);
        final long activeBase = activeBase(log);
        final int segmentsBefore = log.segmentCount();
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final CleanStats stats = new CleanStats();
            final long next = new LogCompactor(map, CleanerThrottle.NONE, 1 << 20).clean(log, 0, log.logEndOffset(),
                86_400_000L, NOW, stats);
            assertEquals(activeBase, next, "cleaned up to the active segment's base, not into it");
            assertEquals(segmentsBefore - 1, stats.segmentsReplaced, "the inactive segments replaced, not the active one");
            assertEquals(activeBase, activeBase(log));
            assertEquals(log.logEndOffset() - activeBase, countBelow(records(log), log.logEndOffset()) -
                countBelow(records(log), activeBase), "the active segment's records all there");
        }
    }

    @Test
    void aValueRewrittenPastTheFirstUncleanableOffsetInAnInactiveSegmentStays() throws Exception
    {
        final LogManagerConfig config = LogManagerConfig.of(dir);
        manager = LogManager.open(config.withCleaner(config.cleaner().withEnable(false)));
        final PartitionLog log = manager.createLog("open-txn", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096",
            LogConfig.CLEANUP_POLICY, "compact", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
            LogConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS, Long.toString(Long.MAX_VALUE)));
        final AppendResult result = new AppendResult();
        // key 0's committed value at 0, other keys, then key 0 again in a transaction left open, then enough plain
        // batches of other keys to roll a few segments: the last stable offset lies inside an inactive segment
        long open = -1;
        for (int b = 0; b < 120; b++)
        {
            final boolean txn = b == 10;
            builder.wrap(buffer, 0).compression(CompressionType.NONE).producer(txn ? 9 : -1, (short)(txn ? 0 : -1), txn ? 0 : -1)
                .transactional(txn);
            key.putLong(0, b == 0 || txn ? 0 : 1 + b % KEYS);
            builder.appendRecord(NOW, key, 0, 8, value, 0, 100);
            log.append(buffer, 0, builder.build(), result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            open = txn ? result.firstOffset : open;
        }
        log.highWatermark(log.logEndOffset());
        assertEquals(open, log.transactions().lastStableOffset());
        final SegmentsView view = new SegmentsView().take(log);
        int segmentOfOpen = 0;
        while (segmentOfOpen + 1 < view.count() && view.baseOffset(segmentOfOpen + 1) <= open)
        {
            segmentOfOpen++;
        }
        assertTrue(segmentOfOpen + 1 < view.count() && view.baseOffset(segmentOfOpen) < open,
            "the open transaction lies inside an inactive segment, not at its base");
        try (OffsetMap map = new OffsetMap(1 << 16, 0.9))
        {
            final long end = Math.min(activeBase(log), log.transactions().lastStableOffset());
            assertEquals(end, new LogCompactor(map, CleanerThrottle.NONE, 1 << 20).clean(log, 0, end, 86_400_000L, NOW,
                new CleanStats()));
            assertEquals(1, records(log)[0], "key 0's committed value at 0 stays: its rewrite at " + open +
                " is past the first uncleanable offset (Kafka 4.4 would remove it)");
        }
    }

    /** After a stopped clean: no replacement's file left, and a clean of the same range completes. */
    private static void assertNothingLeftAndALaterCleanCompletes(final LogCompactor compactor, final PartitionLog log,
        final long end, final CleanStats stats) throws Exception
    {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(log.dir()))
        {
            assertTrue(files.noneMatch(f -> f.toString().endsWith(".cleaned") || f.toString().endsWith(".swap")),
                "the abandoned replacement's files are gone");
        }
        assertEquals(end, compactor.clean(log, 0, end, 86_400_000L, NOW, stats));
        assertEquals(KEYS, countBelow(records(log), end), "below the cleaned offset, one record per key");
    }

    /** Records present at each offset of the log (1 or 0), up to its end. */
    private static long[] records(final PartitionLog log)
    {
        final long[] present = new long[(int)log.logEndOffset()];
        final RecordBatch batch = new RecordBatch();
        final io.ferrite.wire.record.RecordReader reader = new io.ferrite.wire.record.RecordReader();
        long offset = log.logStartOffset();
        while (log.readBatch(offset, Long.MAX_VALUE, batch) == PartitionLog.READ_OK)
        {
            reader.reset(batch);
            while (reader.hasNext())
            {
                present[(int)reader.next().offset()]++;
            }
            offset = batch.lastOffset() + 1;
        }
        return present;
    }

    private static long countBelow(final long[] present, final long end)
    {
        long n = 0;
        for (int o = 0; o < end; o++)
        {
            n += present[o];
        }
        return n;
    }

    /** {base, last} of every batch of the log. */
    private static List<long[]> batches(final PartitionLog log)
    {
        final List<long[]> all = new ArrayList<>();
        final RecordBatch batch = new RecordBatch();
        long offset = log.logStartOffset();
        while (log.readBatch(offset, Long.MAX_VALUE, batch) == PartitionLog.READ_OK)
        {
            all.add(new long[] {batch.baseOffset(), batch.lastOffset()});
            offset = batch.lastOffset() + 1;
        }
        return all;
    }
}
