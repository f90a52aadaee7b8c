package io.ferrite.log;

import io.ferrite.log.clean.CleanStats;
import io.ferrite.log.clean.CleanerThrottle;
import io.ferrite.log.clean.LogCompactor;
import io.ferrite.log.clean.OffsetMap;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A follower takes the gaps its leader's log has, as Kafka 4.4's {@code appendAsFollower} does: a leader
 * whose older segment was cut by damage ({@link SegmentGapTest}) and a compacted leader. The follower reaches
 * the leader's log end, serves the same batches at the same offsets, and recovers the same log end after an
 * unclean reopen — also one taken right after the append that crossed the gap, while that gap would sit in the
 * active segment had the append not rolled.
 */
class FollowerGapTest
{
    @TempDir
    Path dir;

    private final AppendResult result = new AppendResult();
    private final RecordBatch batch = new RecordBatch();
    private final RecordBatch other = new RecordBatch();

    @Test
    void aFollowerOfALeaderWithACutSegmentReachesItsLogEndAndRecoversIt() throws IOException
    {
        final Path data = dir.resolve("data");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.createLog("leader", 0, FollowerAppendTest.SMALL);
            manager.createLog("follower", 0, FollowerAppendTest.SMALL);
            final Batches b = new Batches();
            for (int i = 0; i < 60; i++)
            {
                leader.append(b.records(3, i, ReplicaCopy.T0 + i).buffer, 0, b.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            assertTrue(leader.segmentCount() > 3, "segments: " + leader.segmentCount());
        }
        // the last 30 bytes of the leader's second segment cut while closed, then an unclean reopen: a gap
        try (var list = Files.list(data.resolve("leader-0")))
        {
            final Path second = list.filter(p -> p.toString().endsWith(Segment.LOG_SUFFIX)).sorted().toList().get(1);
            try (RandomAccessFile raf = new RandomAccessFile(second.toFile(), "rw"))
            {
                raf.setLength(raf.length() - 30);
            }
        }
        Files.delete(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        final long gapAt;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.log("leader", 0);
            assertEquals(180, leader.logEndOffset());
            assertTrue(gaps(leader) > 0, "the leader's log has a gap");
            // copy 3 batches a fetch until the append that crosses the gap, then stop there
            gapAt = copy(leader, manager.log("follower", 0), 3, true);
        }
        uncleanReopen(data);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog follower = manager.log("follower", 0);
            assertEquals(gapAt, follower.logEndOffset(), "recovery keeps what the append that crossed the gap placed");
            final PartitionLog leader = manager.log("leader", 0);
            copy(leader, follower, 3, false);
            assertSameBatches(leader, follower);
        }
        assertSameBatchesAfterAnUncleanReopen(data);
    }

    @Test
    void aFollowerOfACompactedLeaderHasItsRecordsInAFewSegments() throws Exception
    {
        final Path data = dir.resolve("data");
        final Map<String, String> config = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1200", LogConfig.INDEX_INTERVAL_BYTES, "200",
            LogConfig.CLEANUP_POLICY, "compact", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        final LogManagerConfig managerConfig = LogManagerConfig.of(data);
        // no cleaner thread of the manager's: the test runs the clean itself
        try (LogManager manager = LogManager.open(managerConfig.withCleaner(managerConfig.cleaner().withEnable(false)));
            OffsetMap map = new OffsetMap(24 * 1024, 0.9))
        {
            final PartitionLog leader = manager.createLog("leader", 0, config);
            final PartitionLog follower = manager.createLog("follower", 0, config);
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(1024);
            final RecordBatchBuilder builder = new RecordBatchBuilder();
            for (int i = 0; i < 400; i++)
            {
                // every other batch a key of its own, which stays; the rest one key, of which only the last stays
                builder.wrap(buffer, 0).appendRecord(ReplicaCopy.T0 + i, (i % 2 == 0 ? "u" + i : "hot").getBytes(StandardCharsets.UTF_8),
                    Batches.value(i, 0));
                leader.append(buffer, 0, builder.build(), result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            leader.highWatermark(leader.logEndOffset());
            final LogCompactor compactor = new LogCompactor(map, CleanerThrottle.NONE, 1 << 20);
            final long end = leader.segments()[leader.segmentCount() - 1].baseOffset;
            for (long at = 0; at < end; )
            {
                final long next = compactor.clean(leader, at, end, 0, System.currentTimeMillis(), new CleanStats());
                assertTrue(next > at, "the clean made progress from " + at);
                at = next;
            }
            final int gaps = gaps(leader);
            assertTrue(gaps > 100, "the clean left gaps: " + gaps);

            copy(leader, follower, 20, false);
            assertSameBatches(leader, follower);
            // not a segment per gap: at most one roll per fetch besides the leader's own rolls
            final int appends = (int)Math.ceil(countBatches(leader) / 20.0);
            assertTrue(follower.segmentCount() <= leader.segmentCount() + appends,
                "segments: " + follower.segmentCount() + " for " + appends + " appends");
            assertTrue(follower.segmentCount() < gaps / 4, "segments: " + follower.segmentCount() + " for " + gaps + " gaps");
        }
        assertSameBatchesAfterAnUncleanReopen(data);
    }

    @Test
    void aGapPastWhatAnEmptySegmentCanHoldGoesInANewSegment() throws IOException
    {
        final Path data = dir.resolve("data");
        final long far = 3_000_000_000L; // above the empty active segment's base 0 by more than a relative offset holds
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of());
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(1024);
            final int length = new RecordBatchBuilder().wrap(buffer, 0).baseOffset(far).partitionLeaderEpoch(1)
                .appendRecord(ReplicaCopy.T0, "k".getBytes(StandardCharsets.UTF_8), Batches.value(1, 0)).build();
            follower.appendAsFollower(buffer, 0, length, 1, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(far, result.firstOffset);
            assertEquals(far + 1, follower.logEndOffset());
            assertEquals(PartitionLog.READ_OK, follower.readBatch(0, follower.logEndOffset(), batch));
            assertEquals(far, batch.baseOffset(), "a read in the gap gets the batch after it");
        }
        uncleanReopen(data);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog follower = manager.log("follower", 0);
            assertEquals(far + 1, follower.logEndOffset());
            assertEquals(PartitionLog.READ_OK, follower.readBatch(far, follower.logEndOffset(), batch));
            assertEquals(far, batch.baseOffset());
        }
    }

