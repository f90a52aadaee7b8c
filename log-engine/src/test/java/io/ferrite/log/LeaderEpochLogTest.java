package io.ferrite.log;

import io.ferrite.log.epoch.LeaderEpochCheckpoint;
import org.apache.kafka.storage.internals.checkpoint.LeaderEpochCheckpointFile;
import org.apache.kafka.storage.internals.log.EpochEntry;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The leader-epoch cache of a real log: assigned as batches are placed, kept in its checkpoint, rebuilt and cut at open. */
class LeaderEpochLogTest extends OrdersLogFixture
{
    private void append(final PartitionLog log, final int epoch, final int batchCount)
    {
        log.leaderEpoch(epoch);
        appendAlone(log, batchCount);
    }

    /** A closed log of ten 3-record batches per epoch given. */
    private void logOfEpochs(final int... epochs) throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            for (final int epoch : epochs)
            {
                append(log, epoch, 10);
            }
        }
    }

    @Test
    void eachNewEpochAssignsItsFirstOffsetAndTheFileKeepsThemAcrossAReopen() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            assertEquals(-1, log.leaderEpochCache().latestEpoch(), "no batch yet: no epoch");
            append(log, 0, 10);   // offsets 0..29
            append(log, 2, 10);   // 30..59
            append(log, 2, 5);    // 60..74: the same epoch, no entry
            append(log, 5, 10);   // 75..104
            assertArrayEquals(new long[][] {{0, 0}, {2, 30}, {5, 75}}, log.leaderEpochCache().snapshot());
            assertTrue(log.segmentCount() > 2, "several segments: " + log.segmentCount());
            log.flush();
            assertEquals("0\n3\n0 0\n2 30\n5 75\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        }
        // Kafka's own reader takes the file the close left
        assertEquals(List.of(new EpochEntry(0, 0), new EpochEntry(2, 30), new EpochEntry(5, 75)),
            new LeaderEpochCheckpointFile(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME).toFile(), new LogDirFailureChannel(1)).read());
        // the clean reopen takes the cache from the file, not from the batches: a file that (validly) says epoch 2
        // started at 31 shows there, where a rebuild from the batch headers would say 30
        Files.writeString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME), "0\n3\n0 0\n2 31\n5 75\n");
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertArrayEquals(new long[][] {{0, 0}, {2, 31}, {5, 75}}, log.leaderEpochCache().snapshot());
            append(log, 5, 1);
            append(log, 7, 1);
            assertArrayEquals(new long[][] {{0, 0}, {2, 31}, {5, 75}, {7, 108}}, log.leaderEpochCache().snapshot());
        }
    }

    /** Kafka's {@code Partition.makeLeader}: {@code maybeAssignEpochStartOffset(leaderEpoch, logEndOffset)} before any batch. */
    @Test
    void becomingLeaderAssignsTheEpochAtTheLogEndBeforeItsFirstBatch() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 0, 10); // 0..29
            log.leaderEpoch(4);
            assertArrayEquals(new long[][] {{0, 0}, {4, 30}}, log.leaderEpochCache().snapshot(), "assigned with no batch of epoch 4");
            final io.ferrite.log.epoch.LeaderEpochCache.EpochOffset answer = new io.ferrite.log.epoch.LeaderEpochCache.EpochOffset();
            log.leaderEpochCache().endOffsetFor(0, log.logEndOffset(), answer);
            assertEquals(30, answer.endOffset, "a follower of epoch 0 is told where epoch 0 ended");
            append(log, 4, 2); // 30..35
            log.leaderEpoch(4); // the same epoch again: its start stays
            append(log, 4, 1);
            assertArrayEquals(new long[][] {{0, 0}, {4, 30}}, log.leaderEpochCache().snapshot());
            log.leaderEpoch(6);
            log.flush();
            assertEquals("0\n3\n0 0\n4 30\n6 39\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        }
    }

    /**
     * A single node (no {@code leaderEpoch(int)} call) goes on in the newest epoch its log knew at the open — here a
     * restarted Kafka's, assigned at the log end with no batch after it: the open cuts that entry as Kafka's loader does,
     * but the epoch is the log's, answered as ending at the log end, stamped on the next batch and assigned once.
     */
    @Test
    void aSingleNodeGoesOnInTheNewestEpochItsLogKnew() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            assertEquals(0, log.leaderEpoch(), "a new log: epoch 0");
            appendAlone(log, 10); // 0..29
            assertArrayEquals(new long[][] {{0, 0}}, log.leaderEpochCache().snapshot());
        }
        Files.writeString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME), "0\n2\n0 0\n2 30\n");
        final io.ferrite.log.epoch.LeaderEpochCache.EpochOffset answer = new io.ferrite.log.epoch.LeaderEpochCache.EpochOffset();
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertArrayEquals(new long[][] {{0, 0}}, log.leaderEpochCache().snapshot(), "the entry at the log end cut");
            assertEquals(2, log.leaderEpoch(), "but its epoch is the log's");
            assertEquals("2/30", endOffset(log, 2, answer), "the current epoch ends at the log end");
            assertEquals("0/30", endOffset(log, 0, answer), "epoch 0 ends where epoch 2 starts");
            assertEquals("0/30", endOffset(log, 1, answer));
            assertEquals("-1/-1", endOffset(log, 3, answer), "newer than the log's");
            assertEquals(0, log.epochForOffset(29));
            assertEquals(2, log.epochForOffset(30));
            appendAlone(log, 2); // 30..35: stamped 2
            assertArrayEquals(new long[][] {{0, 0}, {2, 30}}, log.leaderEpochCache().snapshot(), "assigned by the batch");
            assertEquals("2/36", endOffset(log, 2, answer));
            appendAlone(log, 1);
            assertEquals(2, log.leaderEpochCache().size(), "the same epoch: no new entry");
        }
        assertEquals("0\n2\n0 0\n2 30\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        try (LogManager manager = open()) // Ferrite's own restart keeps the epoch (no bump)
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(2, log.leaderEpoch());
            appendAlone(log, 1);
            assertArrayEquals(new long[][] {{0, 0}, {2, 30}}, log.leaderEpochCache().snapshot());
        }
    }

    private void appendAlone(final PartitionLog log, final int batchCount)
    {
        for (int i = 0; i < batchCount; i++)
        {
            batches.records(3, i, clock.time());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
    }

    private static String endOffset(final PartitionLog log, final int epoch, final io.ferrite.log.epoch.LeaderEpochCache.EpochOffset out)
    {
        log.endOffsetForEpoch(epoch, out);
        return out.epoch + "/" + out.endOffset;
    }

    @Test
    void anUncleanOpenCutsEntriesPastTheRecoveredEndAndRebuildsWhatTheFileMissed() throws IOException
    {
        logOfEpochs(0, 3);
        // a file written before epoch 3's batches were flushed: recovery re-reads them (no recovery point) and assigns it
        Files.writeString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME), "0\n1\n0 0\n");
        uncleanStop();
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.log("orders", 0);
            assertEquals(60, log.logEndOffset());
            assertArrayEquals(new long[][] {{0, 0}, {3, 30}}, log.leaderEpochCache().snapshot());
        }
        assertEquals("0\n2\n0 0\n3 30\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)),
            "the close's flush wrote what the open found");
        // a file with an entry past what the crash kept (epoch 9 at 500): cut to the recovered log end, as Kafka's loader
        Files.writeString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME), "0\n3\n0 0\n3 30\n9 500\n");
        uncleanStop();
        try (LogManager manager = open())
        {
            assertArrayEquals(new long[][] {{0, 0}, {3, 30}}, manager.log("orders", 0).leaderEpochCache().snapshot());
        }
    }

    @Test
    void aLogWithoutAFileIsRebuiltFromItsBatchesAndTheFileWrittenAtTheNextFlush() throws IOException
    {
        logOfEpochs(0, 4);
        Files.delete(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)); // as a log from before this file was kept
        try (LogManager manager = open()) // a clean open: no segment recovered, every header walked once
        {
            final PartitionLog log = manager.log("orders", 0);
            assertArrayEquals(new long[][] {{0, 0}, {4, 30}}, log.leaderEpochCache().snapshot());
            assertFalse(Files.exists(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)), "the open writes no file");
            log.flush();
            assertEquals("0\n2\n0 0\n4 30\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        }
    }

    @Test
    void theLogStartMovingUpMovesTheFirstEntryUp() throws IOException
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 0, 10);
            append(log, 1, 10);
            append(log, 2, 10);
            log.highWatermark(log.logEndOffset());
            assertEquals(45, log.deleteRecordsBefore(45));
            assertArrayEquals(new long[][] {{1, 45}, {2, 60}}, log.leaderEpochCache().snapshot());
        }
        // the close's flush wrote the moved entry (a reopen alone would cut the cache to the log start anyway)
        assertEquals("0\n2\n1 45\n2 60\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        try (LogManager manager = open())
        {
            assertArrayEquals(new long[][] {{1, 45}, {2, 60}}, manager.log("orders", 0).leaderEpochCache().snapshot());
        }
    }

    @Test
    void aDamagedFileFailsTheOpenWithKafkasMessage() throws IOException
    {
        try (LogManager manager = open())
        {
            append(manager.createLog("orders", 0, SMALL), 0, 2);
        }
        Files.writeString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME), "0\n2\n0 0\n");
        final Exception ex = org.junit.jupiter.api.Assertions.assertThrows(Exception.class, this::open);
        assertTrue(String.valueOf(ex.getMessage()).contains("Expected [2] entries in checkpoint file") ||
            causes(ex).contains("Expected [2] entries in checkpoint file"), causes(ex));
    }

    /**
     * A checkpoint write that fails (ENOSPC, EIO: here a directory stands where its tmp file goes) after the data's
     * fsyncs succeeded: the durable offset moves (acks=all answers and awaitDurable waiters are not held), the recovery
     * point stays where the file's entries cover, the log stays writable, and the next flush that writes the file moves
     * the recovery point up; the close that cannot write it fails, so the next open is unclean and rebuilds the epochs.
     */
    @Test
    void aFailedCheckpointWriteMovesTheDurableOffsetAndHoldsOnlyTheRecoveryPoint() throws Exception
    {
        final LogManager manager = open();
        final PartitionLog log = manager.createLog("orders", 0, SMALL);
        append(log, 0, 2);
        log.flush();
        assertEquals(6, log.recoveryPoint());
        final Path tmp = blockCheckpointWrites();
        append(log, 3, 1); // a new epoch: the file must change
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class, log::flush);
        assertEquals(9, log.durableOffset(), "the data's fsyncs succeeded: durable");
        assertTrue(log.awaitDurable(9, 10_000), "a waiter is answered");
        assertEquals(6, log.recoveryPoint(), "held: the file does not have epoch 3's entry");
        org.junit.jupiter.api.Assertions.assertNull(log.fsyncFailure(), "not a failed fsync");
        append(log, 3, 1);
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class, log::flush);
        assertEquals(12, log.durableOffset());
        assertEquals(6, log.recoveryPoint());
        // the close cannot write it either: it fails, so no clean shutdown is marked
        org.junit.jupiter.api.Assertions.assertThrows(IOException.class, manager::close);
        assertFalse(Files.exists(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE)));
        unblock(tmp);
        try (LogManager reopened = open())
        {
            final PartitionLog again = reopened.log("orders", 0);
            assertEquals(12, again.logEndOffset());
            assertArrayEquals(new long[][] {{0, 0}, {3, 6}}, again.leaderEpochCache().snapshot(), "rebuilt by the unclean open");
            append(again, 3, 1);
            again.flush();
            assertEquals(15, again.recoveryPoint(), "a flush that writes the file moves the recovery point");
            assertEquals("0\n2\n0 0\n3 6\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        }
    }

    @Test
    void aHeldRecoveryPointCatchesUpAtTheNextFlushThatWritesTheFile() throws Exception
    {
        try (LogManager manager = open())
        {
            final PartitionLog log = manager.createLog("orders", 0, SMALL);
            append(log, 0, 2);
            log.flush();
            final Path tmp = blockCheckpointWrites();
            append(log, 4, 1);
            org.junit.jupiter.api.Assertions.assertThrows(IOException.class, log::flush);
            assertEquals(9, log.durableOffset());
            assertEquals(6, log.recoveryPoint());
            unblock(tmp);
            log.flush(); // nothing appended since: the durable offset stays, the recovery point catches up
            assertEquals(9, log.durableOffset());
            assertEquals(9, log.recoveryPoint());
            assertEquals("0\n2\n0 0\n4 6\n", Files.readString(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME)));
        }
    }

    /** The checkpoint's tmp file cannot be made (as on ENOSPC or EIO): a directory with a file in it stands there. */
    private Path blockCheckpointWrites() throws IOException
    {
        final Path tmp = Files.createDirectory(partitionDir().resolve(LeaderEpochCheckpoint.FILE_NAME + ".tmp"));
        Files.writeString(tmp.resolve("x"), "x");
        return tmp;
    }

    private static void unblock(final Path tmp) throws IOException
    {
        Files.delete(tmp.resolve("x"));
        Files.delete(tmp);
    }

    private static String causes(final Throwable t)
    {
        final StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause())
        {
            sb.append(c).append(" <- ");
        }
        return sb.toString();
    }
}
