package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionLogTest
{
    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private LogManager manager;
    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private final FileRegion region = new FileRegion();

    @BeforeEach
    void open() throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock));
    }

    @AfterEach
    void close() throws IOException
    {
        manager.close();
    }

    private PartitionLog log(final Map<String, String> overrides) throws IOException
    {
        return manager.createLog("orders", 0, overrides);
    }

    private void append(final PartitionLog log, final int records, final long seed)
    {
        batches.records(records, seed, clock.time());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    @Test
    void offsetsAreAssignedInPlaceAndBatchesReadBackWhole() throws IOException
    {
        final PartitionLog log = log(Map.of());
        append(log, 3, 1);
        assertEquals(0, result.firstOffset);
        assertEquals(2, result.lastOffset);
        append(log, 5, 2);
        assertEquals(3, result.firstOffset);
        assertEquals(7, result.lastOffset);
        assertEquals(8, log.logEndOffset());

        assertEquals(PartitionLog.READ_OK, log.read(4, 1 << 20, log.logEndOffset(), true, region));
        final byte[] read = readRegion(region);
        final RecordBatch b = new RecordBatch().wrap(new UnsafeBuffer(read), 0);
        assertEquals(RecordBatch.OK, b.check(read.length));
        assertEquals(3, b.baseOffset(), "the batch holding offset 4, whole");
        assertEquals(0, b.partitionLeaderEpoch());
        assertEquals(8, region.nextOffset);

        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.read(9, 1000, 100, true, region));
        assertEquals(PartitionLog.READ_OK, log.read(8, 1000, 100, true, region));
        assertTrue(region.isEmpty());
    }

    @Test
    void readsStopAtTheMaxOffsetAndTheByteLimitOnBatchBoundaries() throws IOException
    {
        final PartitionLog log = log(Map.of());
        final int[] sizes = new int[5];
        for (int i = 0; i < 5; i++)
        {
            append(log, 2, i);
            sizes[i] = batches.length;
        }
        log.read(0, Integer.MAX_VALUE, 6, true, region);
        assertEquals(sizes[0] + sizes[1] + sizes[2], region.length, "batches below offset 6 only");
        log.read(0, sizes[0] + sizes[1] + 1, 100, true, region);
        assertEquals(sizes[0] + sizes[1], region.length);
        log.read(0, 1, 100, false, region);
        assertTrue(region.isEmpty(), "no batch fits");
        log.read(0, 1, 100, true, region);
        assertEquals(sizes[0], region.length, "minOneBatch");
    }

    @Test
    void segmentsRollOnSizeAndReadsCrossThem() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2000", LogConfig.INDEX_INTERVAL_BYTES, "100"));
        for (int i = 0; i < 100; i++)
        {
            append(log, 3, i);
        }
        assertTrue(log.segmentCount() > 10, "segments: " + log.segmentCount());
        for (long offset = 0; offset < 300; offset += 7)
        {
            log.read(offset, 500, 300, true, region);
            final RecordBatch b = new RecordBatch().wrap(new UnsafeBuffer(readRegion(region)), 0);
            assertTrue(b.baseOffset() <= offset && offset <= b.lastOffset(), "offset " + offset + " in " + b.baseOffset());
        }
        assertTrue(Files.exists(dir.resolve("orders-0").resolve("00000000000000000000.log")));
        assertTrue(Files.exists(dir.resolve("orders-0").resolve("00000000000000000000.snapshot")) ||
            Files.list(dir.resolve("orders-0")).anyMatch(p -> p.toString().endsWith(".snapshot")));
    }

    @Test
    void aCleanReopenKeepsEverything() throws IOException
    {
        PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "3000"));
        final byte[][] expected = new byte[40][];
        for (int i = 0; i < 40; i++)
        {
            append(log, 2, i);
            expected[i] = batches.bytes();
        }
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock));
        log = manager.log("orders", 0);
        assertEquals(80, log.logEndOffset());
        for (int i = 0; i < 40; i++)
        {
            log.read(i * 2L, 1, 80, true, region);
            assertArrayEquals(expected[i], readRegion(region), "batch " + i);
        }
        append(log, 1, 99);
        assertEquals(80, result.firstOffset);
    }

    @Test
    void badBatchesAreRefusedWithTypedErrorsAndLeaveTheLogUntouched() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.MAX_MESSAGE_BYTES, "5000"));
        append(log, 2, 1);
        final long end = log.logEndOffset();

        batches.records(200, 2, clock.time());
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.RECORD_TOO_LARGE, result.status);

        batches.records(2, 3, clock.time());
        batches.buffer.putByte(RecordBatchDescriptor.RECORDS_OFFSET + 5, (byte)~batches.buffer.getByte(RecordBatchDescriptor.RECORDS_OFFSET + 5));
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.CORRUPT_MESSAGE, result.status, "CRC");

        batches.records(2, 3, clock.time());
        batches.buffer.putByte(RecordBatchDescriptor.MAGIC_OFFSET, (byte)1);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.UNSUPPORTED_MAGIC, result.status);

        batches.records(2, 3, clock.time());
        log.append(batches.buffer, 0, batches.length - 1, result);
        assertEquals(AppendResult.CORRUPT_MESSAGE, result.status, "truncated");

        batches.records(2, 3, clock.time() + 2 * 3_600_000L);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.INVALID_TIMESTAMP, result.status, "two hours in the future");
        assertEquals(0, result.recordIndex);

        final io.ferrite.wire.record.RecordBatchBuilder control = new io.ferrite.wire.record.RecordBatchBuilder();
        final int n = control.wrap(batches.buffer, 0).producer(1, (short)0, -1).transactional(true).control(true)
            .appendEndTxnMarker(clock.time(), true, 0).build();
        log.append(batches.buffer, 0, n, result);
        assertEquals(AppendResult.INVALID_RECORD, result.status, "control batch from a client");

        assertEquals(end, log.logEndOffset());
        append(log, 1, 4);
        assertEquals(end, result.firstOffset);
    }

    @Test
    void logAppendTimeSetsTheBatchTimestampAndCrc() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.MESSAGE_TIMESTAMP_TYPE, LogConfig.LOG_APPEND_TIME));
        batches.records(3, 1, 5L); // an ancient CreateTime: not checked under LogAppendTime
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertEquals(clock.time(), result.logAppendTime);
        log.read(0, 1 << 20, 10, true, region);
        final RecordBatch b = new RecordBatch().wrap(new UnsafeBuffer(readRegion(region)), 0);
        assertEquals(RecordBatch.OK, b.check(region.length));
        assertEquals(clock.time(), b.maxTimestamp());
        assertEquals(io.ferrite.wire.record.TimestampType.LOG_APPEND_TIME, b.timestampType());
    }

    @Test
    void idempotentProducersAreDeduplicatedAndSequencesChecked() throws IOException
    {
        final PartitionLog log = log(Map.of());
        final long pid = 42;
        final int[] status = new int[1];
        final java.util.function.BiConsumer<Integer, Short> send = (seq, epoch) ->
        {
            batches.build(2, seq, clock.time(), CompressionType.NONE, pid, epoch, seq);
            log.append(batches.buffer, 0, batches.length, result);
            status[0] = result.status;
        };
        send.accept(0, (short)0);
        assertEquals(AppendResult.OK, status[0]);
        send.accept(2, (short)0);
        assertEquals(AppendResult.OK, status[0]);
        assertEquals(2, result.firstOffset);
        send.accept(0, (short)0);
        assertEquals(AppendResult.DUPLICATE, status[0], "a retry of the first batch");
        assertEquals(0, result.firstOffset);
        assertEquals(1, result.lastOffset);
        send.accept(6, (short)0);
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, status[0], "a gap");
        send.accept(3, (short)1);
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, status[0], "a new epoch must start at 0");
        send.accept(0, (short)1);
        assertEquals(AppendResult.OK, status[0]);
        send.accept(2, (short)0);
        assertEquals(AppendResult.INVALID_PRODUCER_EPOCH, status[0], "fenced");
        assertEquals(6, log.logEndOffset());

        // the state survives a restart (snapshot on close)
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock));
        final PartitionLog reopened = manager.log("orders", 0);
        batches.build(2, 0, clock.time(), CompressionType.NONE, pid, (short)1, 0);
        reopened.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.DUPLICATE, result.status);
        assertEquals(4, result.firstOffset);
    }

    @Test
    void offsetForTimestampFindsTheFirstRecordAtOrAfter() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500", LogConfig.INDEX_INTERVAL_BYTES, "200"));
        final long t0 = clock.time();
        for (int i = 0; i < 50; i++)
        {
            batches.records(4, i, t0 + i * 10L); // records at t0 + 10i + {0..3}
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status);
        }
        final TimestampOffset to = new TimestampOffset();
        assertEquals(0, log.offsetForTimestamp(t0 - 100, to).offset);
        assertEquals(4 * 17 + 2, log.offsetForTimestamp(t0 + 172, to).offset);
        assertEquals(t0 + 172, to.timestamp);
        assertEquals(4 * 18, log.offsetForTimestamp(t0 + 175, to).offset, "first record of the next batch");
        assertFalse(log.offsetForTimestamp(t0 + 10_000, to).found());
        log.maxTimestampOffset(to);
        assertEquals(t0 + 493, to.timestamp);
        assertEquals(199, to.offset);
    }

    @Test
    void retentionDeletesWholeOldSegmentsAndTheActiveOneOnlyAfterItsWritersRoll() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500", LogConfig.RETENTION_MS, "60000"));
        for (int i = 0; i < 30; i++)
        {
            append(log, 3, i);
        }
        log.highWatermark(log.logEndOffset()); // the owner's: nothing above it is deleted
        final int segments = log.segmentCount();
        clock.advance(30_000);
        assertEquals(0, log.deleteOldSegments(clock.time()));
        assertFalse(log.retentionRoll().wanted());
        clock.advance(31_000);
        assertEquals(segments - 1, log.deleteOldSegments(clock.time()));
        assertEquals(1, log.segmentCount(), "the active segment is the writer's to roll first");
        assertTrue(log.retentionRoll().wanted());
        assertEquals(log.segments()[0].baseOffset, log.logStartOffset());
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.read(0, 100, 1000, true, region));

        manager.updateConfig("orders", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500", LogConfig.RETENTION_BYTES, "3000"));
        for (int i = 0; i < 30; i++)
        {
            append(log, 3, i);
        }
        log.highWatermark(log.logEndOffset());
        log.deleteOldSegments(clock.time());
        assertTrue(log.sizeInBytes() - log.segments()[0].size() < 3000, "size " + log.sizeInBytes());
    }

    @Test
    void deleteRecordsMovesTheLogStartOffset() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1500"));
        for (int i = 0; i < 30; i++)
        {
            append(log, 3, i);
        }
        log.highWatermark(log.logEndOffset());
        assertEquals(-1, log.deleteRecordsBefore(1000));
        assertEquals(50, log.deleteRecordsBefore(50));
        assertEquals(50, log.logStartOffset());
        assertTrue(log.segments()[0].baseOffset <= 50);
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.read(49, 100, 1000, true, region));
        assertEquals(PartitionLog.READ_OK, log.read(50, 100, 1000, true, region));
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock));
        assertEquals(50, manager.log("orders", 0).logStartOffset(), "checkpointed");
    }

    @Test
    void batchesAreReadInPlaceAcrossSegmentsUpToTheBound() throws IOException
    {
        final PartitionLog log = log(Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048"));
        for (int i = 0; i < 40; i++)
        {
            append(log, 1 + i % 3, i);
        }
        assertTrue(log.segmentCount() > 3, "rolled: " + log.segmentCount());
        final long end = log.logEndOffset();
        final RecordBatch batch = new RecordBatch();
        for (long offset = 0; offset < end; offset++)
        {
            assertEquals(PartitionLog.READ_OK, log.readBatch(offset, end, batch), "offset " + offset);
            assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), "a whole batch with its CRC, offset " + offset);
            assertTrue(batch.baseOffset() <= offset && offset <= batch.lastOffset(), "the batch holding " + offset);
            // the same bytes a copying read returns
            assertEquals(PartitionLog.READ_OK, log.read(offset, 1, end, true, region));
            final byte[] copied = readRegion(region);
            final byte[] inPlace = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), inPlace);
            assertArrayEquals(copied, inPlace, "offset " + offset);
        }
        assertEquals(PartitionLog.NO_BATCH, log.readBatch(end, end, batch), "nothing at the log end yet");
        assertEquals(PartitionLog.NO_BATCH, log.readBatch(end - 1, end - 1, batch), "a batch reaching the bound is not read");
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.readBatch(end + 1, Long.MAX_VALUE, batch));
        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, log.readBatch(-1, Long.MAX_VALUE, batch));
    }

    static byte[] readRegion(final FileRegion region) throws IOException
    {
        final ByteBuffer b = ByteBuffer.allocate(region.length);
        while (b.hasRemaining())
        {
            if (region.channel.read(b, region.position + b.position()) < 0)
            {
                break;
            }
        }
        return b.array();
    }
}
