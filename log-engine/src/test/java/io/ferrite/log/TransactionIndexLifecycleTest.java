package io.ferrite.log;

import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A segment's {@code .txnindex} lives and dies with it: none for a segment without an aborted
 * transaction, found again after a clean stop, deleted by retention and DeleteRecords with the
 * segment, gone with a deleted partition's directory, cut with the log by recovery after an unclean
 * stop; and readers racing a close end with {@link LogClosedException}, never worse.
 */
class TransactionIndexLifecycleTest
{
    private static final Map<String, String> SMALL_SEGMENTS = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
        LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();

    @Test
    void aSegmentWithoutAnAbortedTransactionHasNoFileAndOneWithHasItsOwn() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("t", 0, SMALL_SEGMENTS);
            while (log.segmentCount() < 4)
            {
                append(log);
            }
            assertEquals(List.of(), txnIndexes(log.dir()), "no aborted transaction, no .txnindex");

            final long marker = append(log);
            final Segment active = log.segments()[log.segmentCount() - 1];
            active.appendAbortedTxn(5, 1, marker, marker + 1);
            assertEquals(List.of(Segment.fileName(active.baseOffset, ".txnindex")), txnIndexes(log.dir()));
            log.flush(); // fsyncs it, and the directory holding its new name
            assertEquals(34, Files.size(log.dir().resolve(Segment.fileName(active.baseOffset, ".txnindex"))));
        }
    }

    @Test
    void foundAgainAfterACleanStopAndExtendedThere() throws Exception
    {
        final long[] markers = new long[3];
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("t", 0, SMALL_SEGMENTS);
            for (int i = 0; i < 2; i++)
            {
                append(log);
                markers[i] = append(log);
                activeOf(log).appendAbortedTxn(i, markers[i] - 1, markers[i], markers[i] + 1);
                while (log.segmentCount() < 2 + i)
                {
                    append(log);
                }
            }
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("t", 0);
            assertEquals(List.of("0@" + (markers[0] - 1), "1@" + (markers[1] - 1)), collect(log, 0, log.logEndOffset()));
            markers[2] = append(log);
            assertThrows(IllegalArgumentException.class, () -> activeOf(log).appendAbortedTxn(9, 0, markers[1], 0),
                "the active segment's index refuses a marker of an earlier segment");
            activeOf(log).appendAbortedTxn(2, markers[2], markers[2], markers[2] + 1);
            assertEquals(List.of("1@" + (markers[1] - 1), "2@" + markers[2]), collect(log, markers[1], log.logEndOffset()));
        }
    }

    @Test
    void deleteRecordsAndRetentionDeleteItWithItsSegment() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("t", 0, SMALL_SEGMENTS);
            final List<Long> withIndex = new ArrayList<>();
            while (log.segmentCount() < 5)
            {
                final long marker = append(log);
                if (activeOf(log).txnIndex.entries() == 0)
                {
                    activeOf(log).appendAbortedTxn(1, marker, marker, marker + 1);
                    withIndex.add(activeOf(log).baseOffset);
                }
            }
            assertEquals(5, txnIndexes(log.dir()).size());
            final Segment[] segs = log.segments();
            log.highWatermark(log.logEndOffset());
            assertTrue(log.deleteRecordsBefore(segs[2].baseOffset) >= 0);
            assertEquals(segs[2].baseOffset, log.segments()[0].baseOffset);
            assertEquals(List.of(Segment.fileName(withIndex.get(2), ".txnindex"), Segment.fileName(withIndex.get(3), ".txnindex"),
                Segment.fileName(withIndex.get(4), ".txnindex")), txnIndexes(log.dir()), "the two deleted segments' went with them");
            assertEquals(3, collect(log, log.logStartOffset(), log.logEndOffset()).size());
            // a walk that took the segment array before the deletion still reads them until file.delete.delay.ms
            assertEquals(TransactionIndex.GO_ON, segs[0].txnIndex.collect(0, Long.MAX_VALUE, ByteBuffer.allocate(34), (p, f) -> { }));

            // retention.ms (Kafka's default, 7 days) passed for every segment but the active one
            assertEquals(2, log.deleteOldSegments(System.currentTimeMillis() + 8L * 24 * 3600 * 1000));
            assertEquals(List.of(Segment.fileName(withIndex.get(4), ".txnindex")), txnIndexes(log.dir()));
            assertEquals(List.of("1@" + (withIndex.get(4) + 2)), collect(log, log.logStartOffset(), log.logEndOffset()));
        }
    }

    @Test
    void aDeletedPartitionsIndexGoesWithItsDirectory() throws Exception
    {
        final MutableClock clock = new MutableClock(System.currentTimeMillis());
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock), true))
        {
            final AgentInvoker scheduler = manager.background().schedulerInvoker();
            final PartitionLog log = manager.createLog("t", 0, Map.of(LogConfig.FILE_DELETE_DELAY_MS, "5000"));
            final long marker = append(log);
            activeOf(log).appendAbortedTxn(1, marker, marker, marker + 1);
            manager.deleteLog("t", 0);
            assertFalse(Files.exists(dir.resolve("t-0")));
            assertEquals(1, txnIndexes(log.dir()).size(), "moved with the renamed directory");
            assertThrows(LogClosedException.class, () -> collect(log, 0, marker + 1), "a walk of the deleted log");

            clock.advance(5_000);
            scheduler.invoke(); // the segments closed, the renamed directory removed
            assertFalse(Files.exists(log.dir()), "removed after the delay");
            assertEquals(0, manager.background().schedulerErrors().count());
        }
    }

    @Test
    void recoveryAfterAnUncleanStopDropsTheEntriesOfMarkersItCut() throws Exception
    {
        final Path data = dir.resolve("data");
        final long[] firsts = new long[3];
        final long[] markers = new long[3];
        final int cutAt;
        timestamp = System.currentTimeMillis(); // a marker is stamped now: older records would roll the segment by segment.ms
        try (LogManager running = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = running.createLog("t", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "65536"));
            assertEquals(1, log.segmentCount());
            for (int i = 0; i < 3; i++)
            {
                append(log);
                firsts[i] = abortable(log, i);
                markers[i] = abort(log, i);
            }
            append(log);
            assertEquals(1, log.segmentCount(), "one segment: the cut below is in it");
            final Segment active = activeOf(log);
            assertEquals(3, active.txnIndex.entries(), "each ABORT indexed as it was written");
            cutAt = active.positionOf(markers[2], active.size());
            OpenFilesTest.copy(data, dir.resolve("unclean")); // the files as a SIGKILL would leave them
        }
        final Path unclean = dir.resolve("unclean");
        Files.deleteIfExists(unclean.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
        Files.deleteIfExists(unclean.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        try (RandomAccessFile raf = new RandomAccessFile(unclean.resolve("t-0").resolve(Segment.fileName(0, ".log")).toFile(), "rw"))
        {
            raf.setLength(cutAt); // the third marker and what follows it never reached the disk
        }
        try (LogManager manager = LogManager.open(LogManagerConfig.of(unclean)))
        {
            final PartitionLog log = manager.log("t", 0);
            assertEquals(markers[2], log.logEndOffset(), "cut at the third marker");
            assertEquals(List.of("0@" + firsts[0], "1@" + firsts[1]), collect(log, 0, log.logEndOffset()));
            assertEquals(2 * 34, Files.size(log.dir().resolve(Segment.fileName(0, ".txnindex"))));
            assertTrue(log.transactions().hasOngoingTransaction(2, (short)0), "the third transaction is open again");
            abort(log, 2); // the coordinator's marker again: the log goes on, and so does its index
            assertEquals(3, activeOf(log).txnIndex.entries());
            assertEquals(List.of("0@" + firsts[0], "1@" + firsts[1], "2@" + firsts[2]), collect(log, 0, log.logEndOffset()));
        }
    }

    /** A transactional batch of {@code pid} (epoch 0), opening its transaction; returns its first offset. */
    private long abortable(final PartitionLog log, final long pid)
    {
        batches.producer(2, pid, (short)0, 0, true, timestamp);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        return result.firstOffset;
    }

    /** An ABORT marker of {@code pid}; returns its offset. */
    private long abort(final PartitionLog log, final long pid)
    {
        log.transactions().appendMarker(pid, (short)0, 0, false, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        return result.firstOffset;
    }

    @Test
    void readersRacingACloseEndWithLogClosedException() throws Exception
    {
        for (int round = 0; round < 20; round++)
        {
            try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("r" + round))))
            {
                final PartitionLog log = manager.createLog("t", 0, SMALL_SEGMENTS);
                while (log.segmentCount() < 4)
                {
                    final long marker = append(log);
                    activeOf(log).appendAbortedTxn(1, marker, marker, marker); // LSO below every bound: walks every segment
                }
                final AtomicReference<Throwable> unexpected = new AtomicReference<>();
                final CountDownLatch started = new CountDownLatch(3);
                final Thread[] readers = new Thread[3];
                for (int i = 0; i < readers.length; i++)
                {
                    readers[i] = new Thread(() ->
                    {
                        final ByteBuffer scratch = ByteBuffer.allocateDirect(68);
                        final long[] count = new long[1];
                        started.countDown();
                        try
                        {
                            while (true)
                            {
                                final int status = log.transactions().collectAbortedTransactions(0, Long.MAX_VALUE, scratch, (p, f) -> count[0]++);
                                if (status != PartitionLog.READ_OK)
                                {
                                    throw new AssertionError("an open log's walk answered " + status);
                                }
                            }
                        }
                        catch (final LogClosedException expected)
                        {
                            // the only way out
                        }
                        catch (final Throwable t)
                        {
                            unexpected.compareAndSet(null, t);
                        }
                    });
                    readers[i].start();
                }
                assertTrue(started.await(10, TimeUnit.SECONDS));
                log.close();
                for (final Thread reader : readers)
                {
                    reader.join(TimeUnit.SECONDS.toMillis(30));
                    assertFalse(reader.isAlive(), "a reader did not see the close");
                }
                assertNull(unexpected.get());
            }
        }
    }

    /** The records' timestamp: a fixed one, or the time of day where markers (stamped now) must not roll the segment by time. */
    private long timestamp = 1_700_000_000_000L;

    private long append(final PartitionLog log)
    {
        batches.records(3, log.logEndOffset(), timestamp);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        return result.lastOffset;
    }

    private static Segment activeOf(final PartitionLog log)
    {
        final Segment[] segs = log.segments();
        return segs[segs.length - 1];
    }

    private static List<String> collect(final PartitionLog log, final long fetchOffset, final long upperBound)
    {
        final List<String> seen = new ArrayList<>();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(fetchOffset, upperBound, ByteBuffer.allocate(100),
            (p, f) -> seen.add(p + "@" + f)));
        return seen;
    }

    private static List<String> txnIndexes(final Path partitionDir) throws Exception
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".txnindex")).sorted().toList();
        }
    }
}
