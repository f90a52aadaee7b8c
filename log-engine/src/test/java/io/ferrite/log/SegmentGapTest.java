package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Damage inside an older segment costs the damaged bytes only (issue 11). An older segment cut
 * mid-batch while the log was closed, reopened after a clean or an unclean stop, keeps its whole
 * batches before the cut, and every later segment stays whole and readable: the log has a gap, as
 * Kafka's logs may (a segment's base offset above the end of the one before it), and a read of an
 * offset in the gap answers with the next batch that survives. A frame damaged in the middle of an
 * older segment that recovery does not scan never makes a read throw or loop.
 */
class SegmentGapTest
{
    private static final int BATCHES = 150;
    private static final long T0 = 1_700_000_000_000L;
    private static final Map<String, String> CONFIG = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "3000",
        LogConfig.INDEX_INTERVAL_BYTES, "300", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
    /** The damaged segment: an older one, with several after it. */
    private static final int VICTIM = 2;

    @TempDir
    Path root;

    /** One batch as it is on disk: its segment, position and bytes. */
    record Written(long segmentBase, int position, long baseOffset, long lastOffset, byte[] bytes)
    {
    }

    private final List<Written> written = new ArrayList<>();
    private final List<Long> segmentBases = new ArrayList<>();

    /** How the log is reopened after the damage. */
    enum Restart
    {
        /** The clean-shutdown marker stays: the files are trusted. */
        CLEAN,
        /** No marker, the recovery-point checkpoint stays: the damaged segment is below the recovery point, not scanned. */
        UNCLEAN_BELOW_RECOVERY_POINT,
        /** No marker and no recovery-point checkpoint: every segment is scanned. */
        UNCLEAN_FROM_THE_START
    }

    /** Where the damaged segment is cut. */
    enum Cut
    {
        /** Inside the header of its last batch (every index entry stays below the cut). */
        LAST_BATCH_HEADER,
        /** Half way through its last batch. */
        LAST_BATCH_BODY,
        /** Half way through a batch in its middle (index entries point past the cut). */
        MIDDLE_BATCH
    }

    static Stream<Arguments> cuts()
    {
        return Arrays.stream(Restart.values()).flatMap(r -> Arrays.stream(Cut.values()).map(c -> Arguments.of(r, c)));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cuts")
    void aCutOlderSegmentLosesOnlyItsCutBatchesAndLaterSegmentsAreServed(final Restart restart, final Cut cut) throws IOException
    {
        final String what = restart + ", " + cut;
        final Path dir = writeLog("cut");
        final List<Written> victim = batchesOf(segmentBases.get(VICTIM));
        final Written cutBatch = cut == Cut.MIDDLE_BATCH ? victim.get(victim.size() / 2) : victim.get(victim.size() - 1);
        final int cutAt = cutBatch.position + (cut == Cut.LAST_BATCH_HEADER ? 20 : cutBatch.bytes.length / 2);
        try (RandomAccessFile raf = new RandomAccessFile(logFile(dir, segmentBases.get(VICTIM)).toFile(), "rw"))
        {
            raf.setLength(cutAt);
        }
        restart(dir, restart);
        final List<Written> surviving = new ArrayList<>();
        for (final Written w : written)
        {
            if (w.segmentBase != segmentBases.get(VICTIM) || w.position + w.bytes.length <= cutAt)
            {
                surviving.add(w);
            }
        }
        assertTrue(surviving.size() < written.size() && surviving.size() > written.size() / 2, what);
        final long end = written.get(written.size() - 1).lastOffset + 1;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("g", 0);
            assertEquals(segmentBases.size(), log.segmentCount(), what + ": no segment was deleted");
            assertServes(log, surviving, end, what);
            // the log goes on from where it ended, and a second restart keeps the gap as it is
            final Batches b = new Batches().records(3, 999, T0 + 999);
            final AppendResult result = new AppendResult();
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(end, result.firstOffset, what);
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("g", 0);
            assertEquals(end + 3, log.logEndOffset(), what + ", reopened");
            assertTrue(log.segmentCount() >= segmentBases.size(), what + ", reopened: no segment was deleted");
            assertServes(log, surviving, end, what + ", reopened");
        }
    }

