package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.ferrite.wire.record.RecordBatchDescriptor.*;
import static java.nio.ByteOrder.BIG_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PartitionLog#appendAsFollower} on real files: a leader log written through {@code append} and
 * {@code appendMarker} and copied batch by batch (or in fetches of several) into a follower log yields the
 * same files byte for byte — segments, offset and time indexes, {@code .txnindex}, producer snapshots — the
 * same producer state, and the same after a reopen that recovers; what Kafka refuses is refused with its
 * typed error and leaves nothing behind; the follower's high watermark bounds its LSO and reads.
 */
class FollowerAppendTest
{
    /** Small segments and indexes: rolls by size and by full indexes, snapshots at each roll. */
    static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "3000", LogConfig.INDEX_INTERVAL_BYTES, "200",
        LogConfig.SEGMENT_INDEX_BYTES, "96");

    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    @TempDir
    Path dir;

    private final AppendResult result = new AppendResult();
    private final RecordBatch batch = new RecordBatch();

    @Test
    void aCopyBatchByBatchHasTheLeadersFilesAndRecoversTheSame() throws IOException
    {
        copyAndCompare(1, false);
    }

    @Test
    void fetchesOfSeveralBatchesWithCutTailsGiveTheSameFiles() throws IOException
    {
        copyAndCompare(7, true);
    }

    private void copyAndCompare(final int maxBatches, final boolean partialTails) throws IOException
    {
        final Path data = dir.resolve("data");
        final ReplicaCopy copy = new ReplicaCopy();
        final Random r = new Random(20261205L);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.createLog("leader", 0, SMALL);
            final PartitionLog follower = manager.createLog("follower", 0, SMALL);
            for (int round = 0; round < 4; round++)
            {
                copy.writeLeader(leader, r, 120);
                copy.copy(leader, follower, r, maxBatches, partialTails);
                leader.highWatermark(leader.logEndOffset());
                follower.highWatermark(Math.min(leader.highWatermark(), follower.logEndOffset()));
                assertEquals(ReplicaCopy.describe(leader).replace("leader", "x"), ReplicaCopy.describe(follower).replace("follower", "x"));
                assertEquals(leader.transactions().lastStableOffset(), follower.transactions().lastStableOffset());
                assertEquals(aborted(leader, 0), aborted(follower, 0));
            }
            assertTrue(leader.segmentCount() > 5, "rolls: " + leader.segmentCount());
            assertTrue(!aborted(leader, 0).isEmpty(), "aborted transactions in the .txnindex files");
        }
        ReplicaCopy.assertSameFiles(data.resolve("leader-0"), data.resolve("follower-0"));
        for (final String kind : List.of(".log", ".index", ".timeindex", ".txnindex", ".snapshot"))
        {
            assertTrue(ReplicaCopy.files(data.resolve("follower-0")).keySet().stream().filter(n -> n.endsWith(kind)).count() > 1,
                "several " + kind + " files compared");
        }

        // clean reopen, then an unclean one that recovers every segment from the start: the same again
        for (final boolean unclean : new boolean[] {false, true})
        {
            if (unclean)
            {
                Files.delete(data.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
                Files.delete(data.resolve(OffsetCheckpoint.RECOVERY_POINTS));
            }
            try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
            {
                final PartitionLog leader = manager.log("leader", 0);
                final PartitionLog follower = manager.log("follower", 0);
                assertEquals(ReplicaCopy.describe(leader).replace("leader", "x"), ReplicaCopy.describe(follower).replace("follower", "x"));
                assertEquals(aborted(leader, 0), aborted(follower, 0));
                assertEquals(leader.transactions().lastStableOffset(), follower.transactions().lastStableOffset());
            }
            ReplicaCopy.assertSameFiles(data.resolve("leader-0"), data.resolve("follower-0"));
        }
    }

    /** What a read_committed fetch from {@code from} is told of aborted transactions: (producer, first offset) pairs. */
    static List<Long> aborted(final PartitionLog log, final long from)
    {
        final List<Long> out = new ArrayList<>();
        final int status = log.transactions().collectAbortedTransactions(from, log.logEndOffset(), ByteBuffer.allocateDirect(34 * 8),
            (producerId, firstOffset) ->
            {
                out.add(producerId);
                out.add(firstOffset);
            });
        assertEquals(PartitionLog.READ_OK, status);
        return out;
    }

    @Test
    void whatKafkaRefusesIsRefusedAndLeavesNothingBehind() throws IOException
    {
        final Path data = dir.resolve("data");
        final ReplicaCopy copy = new ReplicaCopy();
        final Random r = new Random(7);
        final ExpandableDirectByteBuffer fetched = copy.fetched();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog leader = manager.createLog("leader", 0, SMALL);
            final PartitionLog follower = manager.createLog("follower", 0, SMALL);
            copy.writeLeader(leader, r, 200);
            while (follower.logEndOffset() < leader.logEndOffset() / 2)
            {
                final int length = copy.fetch(leader, follower.logEndOffset(), 1, null);
                follower.appendAsFollower(fetched, 0, length, copy.leaderEpoch, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            final long end = follower.logEndOffset();
            final List<String> producers = ReplicaCopy.producers(follower);

            // overlapping: the first batch starts below the log end (Kafka's UnexpectedAppendOffsetException)
            leader.readBatch(end - 1, leader.logEndOffset(), batch);
            int length = copy.fetch(leader, batch.baseOffset(), 3, null);
            refused(follower, fetched, length, copy, AppendResult.UNEXPECTED_APPEND_OFFSET, end, producers);

            // a batch twice in one append (Kafka's OffsetsOutOfOrderException): not even the first is appended
            length = copy.fetch(leader, end, 1, null);
            fetched.putBytes(length, fetched, 0, length);
            refused(follower, fetched, 2 * length, copy, AppendResult.OFFSETS_OUT_OF_ORDER, end, producers);

            // a corrupt third batch: the two good ones before it are not appended either
            length = copy.fetch(leader, end, 3, null);
            fetched.putByte(length - 1, (byte)(fetched.getByte(length - 1) ^ 0x40));
            refused(follower, fetched, length, copy, AppendResult.CORRUPT_MESSAGE, end, producers);

            // magic 1
            length = copy.fetch(leader, end, 1, null);
            fetched.putByte(MAGIC_OFFSET, (byte)1);
            refused(follower, fetched, length, copy, AppendResult.UNSUPPORTED_MAGIC, end, producers);

            // a frame whose length cannot hold a header
            length = copy.fetch(leader, end, 1, null);
            fetched.putInt(BATCH_LENGTH_OFFSET, 10, BIG_ENDIAN);
            refused(follower, fetched, length, copy, AppendResult.CORRUPT_MESSAGE, end, producers);

            // only part of a batch (a fetch answer cut short): nothing, and no error
            length = copy.fetch(leader, end, 1, null);
            follower.appendAsFollower(fetched, 0, length - 1, copy.leaderEpoch, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(-1, result.firstOffset);
            assertEquals(end, follower.logEndOffset());

            // the rest, then the follower's files are the leader's: nothing a refusal did is left in them
            copy.copy(leader, follower, r, 3, true);
        }
        ReplicaCopy.assertSameFiles(data.resolve("leader-0"), data.resolve("follower-0"));
    }

    private void refused(final PartitionLog follower, final ExpandableDirectByteBuffer fetched, final int length,
        final ReplicaCopy copy, final int status, final long end, final List<String> producers)
    {
        follower.appendAsFollower(fetched, 0, length, copy.leaderEpoch, result);
        assertEquals(status, result.status, result.toString());
        assertEquals(-1, result.firstOffset);
        assertEquals(end, follower.logEndOffset(), "log end after a refused append");
        assertEquals(producers, ReplicaCopy.producers(follower));
    }

    @Test
    void batchesOfALaterLeaderEpochAreLeftOutAsKafkaSkipsThem() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of());
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            int length = build(buffer, 0, 0, 3, -1, false, false, 4);
            length = build(buffer, length, 3, 2, -1, false, false, 5);
            length = build(buffer, length, 5, 2, -1, false, false, 4);
            follower.appendAsFollower(buffer, 0, length, 4, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(0, result.firstOffset);
            assertEquals(2, result.lastOffset);
            assertEquals(3, follower.logEndOffset(), "the epoch-5 batch and the one after it are skipped");
            follower.readBatch(0, 3, batch);
            assertEquals(4, batch.partitionLeaderEpoch(), "the leader's epoch is kept");
        }
    }

    @Test
    void aClosedLogRefusesAFollowerAppend() throws IOException
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
        final int length = build(buffer, 0, 0, 3, -1, false, false, 1);
        final PartitionLog follower;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            follower = manager.createLog("follower", 0, Map.of());
        }
        follower.appendAsFollower(buffer, 0, length, 1, result);
        assertEquals(AppendResult.LOG_CLOSED, result.status, result.toString());
    }

    @Test
    void theFollowersHighWatermarkBoundsItsLastStableOffsetAndReads() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of());
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            int length = build(buffer, 0, 0, 2, -1, false, false, 1);                 // 0..1 plain
            length = build(buffer, length, 2, 3, 10, true, false, 1);                  // 2..4 producer 10's transaction
            length = build(buffer, length, 5, 1, 11, true, false, 1);                  // 5 producer 11's
            length = build(buffer, length, 6, 1, 10, true, true, 1);                   // 6 COMMIT of 10
            follower.appendAsFollower(buffer, 0, length, 1, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(7, follower.logEndOffset());

            // the leader's high watermark is 3: the follower's is min(3, its log end)
            follower.highWatermark(Math.min(3, follower.logEndOffset()));
            assertEquals(2, follower.transactions().lastStableOffset(), "producer 10's transaction is open below the high watermark");
            assertEquals(PartitionLog.NO_BATCH, follower.readBatch(3, follower.highWatermark(), batch), "nothing at the high watermark");
            // the marker is in, but the high watermark has not passed it: still unstable at 2
            follower.highWatermark(6);
            assertEquals(2, follower.transactions().lastStableOffset());
            follower.highWatermark(7);
            assertEquals(5, follower.transactions().lastStableOffset(), "producer 11's transaction is still open");

            // a leader's high watermark above what the follower has: its own log end
            length = build(buffer, 0, 7, 1, 11, true, true, 1);                       // 7 COMMIT of 11
            follower.appendAsFollower(buffer, 0, length, 1, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(5, follower.transactions().lastStableOffset(), "the marker is not below the high watermark yet");
            follower.highWatermark(Math.min(100, follower.logEndOffset()));
            assertEquals(8, follower.transactions().lastStableOffset());
        }
    }

    @Test
    void theFollowerCanLeadWithTheProducerStateItReplicated() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of());
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            int length = build(buffer, 0, 0, 3, 7, false, false, 2);                 // producer 7, sequences 0..2
            length = build(buffer, length, 3, 2, 10, true, false, 2);                 // producer 10's transaction at 3
            follower.appendAsFollower(buffer, 0, length, 2, result);
            assertEquals(AppendResult.OK, result.status, result.toString());

            // a non-transactional batch of producer 10 while its transaction is open: Kafka's REPLICATION check too,
            // made batch by batch: the plain batch before it stays appended, and the result says so
            length = build(buffer, 0, 5, 2, -1, false, false, 2);                      // 5..6 plain
            length = build(buffer, length, 7, 1, 10, false, false, 2);                 // 7 producer 10, not transactional
            follower.appendAsFollower(buffer, 0, length, 2, result);
            assertEquals(AppendResult.INVALID_TXN_STATE, result.status, result.toString());
            assertEquals(5, result.firstOffset, result.toString());
            assertEquals(6, result.lastOffset, result.toString());
            assertEquals(7, follower.logEndOffset());

            // now leader: producer 7's retry of its last batch is a duplicate, its next batch goes on, a gap is refused
            follower.leaderEpoch(3);
            length = build(buffer, 0, 0, 3, 7, false, false, -1);
            follower.append(buffer, 0, length, result);
            assertEquals(AppendResult.DUPLICATE, result.status, result.toString());
            assertEquals(0, result.firstOffset);
            length = buildSequence(buffer, 7, 3, 1);
            follower.append(buffer, 0, length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(7, result.firstOffset);
            length = buildSequence(buffer, 7, 9, 1);
            follower.append(buffer, 0, length, result);
            assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, result.status, result.toString());
            // producer 10's replicated transaction is aborted by the new leader: indexed as the leader's own
            follower.transactions().appendMarker(10, (short)0, 0, false, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(List.of(10L, 3L), aborted(follower, 0));
        }
    }

    @Test
    void anAbortTooShortToBeAMarkerIndexesNothingAsItEndsNothing() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of());
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            int length = build(buffer, 0, 0, 3, 10, true, false, 1);                   // producer 10's transaction at 0
            // a CRC-valid control batch of producer 10: an ABORT key, but a value too short for a coordinator epoch
            length += new RecordBatchBuilder().wrap(buffer, length).baseOffset(3).partitionLeaderEpoch(1).producer(10, (short)0, -1)
                .transactional(true).control(true).appendRecord(ReplicaCopy.T0, new byte[] {0, 0, 0, 0}, new byte[] {0, 0}).build();
            follower.appendAsFollower(buffer, 0, length, 1, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(4, follower.logEndOffset());
            // the producer state takes it as no marker, so the .txnindex has no entry for it either
            follower.highWatermark(4);
            assertEquals(0, follower.transactions().lastStableOffset(), "producer 10's transaction is still open");
            assertEquals(List.of(), aborted(follower, 0));
        }
    }

    @Test
    void aFollowerAppendAllocatesNothing() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("data"))))
        {
            final PartitionLog follower = manager.createLog("follower", 0, Map.of(LogConfig.INDEX_INTERVAL_BYTES, "256"));
            final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(4096);
            final int one = build(buffer, 0, 0, 4, -1, false, false, 1);
            final int length = build(buffer, one, 4, 4, -1, false, false, 1);
            long fewest = Long.MAX_VALUE;
            for (int window = 0; window < 8 && fewest > 0; window++) // a JIT tier change in a window does not count
            {
                final long before = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 5_000; i++)
                {
                    // base offsets are outside the CRC: the same two batches at the log end again and again
                    buffer.putLong(BASE_OFFSET_OFFSET, follower.logEndOffset(), BIG_ENDIAN);
                    buffer.putLong(one + BASE_OFFSET_OFFSET, follower.logEndOffset() + 4, BIG_ENDIAN);
                    follower.appendAsFollower(buffer, 0, length, 1, result);
                }
                fewest = Math.min(fewest, THREADS.getCurrentThreadAllocatedBytes() - before);
                assertEquals(AppendResult.OK, result.status, result.toString());
            }
            assertEquals(0, fewest, "bytes allocated by 5000 follower appends of two batches");
        }
    }

    /**
     * A batch as a leader wrote it, at {@code at} in {@code buffer}: base offset {@code base}, {@code count} records,
     * producer {@code pid} (-1: none; sequences from 0 at {@code base} - its first offset is taken as 0),
     * transactional, a COMMIT marker when {@code marker}, partition leader epoch {@code epoch}.
     *
     * @return the end of the batch in the buffer
     */
    private static int build(final ExpandableDirectByteBuffer buffer, final int at, final long base, final int count, final long pid,
        final boolean transactional, final boolean marker, final int epoch)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, at).baseOffset(base).partitionLeaderEpoch(epoch)
            .producer(pid, (short)(pid < 0 ? -1 : 0), pid < 0 || marker ? -1 : (int)(pid == 7 ? base : base - 3))
            .transactional(transactional).control(marker);
        if (marker)
        {
            builder.appendEndTxnMarker(ReplicaCopy.T0, true, 0);
        }
        else
        {
            for (int i = 0; i < count; i++)
            {
                builder.appendRecord(ReplicaCopy.T0 + i, ("k" + i).getBytes(StandardCharsets.UTF_8), Batches.value(base, i));
            }
        }
        return at + builder.build();
    }

    /** A client's batch of producer {@code pid} (epoch 0) from {@code sequence}. */
    private static int buildSequence(final ExpandableDirectByteBuffer buffer, final long pid, final int sequence, final int count)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(buffer, 0).producer(pid, (short)0, sequence);
        for (int i = 0; i < count; i++)
        {
            builder.appendRecord(ReplicaCopy.T0 + i, ("k" + i).getBytes(StandardCharsets.UTF_8), Batches.value(sequence, i));
        }
        return builder.build();
    }
}
