package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SegmentReplacer} on real files: a run of inactive segments replaced by what a rewriter keeps,
 * reads across the replacement (gaps where batches were dropped, a tailer and an in-place batch held
 * while the segments were swapped), the transaction index carried over, and replacements abandoned
 * when retention, DeleteRecords or a close came first.
 */
class SegmentReplacerTest extends ManagerFixture
{
    private static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
        LogConfig.INDEX_INTERVAL_BYTES, "256", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    /** Each batch appended, by base offset: its bytes as written. */
    private final TreeMap<Long, byte[]> written = new TreeMap<>();

    private PartitionLog filledLog(final int batches) throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir));
        final PartitionLog log = manager.createLog("swap", 0, SMALL);
        append(log, batches);
        return log;
    }

    private void append(final PartitionLog log, final int batches)
    {
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        for (int i = 0; i < batches; i++)
        {
            b.records(1 + i % 3, written.size(), 1_700_000_000_000L + written.size());
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            written.put(result.firstOffset, b.bytes());
        }
    }

    /** Closes the manager (a clean stop) and opens the directory again; the log as loaded. */
    private PartitionLog reopen() throws IOException
    {
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir));
        return manager.log("swap", 0);
    }

    private static BatchRewriter dropping(final LongPredicate dropped)
    {
        return batch -> dropped.test(batch.baseOffset()) ? null : batch;
    }

    private static byte[] bytes(final RecordBatch batch)
    {
        final byte[] b = new byte[batch.sizeInBytes()];
        batch.buffer().getBytes(batch.offset(), b);
        return b;
    }

    /** Every batch the tailer reads from 0: the ones written and not dropped, byte for byte, and nothing else. */
    private void assertReads(final PartitionLog log, final LongPredicate dropped)
    {
        assertReads(log, 0, dropped);
    }

    private void assertReads(final PartitionLog log, final long from, final LongPredicate dropped)
    {
        final LogTailer tailer = new LogTailer(log, from);
        final RecordBatch batch = new RecordBatch();
        final List<Long> expected = new ArrayList<>();
        written.keySet().stream().filter(o -> o >= from && !dropped.test(o)).forEach(expected::add);
        final List<Long> read = new ArrayList<>();
        while (tailer.next(Long.MAX_VALUE, batch))
        {
            read.add(batch.baseOffset());
            assertArrayEquals(written.get(batch.baseOffset()), bytes(batch), "batch " + batch.baseOffset());
        }
        assertEquals(expected, read);
    }

    private List<String> leftovers() throws IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve("swap-0")))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".cleaned") || n.endsWith(".swap")).toList();
        }
    }

    @Test
    void keepingEveryBatchMergesTheRunAndChangesNoRead() throws Exception
    {
        final PartitionLog log = filledLog(200);
        final int before = log.segmentCount();
        assertTrue(before > 8, "segments: " + before);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        assertEquals(before - 1, bases.length);
        final Segment[] old = log.segments();
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[1], 4, batch -> batch));
        // full segments: the new ones roll where the writer rolled
        assertArrayEquals(bases, log.segmentReplacer().inactiveSegmentBases());
        for (int i = 1; i <= 4; i++)
        {
            assertTrue(old[i].isRetired() && log.segments()[i] != old[i] && log.segments()[i].size() == old[i].size());
        }
        assertReads(log, o -> false);
        assertEquals(List.of(), leftovers());
        assertReads(reopen(), o -> false);
    }

    @Test
    void droppedBatchesLeaveGapsThatReadsGoOnPast() throws Exception
    {
        final PartitionLog log = filledLog(150);
        final LongPredicate dropped = o -> o < written.lastKey() - 60 && (o % 5 == 0 || o % 7 == 0);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], bases.length, dropping(dropped)));
        assertTrue(log.segmentCount() < bases.length + 1, "what is kept of the run fills fewer segments: " + log.segmentCount());
        assertReads(log, dropped);
        // readBatch and a fetch at a dropped offset answer the next batch present, as Kafka's reads do
        final long gap = written.keySet().stream().filter(dropped::test).findFirst().orElseThrow();
        final long next = written.keySet().stream().filter(o -> o > gap && !dropped.test(o)).findFirst().orElseThrow();
        final RecordBatch batch = new RecordBatch();
        assertEquals(PartitionLog.READ_OK, log.readBatch(gap, Long.MAX_VALUE, batch));
        assertEquals(next, batch.baseOffset());
        final FileRegion region = new FileRegion();
        assertEquals(PartitionLog.READ_OK, log.read(gap, 1 << 20, Long.MAX_VALUE, true, region));
        assertEquals(next, region.firstBatchOffset);
        assertTrue(region.nextOffset > next && region.length > 0, region.toString());
        // and recovery scanning the cleaned segments (an unclean stop, recovery point 0) keeps the batches after a gap
        manager.close();
        Files.delete(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        Files.delete(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS)); // every segment scanned
        manager = LogManager.open(LogManagerConfig.of(dir));
        assertReads(manager.log("swap", 0), dropped);
    }

    @Test
    void aRunWhoseLastSegmentIsAllDroppedIsCoveredByAnEmptySegmentAtItsBase() throws Exception
    {
        final PartitionLog log = filledLog(150);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final long lastBase = bases[2];
        final long end = bases[3];
        final LongPredicate dropped = o -> o >= lastBase && o < end || o == bases[0] + 1;
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 3, dropping(dropped)));
        final Segment[] segs = log.segments();
        final List<Long> now = new ArrayList<>();
        for (final Segment s : segs)
        {
            now.add(s.baseOffset);
        }
        assertTrue(now.contains(lastBase), "an empty segment at " + lastBase + ": " + now);
        assertEquals(0, segs[now.indexOf(lastBase)].size());
        assertReads(log, dropped);
    }

    @Test
    void aTailerAndABatchHeldAcrossTheSwapKeepValidBytesAndGoOn() throws Exception
    {
        final PartitionLog log = filledLog(150);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final LongPredicate dropped = o -> o % 2 == 1 && o < bases[4];
        final LogTailer tailer = new LogTailer(log, 0);
        final RecordBatch tailed = new RecordBatch();
        long from = 0;
        while (from < bases[1] + 3)
        {
            assertTrue(tailer.next(Long.MAX_VALUE, tailed));
            from = tailed.lastOffset() + 1;
        }
        final long held = tailed.baseOffset(); // inside the second segment, about to be replaced
        final RecordBatch view = new RecordBatch();
        assertEquals(PartitionLog.READ_OK, log.readBatch(bases[2] + 1, Long.MAX_VALUE, view));
        final long viewed = view.baseOffset();
        final Segment[] old = log.segments();

        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 4, dropping(dropped)));

        assertTrue(old[1].isRetired() && old[2].isRetired(), "the replaced segments are retired");
        // the views still read the replaced segments' bytes, which are gone from the directory
        assertArrayEquals(written.get(held), bytes(tailed));
        assertEquals(RecordBatch.OK, tailed.check(tailed.sizeInBytes()));
        assertArrayEquals(written.get(viewed), bytes(view));
        assertEquals(RecordBatch.OK, view.check(view.sizeInBytes()));
        // the tailer goes on in the new segments at the next offset present
        final List<Long> rest = new ArrayList<>();
        while (tailer.next(Long.MAX_VALUE, tailed))
        {
            rest.add(tailed.baseOffset());
            assertArrayEquals(written.get(tailed.baseOffset()), bytes(tailed));
        }
        final long after = from;
        assertEquals(written.keySet().stream().filter(o -> o >= after && !dropped.test(o)).toList(), rest);
    }

    @Test
    void abortedTransactionsWhoseMarkerIsKeptGoWithTheNewSegment() throws Exception
    {
        final PartitionLog log = filledLog(150);
        // index entries standing in for ABORT markers, in two segments of the run (as DumpLogSegmentsCompatibilityTest)
        final Segment[] segs = log.segments();
        final long kept = segs[1].baseOffset + 2;
        final long droppedMarker = segs[2].baseOffset + 1;
        final long batchOfKept = written.floorKey(kept);
        final long batchOfDropped = written.floorKey(droppedMarker);
        appendTxn(segs[1], 7, batchOfKept, kept);
        appendTxn(segs[2], 8, batchOfDropped, droppedMarker);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final List<Long> before = new ArrayList<>();
        log.transactions().collectAbortedTransactions(0, log.logEndOffset(), ByteBuffer.allocate(1024),
            (producerId, firstOffset) -> before.add(producerId));
        assertEquals(List.of(7L, 8L), before);
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 4,
            dropping(o -> o == batchOfDropped)));
        final long withTxns = log.segments()[1].baseOffset;
        assertTrue(Files.exists(dir.resolve("swap-0").resolve(Segment.fileName(withTxns, TransactionIndex.SUFFIX))));
        final List<Long> producers = new ArrayList<>();
        log.transactions().collectAbortedTransactions(0, log.logEndOffset(), ByteBuffer.allocate(1024),
            (producerId, firstOffset) -> producers.add(producerId));
        assertEquals(List.of(7L), producers, "the transaction whose marker was dropped has no entry left");
        producers.clear();
        reopen().transactions().collectAbortedTransactions(0, Long.MAX_VALUE, ByteBuffer.allocate(1024),
            (producerId, firstOffset) -> producers.add(producerId));
        assertEquals(List.of(7L), producers, "after a reopen");
    }

    private static void appendTxn(final Segment s, final long producerId, final long first, final long marker) throws IOException
    {
        s.appendAbortedTxn(producerId, first, marker, marker + 1);
    }

    @Test
    void deleteRecordsDuringTheRewriteAbandonsTheReplacement() throws Exception
    {
        final PartitionLog log = filledLog(150);
        log.highWatermark(log.logEndOffset());
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final boolean[] once = {false};
        final int answer = log.segmentReplacer().replace(bases[0], 3, batch ->
        {
            if (!once[0])
            {
                once[0] = true;
                try
                {
                    assertEquals(bases[1], log.deleteRecordsBefore(bases[1])); // retention takes the run's first segment
                }
                catch (final IOException ex)
                {
                    throw new AssertionError(ex);
                }
            }
            return null; // were it swapped in, the offsets would be gone
        });
        assertEquals(SegmentReplacer.RUN_GONE, answer);
        assertEquals(bases[1], log.logStartOffset(), "the log start stays where DeleteRecords put it");
        assertEquals(bases[1], log.segments()[0].baseOffset, "nothing resurrected");
        assertEquals(List.of(), leftovers());
        assertReads(log, o -> o < bases[1]);
    }

    @Test
    void retentionBetweenTheRewriteAndTheCommitAbandonsIt() throws Exception
    {
        final PartitionLog log = filledLog(150);
        log.highWatermark(log.logEndOffset());
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final long lastOfRun = bases[3] - 1;
        final int answer = log.segmentReplacer().replace(bases[1], 2, batch ->
        {
            if (batch.lastOffset() == lastOfRun)
            {
                try
                {
                    log.deleteRecordsBefore(bases[2]); // the run's first segment goes after its batches were read
                }
                catch (final IOException ex)
                {
                    throw new AssertionError(ex);
                }
            }
            return batch;
        });
        assertEquals(SegmentReplacer.RUN_GONE, answer);
        assertEquals(bases[2], log.segments()[0].baseOffset);
        assertEquals(List.of(), leftovers());
        assertReads(log, o -> o < bases[2]);
    }

    @Test
    void aCloseDuringTheRewriteAbandonsItAndTheReopenedLogIsTheOld() throws Exception
    {
        final PartitionLog log = filledLog(120);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final int answer = log.segmentReplacer().replace(bases[0], 3, batch ->
        {
            if (!log.isClosed())
            {
                try
                {
                    log.close();
                }
                catch (final IOException ex)
                {
                    throw new AssertionError(ex);
                }
            }
            return null;
        });
        assertEquals(SegmentReplacer.LOG_CLOSED, answer);
        // nothing reached through a closed log's paths: its .cleaned files (never a .swap) are left to the open
        assertTrue(leftovers().stream().allMatch(n -> n.endsWith(CleanedSegments.CLEANED_SUFFIX)), leftovers().toString());
        assertReads(reopen(), o -> false);
        assertEquals(List.of(), leftovers());
    }

    @Test
    void aFailureAfterTheCommitLeavesTheOldSegmentsReadableAndTheOpenCompletesTheSwap() throws Exception
    {
        final PartitionLog log = filledLog(150);
        log.highWatermark(log.logEndOffset());
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        // a directory, not empty, under the name of every .timeindex a new segment could take but the first: the
        // rename of the second new segment's fails after the commit
        final Path partition = dir.resolve("swap-0");
        final List<Path> blockers = new ArrayList<>();
        for (long o = bases[0] + 1; o < bases[3]; o++)
        {
            final Path blocker = partition.resolve(Segment.fileName(o, Segment.TIME_INDEX_SUFFIX));
            if (!Files.exists(blocker))
            {
                Files.createDirectories(blocker.resolve("x"));
                blockers.add(blocker);
            }
        }
        final LongPredicate dropped = o -> o % 4 == 1 && o < bases[3]; // a quarter: more than one new segment
        assertThrows(IOException.class, () -> log.segmentReplacer().replace(bases[0], 3, dropping(dropped)),
            () -> "segments now " + java.util.Arrays.toString(log.segmentReplacer().inactiveSegmentBases()));
        assertReads(log, o -> false); // the old segments, through their mappings
        // no second replacement of the run (still listed) until the reopen: its .swap files would mix with the first's
        assertEquals(SegmentReplacer.FAILED, log.segmentReplacer().replace(bases[1], 2, batch -> batch));
        // retention takes the run's first segment: its files were deleted by the replacement, and its names are the
        // new first segment's now, which must stay
        assertEquals(bases[1], log.deleteRecordsBefore(bases[1]));
        assertTrue(Files.exists(partition.resolve(Segment.fileName(bases[0], Segment.LOG_SUFFIX))), "the new first segment");
        manager.close();
        for (final Path blocker : blockers)
        {
            Files.delete(blocker.resolve("x"));
            Files.delete(blocker);
        }
        manager = LogManager.open(LogManagerConfig.of(dir));
        assertReads(manager.log("swap", 0), bases[1], dropped);
        assertEquals(List.of(), leftovers());
    }

    @Test
    void theActiveSegmentIsNeverReplacedAndABadAnswerIsRefused() throws Exception
    {
        final PartitionLog log = filledLog(60);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        assertEquals(SegmentReplacer.RUN_GONE, log.segmentReplacer().replace(bases[0], bases.length + 1, batch -> batch));
        assertEquals(SegmentReplacer.RUN_GONE, log.segmentReplacer().replace(bases[0] + 1, 1, batch -> batch));
        final UnsafeBuffer other = new Batches().records(2, 1, 1).view();
        assertThrows(IllegalArgumentException.class, () -> log.segmentReplacer().replace(bases[1], 1,
            batch -> new RecordBatch().wrap(other, 0))); // offsets 0..1, outside every batch of the second segment
        assertEquals(List.of(), leftovers());
        assertReads(log, o -> false);
    }
}