    /**
     * Copies the leader into the follower, {@code count} batches a fetch, from the follower's log end; with
     * {@code stopAfterGap} stops after the first append that crossed a gap.
     *
     * @return the follower's log end where it stopped
     */
    private long copy(final PartitionLog leader, final PartitionLog follower, final int count, final boolean stopAfterGap)
    {
        final ReplicaCopy copy = new ReplicaCopy();
        while (follower.logEndOffset() < leader.logEndOffset())
        {
            final long from = follower.logEndOffset();
            final int length = copy.fetch(leader, from, count, null);
            assertTrue(length > 0);
            follower.appendAsFollower(copy.fetched(), 0, length, Integer.MAX_VALUE, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertTrue(follower.logEndOffset() > from, "progress from " + from);
            boolean crossed = false;
            for (int p = 0, expected = 0; p < length; p += batch.sizeInBytes())
            {
                batch.wrap(copy.fetched(), p);
                crossed |= batch.baseOffset() > (p == 0 ? from : expected);
                expected = (int)batch.lastOffset() + 1;
            }
            if (stopAfterGap && crossed)
            {
                return follower.logEndOffset();
            }
        }
        assertTrue(!stopAfterGap, "no append crossed a gap");
        return follower.logEndOffset();
    }

    /** The batches whose base offset is above the last one's last offset + 1. */
    private int gaps(final PartitionLog log)
    {
        int gaps = 0;
        long expected = 0;
        for (long at = 0; at < log.logEndOffset(); at = batch.lastOffset() + 1)
        {
            assertEquals(PartitionLog.READ_OK, log.readBatch(at, log.logEndOffset(), batch));
            gaps += batch.baseOffset() > expected ? 1 : 0;
            expected = batch.lastOffset() + 1;
        }
        return gaps;
    }

    private int countBatches(final PartitionLog log)
    {
        int n = 0;
        for (long at = 0; at < log.logEndOffset(); at = batch.lastOffset() + 1)
        {
            assertEquals(PartitionLog.READ_OK, log.readBatch(at, log.logEndOffset(), batch));
            n++;
        }
        return n;
    }

    /** The same log end, and at every offset (in a gap too) the same batch, byte for byte. */
    private void assertSameBatches(final PartitionLog leader, final PartitionLog follower)
    {
        assertEquals(leader.logEndOffset(), follower.logEndOffset());
        final List<Long> bases = new ArrayList<>();
        for (long at = 0; at < leader.logEndOffset(); at++)
        {
            assertEquals(PartitionLog.READ_OK, leader.readBatch(at, leader.logEndOffset(), batch), "leader at " + at);
            assertEquals(PartitionLog.READ_OK, follower.readBatch(at, follower.logEndOffset(), other), "follower at " + at);
            assertEquals(batch.baseOffset(), other.baseOffset(), "at " + at);
            assertArrayEquals(bytes(batch), bytes(other), "the batch at " + at);
            if (bases.isEmpty() || bases.get(bases.size() - 1) != batch.baseOffset())
            {
                bases.add(batch.baseOffset());
            }
        }
        assertTrue(bases.size() > 10, "batches compared: " + bases.size());
    }

    private static byte[] bytes(final RecordBatch b)
    {
        final byte[] out = new byte[b.sizeInBytes()];
        b.buffer().getBytes(b.offset(), out);
        return out;
    }

    private void assertSameBatchesAfterAnUncleanReopen(final Path data) throws IOException
    {
        uncleanReopen(data);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            assertSameBatches(manager.log("leader", 0), manager.log("follower", 0));
        }
    }

    private static void uncleanReopen(final Path data) throws IOException
    {
        Files.delete(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        Files.delete(data.resolve(OffsetCheckpoint.RECOVERY_POINTS));
    }
}
