package io.ferrite.log;

import org.agrona.concurrent.SystemEpochClock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An ABORT marker and its {@code .txnindex} entry: the entry goes into the segment that holds the
 * marker, before the marker is published (a marker whose entry cannot be written is not written, and
 * its transaction stays open for the coordinator's retry); a COMMIT has none; and recovery after an
 * unclean stop rebuilds the index of the segments it scans from their markers (an entry the crash
 * lost comes back), as Kafka's LogSegment.recover does. Real logs on real files.
 */
class AbortIndexTest
{
    private static final long PID = 7;
    private static final Map<String, String> SMALL_SEGMENTS = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500");

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private int sequence;

    private long sendTransactional(final PartitionLog log, final long pid, final int count)
    {
        batches.producer(count, pid, (short)0, sequence, true, TransactionStateTest.T0);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        sequence += count;
        return result.firstOffset;
    }

    private static List<String> aborted(final PartitionLog log, final long fetchOffset)
    {
        final List<String> seen = new ArrayList<>();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(fetchOffset, log.logEndOffset(), ByteBuffer.allocate(64),
            (p, f) -> seen.add(p + "@" + f)));
        return seen;
    }

    private static List<String> txnIndexFiles(final Path partitionDir) throws Exception
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(TransactionIndex.SUFFIX)).sorted().toList();
        }
    }

    @Test
    void anAbortIsIndexedInTheSegmentHoldingItsMarkerAndACommitIsNot() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = logs.createLog("t", 0, SMALL_SEGMENTS);
            final long committed = sendTransactional(log, PID, 2);
            log.transactions().appendMarker(PID, (short)0, 0, true, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(List.of(), txnIndexFiles(dir.resolve("t-0")), "a commit has no entry");

            final long first = sendTransactional(log, PID, 3);
            while (log.segmentCount() < 3)
            {
                sendTransactional(log, PID, 5); // the transaction spans rolls: its marker is in a later segment
            }
            log.transactions().appendMarker(PID, (short)0, 0, false, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            final long marker = result.firstOffset;
            final Segment holding = log.segments()[log.segments().length - 1];
            assertTrue(holding.baseOffset <= marker && holding.baseOffset > first, "the marker's segment is not the first batch's");
            assertEquals(List.of(Segment.fileName(holding.baseOffset, TransactionIndex.SUFFIX)), txnIndexFiles(dir.resolve("t-0")));
            assertEquals(List.of(PID + "@" + first), aborted(log, committed));
            assertEquals(marker, holding.txnIndex.lastOffset());
        }
    }

    @Test
    void aMarkerWhoseEntryCannotBeWrittenIsNotWrittenAndItsRetryIs() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of());
            final long first = sendTransactional(log, PID, 2);
            log.highWatermark(log.logEndOffset());
            final long end = log.logEndOffset();
            // what stands where the entry's file would be made: its creation fails as on a full or broken disk
            final Path blocker = dir.resolve("t-0").resolve(Segment.fileName(0, TransactionIndex.SUFFIX));
            Files.createDirectory(blocker);
            log.transactions().appendMarker(PID, (short)0, 0, false, false, result);
            assertEquals(AppendResult.STORAGE_ERROR, result.status, result.toString());
            assertEquals(end, log.logEndOffset(), "no marker without its entry");
            assertTrue(log.transactions().hasOngoingTransaction(PID, (short)0), "the transaction is still open");
            assertEquals(first, log.transactions().lastStableOffset());

            Files.delete(blocker);
            log.transactions().appendMarker(PID, (short)0, 0, false, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(end, result.firstOffset, "the retry's marker takes the offset the failed one did not");
            assertFalse(log.transactions().hasOngoingTransaction(PID, (short)0));
            assertEquals(List.of(PID + "@" + first), aborted(log, 0));
        }
    }

    @Test
    void recoveryRebuildsTheIndexOfTheSegmentsItScansFromTheirMarkers() throws Exception
    {
        final Path data = dir.resolve("data");
        final List<String> expected = new ArrayList<>();
        try (LogManager logs = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = logs.createLog("t", 0, SMALL_SEGMENTS);
            for (int i = 0; i < 12; i++)
            {
                final long first = sendTransactional(log, PID, 2 + i % 3);
                log.transactions().appendMarker(PID, (short)0, 0, i % 3 == 0, false, result);
                assertEquals(AppendResult.OK, result.status, result.toString());
                if (i % 3 != 0)
                {
                    expected.add(PID + "@" + first);
                }
            }
            assertTrue(log.segmentCount() > 2);
            assertEquals(expected, aborted(log, 0));
            OpenFilesTest.copy(data, dir.resolve("crashed")); // the files as a SIGKILL would leave them
        }
        final Path crashed = dir.resolve("crashed").resolve("t-0");
        final List<String> files = txnIndexFiles(crashed);
        assertTrue(files.size() > 1, "entries in several segments: " + files);
        for (final String f : files)
        {
            Files.delete(crashed.resolve(f)); // lost in the crash (their names or pages never reached the disk)
        }
        try (PartitionLog log = LogLoader.load("t", 0, crashed, LogConfig.of(SMALL_SEGMENTS), WriteStrategy.MAPPED,
            SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, 0, 0))
        {
            assertEquals(expected, aborted(log, 0), "rebuilt from the markers recovery scanned");
            assertEquals(files, txnIndexFiles(crashed), "in the segments that hold the markers");
        }
    }
    /**
     * Overlapping segments (the loader keeps them): an empty segment whose base lies below an ABORT
     * marker of the segment before it. Recovery indexes the marker into the segment it walks, the one
     * holding it; found by offset, the entry went to the later segment, whose own recovery then
     * emptied its index: the aborted transaction was lost to read_committed fetches.
     */
    @Test
    void recoveryIndexesAMarkerInTheSegmentHoldingItWhenALaterSegmentStartsBelowIt() throws Exception
    {
        final Path data = dir.resolve("data");
        final long first;
        final long marker;
        try (LogManager logs = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of());
            first = sendTransactional(log, PID, 3);
            log.transactions().appendMarker(PID, (short)0, 0, false, false, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            marker = result.firstOffset;
            OpenFilesTest.copy(data, dir.resolve("crashed"));
        }
        final Path crashed = dir.resolve("crashed").resolve("t-0");
        assertEquals(List.of(Segment.fileName(0, TransactionIndex.SUFFIX)), txnIndexFiles(crashed));
        Files.createFile(crashed.resolve(Segment.fileName(marker, Segment.LOG_SUFFIX))); // a later segment based at the marker
        try (PartitionLog log = LogLoader.load("t", 0, crashed, LogConfig.of(Map.of()), WriteStrategy.MAPPED,
            SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, 0, 0))
        {
            assertEquals(2, log.segmentCount());
            assertEquals(List.of(PID + "@" + first), aborted(log, 0));
            assertEquals(List.of(Segment.fileName(0, TransactionIndex.SUFFIX)), txnIndexFiles(crashed));
        }
    }
}