    /** Batch lengths that send a reader off the frame: a zero-sized frame, one below a header, a negative one, past the file. */
    private static final int[] BAD_LENGTHS = {-12, 0, 30, -1000, Integer.MAX_VALUE, 1 << 20};

    static Stream<Arguments> badFrames()
    {
        return Arrays.stream(BAD_LENGTHS).boxed()
            .flatMap(l -> Stream.of(Restart.CLEAN, Restart.UNCLEAN_BELOW_RECOVERY_POINT).map(r -> Arguments.of(l, r)));
    }

    @ParameterizedTest(name = "batch length {0}, {1}")
    @MethodSource("badFrames")
    // a reader looping for ever on a bad frame fails here (in its own thread: a busy loop ignores interrupts)
    @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void aDamagedFrameInsideAnOlderSegmentNeverFailsARead(final int badLength, final Restart restart) throws IOException
    {
        final String what = "batch length " + badLength + ", " + restart;
        final Path dir = writeLog("frame");
        final List<Written> victim = batchesOf(segmentBases.get(VICTIM));
        // a batch before the last index entry: the cheap checks on open cannot see it
        final Written damaged = victim.get(2);
        try (RandomAccessFile raf = new RandomAccessFile(logFile(dir, segmentBases.get(VICTIM)).toFile(), "rw"))
        {
            raf.seek(damaged.position + 8);
            raf.writeInt(badLength);
        }
        restart(dir, restart);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("g", 0);
            final long end = log.logEndOffset();
            assertEquals(written.get(written.size() - 1).lastOffset + 1, end, what);
            final FileRegion region = new FileRegion();
            final RecordBatch batch = new RecordBatch();
            for (long offset = 0; offset < end; offset++)
            {
                assertEquals(PartitionLog.READ_OK, log.read(offset, 1, Long.MAX_VALUE, true, region), what + " at " + offset);
                assertTrue(region.length > 0, what + ": something at or after " + offset);
                final Written first = find(region.firstBatchOffset);
                assertTrue(first.lastOffset >= offset && first != damaged, what + " at " + offset);
                assertArrayEquals(first.bytes, PartitionLogTest.readRegion(region), what + " at " + offset);
                assertEquals(PartitionLog.READ_OK, log.readBatch(offset, Long.MAX_VALUE, batch), what + " at " + offset);
                assertTrue(batch.lastOffset() >= offset && batch.baseOffset() != damaged.baseOffset, what + " at " + offset);
                assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), what + " at " + offset);
            }
            // a tailer reads up to the damage and goes on after it: every batch of every other segment
            final List<Long> tailed = tail(log, what);
            for (final Written w : written)
            {
                if (w.segmentBase != segmentBases.get(VICTIM) || w.position < damaged.position)
                {
                    assertTrue(tailed.contains(w.baseOffset), what + ": the tailer read batch " + w.baseOffset);
                }
            }
            assertFalse(tailed.contains(damaged.baseOffset), what);
        }
    }

    // ---- helpers ----

    /** Writes {@link #BATCHES} batches over about ten segments, closes cleanly, and records what is on disk. */
    private Path writeLog(final String name) throws IOException
    {
        written.clear();
        segmentBases.clear();
        final Path dir = root.resolve(name);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("g", 0, CONFIG);
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < BATCHES; i++)
            {
                batches.records(1 + i % 5, i, T0 + i);
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            final RecordBatch batch = new RecordBatch();
            for (final Segment s : log.segments())
            {
                segmentBases.add(s.baseOffset);
                for (int p = 0; p < s.size(); p += batch.sizeInBytes())
                {
                    batch.wrap(s.log.view(), p);
                    final byte[] bytes = new byte[batch.sizeInBytes()];
                    s.log.view().getBytes(p, bytes);
                    written.add(new Written(s.baseOffset, p, batch.baseOffset(), batch.lastOffset(), bytes));
                }
            }
        }
        assertTrue(segmentBases.size() >= VICTIM + 5, "segments: " + segmentBases.size());
        assertTrue(batchesOf(segmentBases.get(VICTIM)).size() >= 6, "batches in the damaged segment");
        return dir;
    }

    private List<Written> batchesOf(final long segmentBase)
    {
        return written.stream().filter(w -> w.segmentBase == segmentBase).toList();
    }

    private Written find(final long baseOffset)
    {
        return written.stream().filter(w -> w.baseOffset == baseOffset).findFirst()
            .orElseThrow(() -> new AssertionError("no batch was written at " + baseOffset));
    }

    private static Path logFile(final Path dir, final long base)
    {
        return dir.resolve("g-0").resolve(Segment.fileName(base, Segment.LOG_SUFFIX));
    }

    private static void restart(final Path dir, final Restart restart) throws IOException
    {
        if (restart != Restart.CLEAN)
        {
            Files.delete(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        }
        if (restart == Restart.UNCLEAN_FROM_THE_START)
        {
            Files.delete(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        }
    }

    /**
     * The surviving batches are served, byte for byte, by read, readBatch and a tailer; a read or
     * readBatch at any offset answers with the batch holding it or, in the gap, the next one that
     * survives; the indexes agree.
     */
    private static void assertServes(final PartitionLog log, final List<Written> surviving, final long end, final String what)
        throws IOException
    {
        assertEquals(0, log.logStartOffset(), what);
        assertTrue(log.logEndOffset() >= end, what);
        CrashRecoveryTest.verifyIndexes(log);
        final FileRegion region = new FileRegion();
        final RecordBatch batch = new RecordBatch();
        int next = 0;
        for (long offset = 0; offset < end; offset++)
        {
            while (surviving.get(next).lastOffset < offset)
            {
                next++;
            }
            final Written expected = surviving.get(next);
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1, end, true, region), what + " at " + offset);
            assertEquals(expected.baseOffset, region.firstBatchOffset, what + " at " + offset);
            assertArrayEquals(expected.bytes, PartitionLogTest.readRegion(region), what + " at " + offset);
            assertEquals(PartitionLog.READ_OK, log.readBatch(offset, end, batch), what + " at " + offset);
            assertEquals(expected.baseOffset, batch.baseOffset(), what + " at " + offset);
            final byte[] inPlace = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), inPlace);
            assertArrayEquals(expected.bytes, inPlace, what + " at " + offset);
        }
        // large reads, one after another from the log start, cover the surviving batches exactly
        final List<Long> fetched = new ArrayList<>();
        long offset = 0;
        while (offset < end)
        {
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1 << 20, end, true, region), what + " at " + offset);
            assertTrue(region.length > 0, what + ": a read at " + offset + " finds the next batch");
            final ByteBuffer bytes = ByteBuffer.wrap(PartitionLogTest.readRegion(region));
            while (bytes.hasRemaining())
            {
                fetched.add(bytes.getLong(bytes.position()));
                bytes.position(bytes.position() + 12 + bytes.getInt(bytes.position() + 8));
            }
            offset = region.nextOffset;
        }
        assertEquals(surviving.stream().map(Written::baseOffset).toList(), fetched, what + ": fetched batches");
        final List<Long> tailed = tail(log, what);
        assertEquals(surviving.stream().map(Written::baseOffset).toList(), tailed.subList(0, surviving.size()), what + ": tailed");
    }

    /** The base offsets a tailer from the log start reads, in order. */
    private static List<Long> tail(final PartitionLog log, final String what)
    {
        final LogTailer tailer = new LogTailer(log, log.logStartOffset());
        final RecordBatch batch = new RecordBatch();
        final List<Long> tailed = new ArrayList<>();
        long last = -1;
        while (tailer.next(Long.MAX_VALUE, batch))
        {
            assertTrue(batch.baseOffset() > last, what + ": the tailer moves forward: " + batch.baseOffset() + " after " + last);
            assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), what + ": tailed batch " + batch.baseOffset());
            last = batch.lastOffset();
            tailed.add(batch.baseOffset());
        }
        assertEquals(log.logEndOffset(), tailer.nextOffset(), what + ": the tailer reached the end");
        return tailed;
    }
}
