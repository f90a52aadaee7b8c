package io.ferrite.log;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link LogTransactions#lastBatchesOfProducers}, a log cleaner's copy of the producer state: each producer's last
 * data batch as the writer knows it, rebuilt from the newest snapshot and the log after it, with the expired
 * producers of the snapshot left out; markers bump the epoch and forget the producer's batches as the writer's do.
 */
class ProducerStateCopyTest
{
    private static final long EXPIRY_MS = 60_000;
    private static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1024",
        LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private LogManager manager;

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private PartitionLog open() throws IOException
    {
        return open(SMALL);
    }

    private PartitionLog open(final Map<String, String> config) throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withProducerIdExpiration(EXPIRY_MS, 1000, WriterTasks.NONE));
        final PartitionLog existing = manager.log("p", 0);
        return existing != null ? existing : manager.createLog("p", 0, config);
    }

    @Test
    void theCopyHasEachProducersLastDataBatchAcrossSnapshotsAndTheActiveSegment() throws Exception
    {
        PartitionLog log = open();
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        final Map<Long, Long> expected = new TreeMap<>();
        // producer 7 writes first and is expired by the reopen below: its recovery forgets it, and the copy leaves it out
        b.build(2, 7, clock.time(), io.ferrite.wire.compress.CompressionType.NONE, 7, (short)0, 0);
        log.append(b.buffer, 0, b.length, result);
        clock.advance(EXPIRY_MS + 1);
        expected.putAll(sixtyBatchesOfProducersOneToThree(log, b, result));
        assertTrue(log.segmentCount() > 3, "rolled: snapshots written");
        manager.close();
        log = open(); // the close's snapshot, then more in the active segment
        for (int i = 0; i < 4; i++)
        {
            b.build(1, i, clock.time(), io.ferrite.wire.compress.CompressionType.NONE, 4, (short)0, i);
            log.append(b.buffer, 0, b.length, result);
            expected.put(4L, result.lastOffset);
        }
        log.transactions().appendMarker(5, (short)3, 0, true, false, result); // a producer with markers only
        expected.put(5L, -1L);
        final Map<Long, Long> copy = new TreeMap<>();
        final Map<Long, Short> epochs = new TreeMap<>();
        log.transactions().lastBatchesOfProducers(bytes -> { }, (pid, lastDataOffset, epoch) ->
        {
            copy.put(pid, lastDataOffset);
            epochs.put(pid, epoch);
        });
        assertEquals(expected, copy);
        assertEquals((short)3, epochs.get(5L));
        try (Stream<Path> files = Files.list(log.dir()))
        {
            assertTrue(files.anyMatch(p -> p.toString().endsWith(ProducerSnapshots.SNAPSHOT_SUFFIX)), "a snapshot was read");
        }
    }

    @Test
    void aCopyTakenWhileTheWriterAppendsAndRollsIsOneTheLogBacks() throws Exception
    {
        // a roll every 20 batches or so (each roll writes a snapshot, which the copies read as it comes)
        final PartitionLog log = open(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096",
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE)));
        final int batches = 1000;
        final Map<Long, Long> expected = new java.util.concurrent.ConcurrentHashMap<>();
        final Throwable[] failure = new Throwable[1];
        final Thread writer = new Thread(() ->
        {
            try
            {
                final Batches b = new Batches();
                final AppendResult result = new AppendResult();
                final int[] sequences = new int[5];
                for (int i = 0; i < batches; i++)
                {
                    final int pid = 1 + i % 4;
                    b.build(1 + i % 3, i, clock.time(), io.ferrite.wire.compress.CompressionType.NONE, pid, (short)0, sequences[pid]);
                    log.append(b.buffer, 0, b.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    sequences[pid] += 1 + i % 3;
                    expected.put((long)pid, result.lastOffset);
                }
            }
            catch (final Throwable t)
            {
                failure[0] = t;
            }
        }, "writer");
        writer.start();
        final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
        final long[] seen = new long[5];
        int copies = 0;
        while (writer.isAlive() || copies == 0)
        {
            log.transactions().lastBatchesOfProducers(bytes -> { }, (pid, lastDataOffset, epoch) ->
            {
                // each answer is a batch of that producer in the log, and no older than the one an earlier copy gave
                assertEquals(PartitionLog.READ_OK, log.readBatch(lastDataOffset, Long.MAX_VALUE, batch));
                assertEquals(pid, batch.producerId());
                assertEquals(lastDataOffset, batch.lastOffset());
                assertTrue(lastDataOffset >= seen[(int)pid], "producer " + pid + " went back");
                seen[(int)pid] = lastDataOffset;
            });
            copies++;
        }
        writer.join();
        if (failure[0] != null)
        {
            throw new AssertionError("writer failed", failure[0]);
        }
        assertTrue(log.segmentCount() > 10, "the writer rolled: " + log.segmentCount());
        final Map<Long, Long> last = new TreeMap<>();
        log.transactions().lastBatchesOfProducers(bytes -> { }, (pid, lastDataOffset, epoch) -> last.put(pid, lastDataOffset));
        assertEquals(new TreeMap<>(expected), last);
    }
    @Test
    void aProducerExpiredByTheClockStaysInTheCopyUntilTheWritersExpiryForgetsIt() throws Exception
    {
        final PartitionLog log = open();
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        b.build(2, 0, clock.time(), io.ferrite.wire.compress.CompressionType.NONE, 7, (short)0, 0);
        log.append(b.buffer, 0, b.length, result);
        final long lastOf7 = result.lastOffset;
        clock.advance(EXPIRY_MS + 1);
        sixtyBatchesOfProducersOneToThree(log, b, result);
        assertTrue(log.segmentCount() > 3, "rolled: the snapshots hold producer 7");
        final Map<Long, Long> before = new TreeMap<>();
        log.transactions().lastBatchesOfProducers(bytes -> { }, (pid, lastDataOffset, epoch) -> before.put(pid, lastDataOffset));
        assertEquals(lastOf7, before.get(7L), "expired by the clock, still the writer's (as in Kafka's activeProducers): kept");
        assertEquals(1, log.transactions().removeExpiredProducers(), "the writer's expiry forgets producer 7");
        final Map<Long, Long> after = new TreeMap<>();
        log.transactions().lastBatchesOfProducers(bytes -> { }, (pid, lastDataOffset, epoch) -> after.put(pid, lastDataOffset));
        assertTrue(!after.containsKey(7L), "forgotten by the writer's expiry: not in the copy");
        assertEquals(java.util.Set.of(1L, 2L, 3L), after.keySet());
    }

    /** 60 batches of 2 records, producers 1 to 3 in turn: each producer's last offset. */
    private Map<Long, Long> sixtyBatchesOfProducersOneToThree(final PartitionLog log, final Batches b, final AppendResult result)
    {
        final Map<Long, Long> last = new TreeMap<>();
        final int[] sequences = new int[4];
        for (int i = 0; i < 60; i++)
        {
            final int pid = 1 + i % 3;
            b.build(2, i, clock.time(), io.ferrite.wire.compress.CompressionType.NONE, pid, (short)0, sequences[pid]);
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            sequences[pid] += 2;
            last.put((long)pid, result.lastOffset);
        }
        return last;
    }
}
