package io.ferrite.log;

import io.ferrite.log.epoch.LeaderEpochCheckpoint;
import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link PartitionLog#truncateTo} and {@link PartitionLog#truncateFullyAndStartAt} on real files, each reopened clean and unclean. */
class LogTruncationTest extends OrdersLogFixture
{
    private void append(final PartitionLog log, final int batchCount)
    {
        for (int i = 0; i < batchCount; i++)
        {
            batches.records(3, log.logEndOffset() + i, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
    }

    private static byte[] content(final PartitionLog log)
    {
        return ReplicaCopy.content(log);
    }


    /** The log's content and offsets after a clean reopen and after an unclean one are what they were. */
    private void reopensTheSame(final byte[] content, final long start, final long end) throws IOException
    {
        for (int unclean = 0; unclean < 2; unclean++)
        {
            if (unclean == 1)
            {
                uncleanStop();
            }
            try (LogManager manager = open())
            {
                final PartitionLog log = manager.log("orders", 0);
                assertEquals(start, log.logStartOffset(), "log start, unclean " + unclean);
                assertEquals(end, log.logEndOffset(), "log end, unclean " + unclean);
                assertArrayEquals(content, content(log), "content, unclean " + unclean);
            }
        }
    }

    @Test
    void midSegmentAtABatchBoundary() throws IOException
    {
        final byte[] kept;
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30); // 0..89
            log.highWatermark(90);
            log.flush();
            final int before = log.segmentCount();
            assertTrue(before > 3, "several segments: " + before);
            final byte[] all = content(log);
            manager.checkpoint();
            final Path points = dir.resolve(OffsetCheckpoint.RECOVERY_POINTS);
            assertEquals(90, OffsetCheckpoint.read(points).get("orders-0"));
            // 45 is a batch boundary (3-record batches) inside a sealed segment
            assertTrue(log.truncateTo(45));
            assertEquals(45, log.logEndOffset());
            assertEquals(45, log.highWatermark());
            assertTrue(log.recoveryPoint() <= 45 && log.durableOffset() <= 45, log.recoveryPoint() + " " + log.durableOffset());
            assertTrue(OffsetCheckpoint.read(points).get("orders-0") <= 45, "the recovery point on disk, at once (Kafka's too)");
            kept = content(log);
            assertEquals(15, countBatches(kept));
            assertArrayEquals(java.util.Arrays.copyOf(all, kept.length), kept, "a prefix of what was there");
            assertEquals(PartitionLog.NO_BATCH, log.readBatch(45, Long.MAX_VALUE, new RecordBatch()));
            assertFalse(log.truncateTo(45), "at the log end: nothing");
            assertFalse(log.truncateTo(100), "above it: nothing");
            append(log, 2); // 45..50: appends go on at the new log end
            assertEquals(51, log.logEndOffset());
        }
        try (LogManager manager = open())
        {
            assertEquals(51, manager.log("orders", 0).logEndOffset());
        }
        final byte[] after;
        try (LogManager manager = open())
        {
            after = content(manager.log("orders", 0));
            assertArrayEquals(kept, java.util.Arrays.copyOf(after, kept.length));
        }
        reopensTheSame(after, 0, 51);
        try (var files = Files.list(partitionDir()))
        {
            assertTrue(files.noneMatch(p -> p.toString().endsWith(".swap") || p.toString().endsWith(".cleaned")));
        }
    }

