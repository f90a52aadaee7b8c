package io.ferrite.log;

import org.apache.kafka.storage.internals.log.ProducerStateEntry;
import org.apache.kafka.storage.internals.log.ProducerStateManager;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partition's transaction state as Kafka 4.4 keeps it (ProducerAppendInfo, ProducerStateManager,
 * UnifiedLog): transactions opened by transactional batches and ended by markers, the last stable
 * offset, the marker checks, the aborted transactions told to the listener, snapshots and recovery.
 * Real logs on real files.
 */
class TransactionStateTest
{
    static final long T0 = System.currentTimeMillis();

    @TempDir
    Path dir;

    private LogManager manager;
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final Map<Long, Integer> sequences = new HashMap<>();
    final List<long[]> aborted = new ArrayList<>();

    @AfterEach
    void closeManager() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private PartitionLog newLog(final Map<String, String> config) throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir.resolve("data")));
        final PartitionLog log = manager.createLog("t", 0, config);
        log.transactions().abortedTxnListener((pid, first, last, lso) -> aborted.add(new long[] {pid, first, last, lso}));
        return log;
    }

    /** Appends {@code count} records of {@code pid} (epoch 0 unless given); returns the status. */
    int send(final PartitionLog log, final long pid, final short epoch, final boolean transactional, final int count)
    {
        final int seq = sequences.getOrDefault(pid, 0);
        batches.producer(count, pid, epoch, seq, transactional, T0);
        log.append(batches.buffer, 0, batches.length, result);
        if (result.status == AppendResult.OK)
        {
            sequences.put(pid, seq + count);
        }
        return result.status;
    }

    long sendOk(final PartitionLog log, final long pid, final int count)
    {
        assertEquals(AppendResult.OK, send(log, pid, (short)0, true, count), result.toString());
        return result.firstOffset;
    }

    long marker(final PartitionLog log, final long pid, final short epoch, final int coordinatorEpoch, final boolean commit,
        final boolean tv2)
    {
        log.transactions().appendMarker(pid, epoch, coordinatorEpoch, commit, tv2, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertEquals(result.firstOffset, result.lastOffset, "a marker is one record");
        return result.firstOffset;
    }

    private static void hwAtEnd(final PartitionLog log)
    {
        log.highWatermark(log.logEndOffset());
    }

    @Test
    void aTransactionHoldsTheLastStableOffsetAtItsFirstOffsetUntilItsMarker() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        assertEquals(AppendResult.OK, send(log, -1, (short)-1, false, 3));
        hwAtEnd(log);
        assertEquals(3, log.transactions().lastStableOffset(), "no transaction: the high watermark");
        final long first = sendOk(log, 7, 2);
        sendOk(log, 7, 1);
        hwAtEnd(log);
        assertEquals(first, log.transactions().lastStableOffset());
        assertTrue(log.transactions().hasOngoingTransaction(7, (short)0));
        assertFalse(log.transactions().hasOngoingTransaction(7, (short)1));
        final long commit = marker(log, 7, (short)0, 3, true, false);
        assertEquals(first, log.transactions().lastStableOffset(), "the marker is not below the high watermark yet");
        hwAtEnd(log);
        assertEquals(commit + 1, log.transactions().lastStableOffset());
        assertFalse(log.transactions().hasOngoingTransaction(7, (short)0));
        assertTrue(aborted.isEmpty(), "a commit is no aborted transaction");

        final long second = sendOk(log, 7, 4);
        final long abort = marker(log, 7, (short)0, 3, false, false);
        hwAtEnd(log);
        assertEquals(abort + 1, log.transactions().lastStableOffset());
        assertEquals(1, aborted.size());
        assertEquals(List.of(7L, second, abort, abort + 1), List.of(aborted.get(0)[0], aborted.get(0)[1], aborted.get(0)[2],
            aborted.get(0)[3]));
    }

    @Test
    void interleavedProducersMoveTheLastStableOffsetToTheOldestStillOpen() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        final long a = sendOk(log, 1, 1);
        final long b = sendOk(log, 2, 1);
        sendOk(log, 1, 1);
        final long c = sendOk(log, 3, 1);
        sendOk(log, 2, 1);
        hwAtEnd(log);
        assertEquals(a, log.transactions().lastStableOffset());
        // the middle one ends first: the oldest still holds it
        final long bEnd = marker(log, 2, (short)0, 0, false, false);
        hwAtEnd(log);
        assertEquals(a, log.transactions().lastStableOffset());
        assertEquals(List.of(2L, b, bEnd, a), List.of(aborted.get(0)[0], aborted.get(0)[1], aborted.get(0)[2], aborted.get(0)[3]),
            "the LSO of the entry: the oldest transaction of another producer still open");
        marker(log, 1, (short)0, 0, true, false);
        hwAtEnd(log);
        assertEquals(c, log.transactions().lastStableOffset());
        final long cEnd = marker(log, 3, (short)0, 0, false, false);
        hwAtEnd(log);
        assertEquals(log.logEndOffset(), log.transactions().lastStableOffset());
        assertEquals(List.of(3L, c, cEnd, cEnd + 1), List.of(aborted.get(1)[0], aborted.get(1)[1], aborted.get(1)[2],
            aborted.get(1)[3]));
    }

    @Test
    void theLastStableOffsetIsNeverAboveTheHighWatermarkNorAboveAnEndedTransactionWhoseMarkerItHasNotPassed() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        send(log, -1, (short)-1, false, 5);
        log.highWatermark(2);
        assertEquals(2, log.transactions().lastStableOffset());
        final long first = sendOk(log, 9, 3);
        sendOk(log, 4, 1);
        log.highWatermark(first + 1);
        assertEquals(first, log.transactions().lastStableOffset());
        final long end = marker(log, 9, (short)0, 0, true, false);
        // fsync durability: the high watermark is the durable offset, here inside the transaction
        log.highWatermark(first + 2);
        assertEquals(first, log.transactions().lastStableOffset(), "a crash could still lose the marker: the transaction stays unstable");
        log.highWatermark(end);
        assertEquals(first, log.transactions().lastStableOffset());
        log.highWatermark(end + 1); // no writer work in between: readers see it
        assertEquals(first + 3, log.transactions().lastStableOffset(), "then the transaction of producer 4 holds it");
        marker(log, 4, (short)0, 0, true, false);
        hwAtEnd(log);
        assertEquals(log.logEndOffset(), log.transactions().lastStableOffset());
    }

    /** Kafka's maybeIncrementFirstUnstableOffset: the LSO is never below the log start, which DeleteRecords may move past an open transaction. */
    @Test
    void theLastStableOffsetIsNeverBelowTheLogStartThatDeleteRecordsMovedPastAnOpenTransaction() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        final long first = sendOk(log, 7, 2);
        assertEquals(AppendResult.OK, send(log, -1, (short)-1, false, 6));
        hwAtEnd(log);
        assertEquals(first, log.transactions().lastStableOffset());
        assertEquals(first + 5, log.deleteRecordsBefore(first + 5));
        assertEquals(first + 5, log.transactions().lastStableOffset(), "raised to the log start");
        final FileRegion region = new FileRegion();
        assertEquals(PartitionLog.READ_OK, log.read(log.transactions().lastStableOffset(), 1 << 16, log.transactions().lastStableOffset(), true, region),
            "a read_committed fetch at the LSO is in range");
        assertEquals(AppendResult.OK, send(log, -1, (short)-1, false, 2));
        assertEquals(first + 5, log.transactions().lastStableOffset(), "the high watermark has not moved");
        hwAtEnd(log);
        assertEquals(first + 5, log.transactions().lastStableOffset(), "the transaction is still open");
        marker(log, 7, (short)0, 0, false, false);
        hwAtEnd(log);
        assertEquals(log.logEndOffset(), log.transactions().lastStableOffset());
    }

    @Test
    void aNonTransactionalBatchOfAProducerWithATransactionOpenIsRefused() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        sendOk(log, 5, 2);
        final long end = log.logEndOffset();
        assertEquals(AppendResult.INVALID_TXN_STATE, send(log, 5, (short)0, false, 1));
        assertEquals(end, log.logEndOffset(), "nothing appended");
        // another producer's idempotent batches are not concerned
        assertEquals(AppendResult.OK, send(log, 6, (short)0, false, 1));
        marker(log, 5, (short)0, 0, true, false);
        assertEquals(AppendResult.OK, send(log, 5, (short)0, false, 1), result.toString());
    }

    @Test
    void theMarkerIsTheControlBatchKafkaWritesAndGoesThroughTheAppendPath() throws IOException
    {
        final PartitionLog log = newLog(Map.of(LogConfig.MESSAGE_TIMESTAMP_TYPE, LogConfig.LOG_APPEND_TIME));
        log.leaderEpoch(4);
        sendOk(log, 21, 1);
        final long before = System.currentTimeMillis();
        final long at = marker(log, 21, (short)0, 9, false, false);
        assertTrue(result.logAppendTime >= before, "LogAppendTime: " + result.logAppendTime);
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        assertEquals(PartitionLog.READ_OK, log.readBatch(at, log.logEndOffset(), batch));
        assertEquals(at, batch.baseOffset());
        assertTrue(batch.isCrcValid());
        assertTrue(batch.isTransactional() && batch.isControl());
        assertEquals(21, batch.producerId());
        assertEquals(0, batch.producerEpoch());
        assertEquals(-1, batch.baseSequence());
        assertEquals(4, batch.partitionLeaderEpoch());
        assertEquals(1, batch.recordCount());
        assertEquals(result.logAppendTime, batch.maxTimestamp());
        final io.ferrite.wire.record.RecordReader records = new io.ferrite.wire.record.RecordReader().reset(batch);
        final io.ferrite.wire.record.Record record = records.next();
        assertEquals(io.ferrite.wire.record.ControlRecords.ABORT, io.ferrite.wire.record.ControlRecords.type(record));
        assertEquals(9, io.ferrite.wire.record.ControlRecords.coordinatorEpoch(record));

        manager.close();
        log.transactions().appendMarker(21, (short)0, 9, true, false, result);
        assertEquals(AppendResult.LOG_CLOSED, result.status, "the append path's gate");
        manager = null;
    }

    /**
     * A reader on another thread, as a fetch reads it, while the writer opens and ends transactions
     * and a third thread moves the high watermark from the log end it reads (at it, or behind it as
     * fsync durability's flusher does). The LSO the reader sees never goes back, is never above the
     * high watermark it reads next, and never above the model's oldest transaction open, or ended
     * with its marker not below the high watermark H the writer read, that the writer publishes with H
     * after each step and the reader reads after the LSO and the high watermark. That bound holds
     * whenever the high watermark the reader read is at or below H: a transaction opened since starts
     * at the log end, at or above it, and one ended since has its marker there too, so not passed.
     * (Above H the model may be stale: a transaction it lists may have ended and its marker been
     * passed since.) That check is what the publication order of {@link OngoingTxns} keeps: the
     * completion before the open list changes, both before the log end.
     */
    @Test
    void aReaderOnAnotherThreadSeesTheLastStableOffsetOnlyMoveForwardAndNeverAboveTheHighWatermarkOrTheModel() throws Exception
    {
        final PartitionLog log = newLog(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(1 << 20)));
        final java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        final java.util.concurrent.atomic.AtomicReference<String> failure = new java.util.concurrent.atomic.AtomicReference<>();
        final java.util.concurrent.atomic.AtomicReference<long[]> model = new java.util.concurrent.atomic.AtomicReference<>(
            new long[] {Long.MAX_VALUE, 0}); // {oldest unstable first offset, the high watermark it was taken at}
        final long[] reads = new long[1]; // by the reader, read after its join
        final java.util.concurrent.atomic.AtomicLong checked = new java.util.concurrent.atomic.AtomicLong(); // reads checked against the model
        final Thread reader = new Thread(() ->
        {
            long last = -1;
            while (!done.get() && failure.get() == null)
            {
                final long lso = log.transactions().lastStableOffset();
                final long hw = log.highWatermark();
                final long[] bound = model.get();
                if (lso < last || lso > hw || (hw <= bound[1] && lso > bound[0]))
                {
                    failure.set("LSO " + lso + " after " + last + ", high watermark " + hw + ", model's oldest unstable " + bound[0] +
                        " at high watermark " + bound[1]);
                }
                last = lso;
                reads[0]++;
                if (hw <= bound[1])
                {
                    checked.incrementAndGet();
                }
            }
        }, "lso-reader");
        final Thread mover = new Thread(() ->
        {
            final java.util.Random r = new java.util.Random(7);
            long seen = 0;
            while (!done.get() && failure.get() == null)
            {
                final long end = log.logEndOffset();
                if (end != seen) // once per append, as a flush's durable offset moves
                {
                    final long hw = log.highWatermark();
                    log.highWatermark(r.nextBoolean() ? end : hw + (end - hw) / 2);
                    seen = end;
                }
            }
        }, "hw-mover");
        reader.start();
        mover.start();
        final java.util.Random r = new java.util.Random(42);
        final Map<Long, Long> open = new HashMap<>();
        final List<long[]> ended = new ArrayList<>(); // {first offset, marker offset}
        // at least 20000 steps; then on (bounded) until the reader checked enough reads against the model: on a loaded
        // machine the reader may get little of a core while the writer steps
        for (int i = 0; i < 400_000 && failure.get() == null && (i < 20_000 || checked.get() < 1_000); i++)
        {
            final long pid = 1 + r.nextInt(5);
            if (open.containsKey(pid) && r.nextInt(3) == 0)
            {
                ended.add(new long[] {open.remove(pid), marker(log, pid, (short)0, 0, r.nextBoolean(), false)});
            }
            else
            {
                final long first = sendOk(log, pid, 1);
                open.putIfAbsent(pid, first);
            }
            final long hw = log.highWatermark();
            ended.removeIf(e -> e[1] < hw);
            long bound = Long.MAX_VALUE;
            for (final long first : open.values())
            {
                bound = Math.min(bound, first);
            }
            for (final long[] e : ended)
            {
                bound = Math.min(bound, e[0]);
            }
            model.set(new long[] {bound, hw});
        }
        done.set(true);
        reader.join(10_000);
        mover.join(10_000);
        assertEquals(null, failure.get());
        assertTrue(checked.get() >= 1_000, reads[0] + " reads, " + checked.get() + " checked against the model");
    }

    @Test
    void aClientsControlBatchIsAnInvalidRecord() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        final int length = new io.ferrite.wire.record.RecordBatchBuilder().wrap(batches.buffer, 0).producer(3, (short)0, -1)
            .transactional(true).control(true).appendEndTxnMarker(T0, true, 0).build();
        log.append(batches.buffer, 0, length, result);
        assertEquals(AppendResult.INVALID_RECORD, result.status, result.toString());
        assertEquals("Clients are not allowed to write control records in topic partition t-0", result.message);
    }

    @Test
    void markersFollowKafkasEpochRulesForEachTransactionVersion() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        // transaction version 1: not below the producer's epoch
        sendOk(log, 1, 1);
        log.transactions().appendMarker(1, (short)-1, 0, true, false, result);
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, result.status);
        marker(log, 1, (short)0, 0, true, false);
        marker(log, 1, (short)0, 0, true, false); // a retry of the same marker: appended again, as Kafka does
        marker(log, 1, (short)2, 0, false, false); // a fence: a higher epoch is taken
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, send(log, 1, (short)0, true, 1), "the old epoch is fenced");

        // transaction version 2: above the producer's epoch, but for a retry
        assertEquals(AppendResult.OK, send(log, 2, (short)5, true, 1));
        log.transactions().appendMarker(2, (short)5, 0, true, true, result);
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, result.status, "the same epoch with the transaction open");
        final long commit = marker(log, 2, (short)6, 0, true, true);
        final long retry = marker(log, 2, (short)6, 0, true, true);
        assertEquals(commit + 1, retry, "a retry of the bumped marker: no transaction open, so accepted");
        log.transactions().appendMarker(2, (short)5, 0, true, true, result);
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, result.status);

        // the coordinator epoch: never below the producer's last
        marker(log, 2, (short)7, 4, true, true);
        final long end = log.logEndOffset();
        log.transactions().appendMarker(2, (short)8, 3, true, true, result);
        assertEquals(AppendResult.TRANSACTION_COORDINATOR_FENCED, result.status, result.toString());
        assertEquals(end, log.logEndOffset(), "nothing appended");
        marker(log, 2, (short)8, 4, true, true);

        // a marker for a producer this partition never saw is appended, and opens nothing
        marker(log, 99, (short)0, 0, false, true);
        hwAtEnd(log);
        assertEquals(log.logEndOffset(), log.transactions().lastStableOffset());
        assertTrue(aborted.isEmpty(), aborted.toString());
    }

    @Test
    void aMarkerOnAnEpochChangeForgetsTheCachedBatchesAndDescribeProducersShowsTheState() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        sendOk(log, 1, 2);
        final long open = sendOk(log, 2, 1);
        marker(log, 1, (short)1, 6, true, true);
        final List<String> seen = new ArrayList<>();
        log.transactions().forEachProducer((pid, epoch, lastSeq, lastTs, coordinatorEpoch, txnFirst) ->
            seen.add(pid + "/" + epoch + "/" + lastSeq + "/" + coordinatorEpoch + "/" + txnFirst + "/" + (lastTs > 0)));
        seen.sort(String::compareTo);
        assertEquals(List.of("1/1/-1/6/-1/true", "2/0/0/-1/" + open + "/true"), seen);
        // epoch 1 starts at sequence 0 again
        sequences.put(1L, 0);
        assertEquals(AppendResult.OK, send(log, 1, (short)1, true, 1), result.toString());
    }

    /** Kafka's checkSequence: an entry with an epoch but no batch has last sequence -1, so the next batch starts at 0. */
    @Test
    void aBatchAfterAMarkerThatLeftTheProducerWithoutBatchesMustStartAtSequenceZero() throws IOException
    {
        final PartitionLog log = newLog(Map.of());
        sendOk(log, 3, 2);
        marker(log, 3, (short)1, 0, true, true); // TV2: epoch 1, the cached batches forgotten
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, 3, (short)1, 5), result.toString());
        assertEquals(AppendResult.OK, append(log, 3, (short)1, 0), result.toString());
        assertEquals(AppendResult.OK, append(log, 3, (short)1, 1), result.toString());

        marker(log, 50, (short)2, 0, false, true); // a producer never seen: its epoch is known from now on
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, 50, (short)2, 3), result.toString());
        assertEquals(AppendResult.OK, append(log, 50, (short)2, 0), result.toString());

        assertEquals(AppendResult.OK, append(log, 60, (short)0, 7), "a producer unknown to the partition: any sequence");
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, append(log, 60, (short)1, 3), "a new epoch starts at 0");
        assertEquals(AppendResult.OK, append(log, 60, (short)1, 0), result.toString());
    }

    /** Appends one transactional record of {@code pid} with this epoch and sequence; returns the status. */
    private int append(final PartitionLog log, final long pid, final short epoch, final int sequence)
    {
        batches.producer(1, pid, epoch, sequence, true, T0);
        log.append(batches.buffer, 0, batches.length, result);
        return result.status;
    }

    @Test
    void expiryNeverForgetsAProducerWithATransactionOpen()
    {
        final io.ferrite.log.ProducerStateManager producers = new io.ferrite.log.ProducerStateManager(dir);
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        batches.producer(1, 1, (short)0, 0, true, T0);
        producers.update(batch.wrap(batches.buffer, 0));
        batches.producer(1, 2, (short)0, 0, false, T0);
        batches.buffer.putLong(0, 1); // at offset 1
        producers.update(batch.wrap(batches.buffer, 0));
        producers.expire(T0 + 1_000_000, 1);
        assertTrue(producers.producer(1) != null, "open transaction: kept");
        assertTrue(producers.producer(2) == null, "idle and no transaction: expired");
        assertEquals(0, producers.lastStableOffset(Long.MAX_VALUE, 0));
    }

    @Test
    void aSnapshotKeepsTheOpenTransactionsAndKafkasReaderReadsThem() throws Exception
    {
        PartitionLog log = newLog(Map.of());
        final long first = sendOk(log, 11, 2);
        sendOk(log, 12, 1);
        marker(log, 12, (short)0, 5, false, false);
        final long end = log.logEndOffset();
        manager.close(); // a clean close writes <end>.snapshot
        manager = null;

        final List<ProducerStateEntry> entries = ProducerStateManager.readSnapshot(
            io.ferrite.log.ProducerSnapshots.snapshotFile(dir.resolve("data").resolve("t-0"), end).toFile());
        entries.sort((x, y) -> Long.compare(x.producerId(), y.producerId()));
        assertEquals(2, entries.size());
        assertEquals(first, entries.get(0).currentTxnFirstOffset().getAsLong());
        assertTrue(entries.get(1).currentTxnFirstOffset().isEmpty());
        assertEquals(5, entries.get(1).coordinatorEpoch());

        manager = LogManager.open(LogManagerConfig.of(dir.resolve("data")));
        log = manager.log("t", 0);
        assertEquals(first, log.transactions().lastStableOffset(), "the open transaction is back");
        assertTrue(log.transactions().hasOngoingTransaction(11, (short)0));
        assertEquals(AppendResult.INVALID_TXN_STATE, send(log, 11, (short)0, false, 1));
        log.transactions().appendMarker(12, (short)0, 4, true, false, result);
        assertEquals(AppendResult.TRANSACTION_COORDINATOR_FENCED, result.status, "the coordinator epoch is back");
        marker(log, 11, (short)0, 0, true, false);
        hwAtEnd(log);
        assertEquals(log.logEndOffset(), log.transactions().lastStableOffset());
    }

    @Test
    void recoveryRebuildsTheOpenTransactionsAndReportsTheAbortedOnes() throws Exception
    {
        final Path data = dir.resolve("data");
        final long open;
        final List<long[]> expected = new ArrayList<>();
        final long[] bases;
        try (LogManager running = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = running.createLog("t", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500"));
            log.transactions().abortedTxnListener((pid, first, last, lso) -> expected.add(new long[] {pid, first, last, lso}));
            long longOpen = -1;
            for (int i = 0; i < 30; i++)
            {
                final long pid = 100 + i % 4;
                sendOk(log, pid, 1 + i % 3);
                if (i == 5)
                {
                    longOpen = sendOk(log, 7, 1); // open across rolls: in the snapshots
                }
                if (i % 4 == 3)
                {
                    for (long p = 100; p < 104; p++)
                    {
                        marker(log, p, (short)0, 1, p % 2 == 0, false);
                    }
                }
            }
            open = longOpen;
            assertTrue(log.segmentCount() > 2, "rolled: snapshots taken");
            bases = java.util.Arrays.stream(log.segments()).mapToLong(s -> s.baseOffset).toArray();
            OpenFilesTest.copy(data, dir.resolve("crashed")); // the files as a SIGKILL would leave them
            OpenFilesTest.copy(data, dir.resolve("crashed2"));
        }
        // from the start (no snapshot at or below 0): every aborted transaction is reported again
        final List<long[]> all = new ArrayList<>();
        try (PartitionLog log = LogLoader.load("t", 0, dir.resolve("crashed").resolve("t-0"),
            LogConfig.of(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500")), WriteStrategy.MAPPED,
            org.agrona.concurrent.SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, 0, 0,
            (pid, first, last, lso) -> all.add(new long[] {pid, first, last, lso})))
        {
            assertEquals(open, log.transactions().lastStableOffset(), "producer 7's transaction is open again");
            assertTrue(log.transactions().hasOngoingTransaction(7, (short)0));
            assertEquals(toString(expected), toString(all));
        }
        // from the last segment, after the snapshot taken when it was rolled: the aborted ones in it
        final long lastBase = bases[bases.length - 1];
        final List<long[]> tail = new ArrayList<>();
        try (PartitionLog log = LogLoader.load("t", 0, dir.resolve("crashed2").resolve("t-0"),
            LogConfig.of(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500")), WriteStrategy.MAPPED,
            org.agrona.concurrent.SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, lastBase, 0,
            (pid, first, last, lso) -> tail.add(new long[] {pid, first, last, lso})))
        {
            assertEquals(open, log.transactions().lastStableOffset());
            assertEquals(toString(expected.stream().filter(e -> e[2] >= lastBase).toList()), toString(tail));
        }
        assertTrue(expected.size() > 5, "aborted transactions: " + expected.size());
    }

    static String toString(final List<long[]> entries)
    {
        final StringBuilder b = new StringBuilder();
        for (final long[] e : entries)
        {
            b.append(java.util.Arrays.toString(e)).append('\n');
        }
        return b.toString();
    }
}