    @Test
    void atASegmentBoundaryAndInsideTheActiveSegment() throws IOException
    {
        final byte[] kept;
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30);
            final Segment[] segs = log.segments();
            final long boundary = segs[2].baseOffset;
            assertTrue(log.truncateTo(boundary));
            assertEquals(boundary, log.logEndOffset());
            assertEquals(3, log.segmentCount(), "two kept, a new active one at the boundary");
            assertEquals(boundary, log.segments()[2].baseOffset);
            append(log, 3);
            final long end = log.logEndOffset();
            assertTrue(log.truncateTo(end - 3), "inside the active segment");
            assertEquals(end - 3, log.logEndOffset());
            kept = content(log);
        }
        reopensTheSame(kept, 0, kept.length == 0 ? 0 : lastOffset(kept) + 1);
    }

    @Test
    void aBatchAcrossTheTargetGoesWhole() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 10); // batches 0..2, 3..5, ...
            assertTrue(log.truncateTo(13)); // inside 12..14
            assertEquals(13, log.logEndOffset(), "Kafka's: the log end is the target");
            assertEquals(12, lastOffset(content(log)) + 1, "the batch 12..14 went whole");
            append(log, 1); // 13..15 (a follower appends the leader's batch from the target)
            assertEquals(16, log.logEndOffset());
        }
        try (LogManager manager = open())
        {
            assertEquals(16, manager.log("orders", 0).logEndOffset());
        }
    }

    @Test
    void belowTheLogStartIsAFullTruncation() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30);
            log.highWatermark(90);
            assertEquals(60, log.deleteRecordsBefore(60));
            assertTrue(log.truncateTo(30), "below the log start 60");
            assertEquals(30, log.logStartOffset());
            assertEquals(30, log.logEndOffset());
            assertEquals(30, log.highWatermark());
            assertEquals(1, log.segmentCount());
            assertEquals(-1, log.leaderEpochCache().latestEpoch(), "the epoch cache cleared");
            assertEquals("0\n0\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
            append(log, 1);
            assertEquals(33, log.logEndOffset());
        }
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(30, log.logStartOffset());
            assertEquals(33, log.logEndOffset());
        }
    }

    @Test
    void truncateFullyAndStartAtAHigherOffset() throws IOException
    {
        final byte[] content;
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 20);
            log.truncateFullyAndStartAt(1000);
            assertEquals(1000, log.logStartOffset());
            assertEquals(1000, log.logEndOffset());
            assertEquals(1000, log.highWatermark());
            assertEquals(1000, log.transactions().lastStableOffset());
            assertEquals(1, log.segmentCount());
            append(log, 2);
            assertEquals(1006, log.logEndOffset());
            content = content(log);
            assertEquals(2, countBatches(content));
        }
        reopensTheSame(content, 1000, 1006);
    }

    @Test
    void epochsAreCutAndTheCheckpointWritten() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            log.leaderEpoch(0);
            append(log, 10); // 0..29
            log.leaderEpoch(2);
            append(log, 10); // 30..59
            log.leaderEpoch(5);
            append(log, 10); // 60..89
            log.flush();
            assertTrue(log.truncateTo(45));
            assertArrayEquals(new long[][] {{0, 0}, {2, 30}}, log.leaderEpochCache().snapshot());
            assertEquals("0\n2\n0 0\n2 30\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
            assertTrue(log.truncateTo(30));
            assertArrayEquals(new long[][] {{0, 0}}, log.leaderEpochCache().snapshot(), "an entry starting at the target goes");
            log.leaderEpoch(7); // the follower becomes leader
            append(log, 1);
            assertArrayEquals(new long[][] {{0, 0}, {7, 30}}, log.leaderEpochCache().snapshot());
        }
        uncleanStop();
        try (LogManager manager = open())
        {
            assertArrayEquals(new long[][] {{0, 0}, {7, 30}}, manager.log("orders", 0).leaderEpochCache().snapshot());
        }
    }

    @Test
    void anIdempotentProducersResentBatchIsAcceptedAfterTheTruncation() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            int seq = 0;
            for (int i = 0; i < 12; i++)
            {
                batches.producer(3, 42, (short)0, seq, false, clock.time());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                seq += 3;
            }
        } // the close's snapshot at 36
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            batches.producer(3, 42, (short)0, 36, false, clock.time());
            log.append(batches.buffer, 0, batches.length, result); // 36..38
            assertEquals(AppendResult.OK, result.status, result.toString());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.DUPLICATE, result.status, "before the truncation: a retry");
            assertTrue(log.truncateTo(30)); // drops the producer's batches of sequences 30..38
            assertFalse(Files.exists(ProducerSnapshots.snapshotFile(partitionDir(), 36)), "the snapshot above the target is gone");
            batches.producer(3, 42, (short)0, 30, false, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, "the re-sent batch of sequence 30 follows 27..29: " + result);
            assertEquals(30, result.firstOffset);
        }
    }

    @Test
    void transactionsBeyondTheTargetAreForgottenAndTheAbortIndexCut() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 2); // 0..5
            final long firstOfAborted = sendTxn(log, 7, 0);     // 6..8
            log.transactions().appendMarker(7, (short)0, 0, false, false, result); // ABORT at 9
            assertEquals(AppendResult.OK, result.status, result.toString());
            final long openFirst = sendTxn(log, 8, 0);          // 10..12, stays open below the target
            append(log, 2);                                     // 13..18
            sendTxn(log, 9, 0);                                 // 19..21
            log.transactions().appendMarker(9, (short)0, 0, false, false, result); // ABORT at 22
            sendTxn(log, 10, 0);                                // 23..25: open beyond the target
            log.highWatermark(log.logEndOffset());
            assertEquals(openFirst, log.transactions().lastStableOffset());
            assertEquals(List.of("7@" + firstOfAborted, "9@19"), aborted(log, 0));
            assertTrue(log.truncateTo(22)); // the ABORT of 9 goes: its transaction is open again, its index entry gone
            log.highWatermark(22);
            assertEquals(List.of("7@" + firstOfAborted), aborted(log, 0));
            assertEquals(openFirst, log.transactions().lastStableOffset());
            log.transactions().appendMarker(8, (short)0, 0, true, false, result); // COMMIT at 22
            assertEquals(AppendResult.OK, result.status, result.toString());
            log.highWatermark(log.logEndOffset());
            assertEquals(19, log.transactions().lastStableOffset(), "9's transaction, open again, holds it; 10's is forgotten");
        }
        uncleanStop();
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(23, log.logEndOffset());
            assertEquals(List.of("7@6"), aborted(log, 0));
        }
    }

    @Test
    void theLastStableOffsetNeverPassesAnOpenTransactionDuringTheRebuild() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 2);                            // 0..5
            final long openFirst = sendTxn(log, 8, 0); // 6..8, open below the target
            append(log, 4);                            // 9..20
            log.highWatermark(log.logEndOffset());
            assertEquals(openFirst, log.transactions().lastStableOffset());
            final long[] midRebuild = {-1};
            // a fetch thread's read between the producer state's clear and the replay that re-opens the transaction
            log.truncation().producersLoaded = () -> midRebuild[0] = log.transactions().lastStableOffset();
            assertTrue(log.truncateTo(15));
            assertTrue(midRebuild[0] >= 0, "the seam ran");
            assertTrue(midRebuild[0] <= openFirst, "read_committed must not pass the open transaction: " + midRebuild[0]);
            assertEquals(openFirst, log.transactions().lastStableOffset());
        }
    }

    @Test
    void aTailerMidReadKeepsItsBytesAcrossATruncation() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 30);
            final LogTailer tailer = new LogTailer(log, 60);
            final RecordBatch held = new RecordBatch();
            assertTrue(tailer.next(Long.MAX_VALUE, held));
            final long heldBase = held.baseOffset();
            assertTrue(log.truncateTo(15));
            // the segment it reads was taken out but stays mapped until file.delete.delay.ms: its bytes are whole
            assertEquals(heldBase, held.baseOffset());
            assertTrue(held.isCrcValid(), "the held batch's bytes after the truncation");
            final RecordBatch next = new RecordBatch();
            assertFalse(tailer.next(Long.MAX_VALUE, next), "nothing at its next offset in the truncated log");
            final RecordBatch reader = new RecordBatch();
            assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.readBatch(60, Long.MAX_VALUE, reader));
        }
    }

    private long sendTxn(final PartitionLog log, final long pid, final int seq)
    {
        batches.producer(3, pid, (short)0, seq, true, clock.time());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        return result.firstOffset;
    }

    private static List<String> aborted(final PartitionLog log, final long fetchOffset)
    {
        final List<String> seen = new ArrayList<>();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(fetchOffset, log.logEndOffset(),
            ByteBuffer.allocate(64), (p, f) -> seen.add(p + "@" + f)));
        return seen;
    }

    private static int countBatches(final byte[] content)
    {
        int n = 0;
        for (int p = 0; p < content.length; p += 12 + ByteBuffer.wrap(content, p + 8, 4).getInt())
        {
            n++;
        }
        return n;
    }

    private static long lastOffset(final byte[] content)
    {
        long last = -1;
        for (int p = 0; p < content.length; p += 12 + ByteBuffer.wrap(content, p + 8, 4).getInt())
        {
            last = ByteBuffer.wrap(content, p, 8).getLong() + ByteBuffer.wrap(content, p + 23, 4).getInt();
        }
        return last;
    }
}
