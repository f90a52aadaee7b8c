package io.ferrite.log;

import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordReader;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ListOffsets by timestamp (and MAX_TIMESTAMP) over a batch damaged at rest in a segment a clean open does not scan
 * with CRCs: as Kafka 4.4 answers ({@code FileRecords.searchForTimestamp} and {@code RecordBatch.offsetOfMaxTimestamp}
 * read a batch's records without its CRC), a batch whose value bytes were damaged is answered from; where Kafka's answer
 * is an error or none though later records are served, Ferrite answers the first record it can read at or after the
 * timestamp: records that do not hold together pass the rest of their batch over, and a damaged frame goes on at the next
 * batch the offset index knows of, as a fetch does. The files are real, damaged while their log is closed.
 */
class TimestampLookupDamageTest
{
    private static final int RECORDS_PER_BATCH = 8;
    private static final int BATCHES = 40;
    private static final long T0 = 1_700_000_000_000L;
    private static final Map<String, String> CONFIG = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096", LogConfig.INDEX_INTERVAL_BYTES, "100");

    @TempDir
    Path dir;

    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final AppendResult result = new AppendResult();

    /** Record {@code offset}'s timestamp: batches 100 ms apart, their records 1 ms apart. */
    private static long timestamp(final long offset)
    {
        return T0 + offset / RECORDS_PER_BATCH * 100 + offset % RECORDS_PER_BATCH;
    }

    @Test
    void aBatchWhoseValueWasDamagedIsAnsweredFromAsKafkaReadsItWithoutItsCrc() throws IOException
    {
        fill("v", false);
        final long base = damageTheMiddleBatchOfTheSecondSegment("v", Damage.VALUE);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("v", 0);
            final RecordBatch batch = new RecordBatch();
            assertEquals(PartitionLog.READ_OK, log.readBatch(base, log.logEndOffset(), batch));
            assertEquals(base, batch.baseOffset());
            assertFalse(batch.isCrcValid(), "the damage is still there after a clean open");
            final TimestampOffset found = new TimestampOffset();
            for (int k = 0; k < RECORDS_PER_BATCH; k++)
            {
                log.offsetForTimestamp(timestamp(base + k), found);
                assertEquals(base + k, found.offset, "record " + k + " of the damaged batch, by its own timestamp");
                assertEquals(timestamp(base + k), found.timestamp);
            }
            assertEquals(base, log.offsetForTimestamp(timestamp(base) - 50, found).offset, "a timestamp before the damaged batch's");
            assertEquals(base + RECORDS_PER_BATCH, log.offsetForTimestamp(timestamp(base + RECORDS_PER_BATCH), found).offset);
            log.maxTimestampOffset(found);
            assertEquals(BATCHES * RECORDS_PER_BATCH - 1, found.offset);
        }
    }

    @Test
    void theMaxTimestampInADamagedBatchIsItsFirstRecordWithThatTimestampAsKafkaAnswers() throws IOException
    {
        fill("m", true);
        final long base = (BATCHES - 1) * RECORDS_PER_BATCH;
        final Path active = logs("m").get(logs("m").size() - 1);
        final List<Integer> positions = positions(active);
        damage(active, positions.get(positions.size() - 1), Damage.VALUE);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("m", 0);
            final RecordBatch batch = new RecordBatch();
            assertEquals(PartitionLog.READ_OK, log.readBatch(base, log.logEndOffset(), batch));
            assertFalse(batch.isCrcValid(), "the damage is still there after a clean open");
            final long max = timestamp(base);
            final TimestampOffset found = new TimestampOffset();
            log.maxTimestampOffset(found);
            assertEquals(max, found.timestamp);
            assertEquals(base, found.offset, "the first record with the max timestamp, not the batch's last");
            log.offsetForTimestamp(max, found);
            assertEquals(base, found.offset, "found by its timestamp too");
            assertEquals(max, found.timestamp);
        }
    }

    @Test
    void aBatchWhoseRecordsDoNotHoldTogetherIsPassedOverWithoutAnError() throws IOException
    {
        fill("r", false);
        final long base = damageTheMiddleBatchOfTheSecondSegment("r", Damage.RECORD_LENGTH);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("r", 0);
            final TimestampOffset found = new TimestampOffset();
            for (int k = 0; k < RECORDS_PER_BATCH; k++)
            {
                log.offsetForTimestamp(timestamp(base + k), found);
                assertEquals(base + RECORDS_PER_BATCH, found.offset, "record " + k + ": the next batch's first");
                assertEquals(timestamp(base + RECORDS_PER_BATCH), found.timestamp);
            }
            assertEquals(base - 1, log.offsetForTimestamp(timestamp(base - 1), found).offset);
        }
    }

    @Test
    void aDamagedFrameIsPassedToTheNextIndexedBatchAsAFetchGoesOnNotToTheNextSegment() throws IOException
    {
        fill("f", false);
        final long base = damageTheMiddleBatchOfTheSecondSegment("f", Damage.FRAME_LENGTH);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("f", 0);
            final RecordBatch batch = new RecordBatch();
            assertEquals(PartitionLog.READ_OK, log.readBatch(base, log.logEndOffset(), batch));
            final long next = batch.baseOffset();
            assertEquals(base + RECORDS_PER_BATCH, next, "a read at the damaged batch goes on at the next one");
            final TimestampOffset found = new TimestampOffset();
            for (int k = 0; k < RECORDS_PER_BATCH; k++)
            {
                log.offsetForTimestamp(timestamp(base + k), found);
                assertEquals(next, found.offset, "record " + k + " of the damaged frame: the batch a read goes on at");
            }
            assertEquals(next + 1, log.offsetForTimestamp(timestamp(next + 1), found).offset);
            assertEquals(base - 1, log.offsetForTimestamp(timestamp(base - 1), found).offset);
        }
    }

    /** How a batch is damaged: a value bit, the first record's length, the frame's length (high byte: about 1 GiB). */
    private enum Damage
    {
        VALUE, RECORD_LENGTH, FRAME_LENGTH
    }

    /**
     * {@value #BATCHES} batches of {@value #RECORDS_PER_BATCH} records to partition 0 of {@code topic}, then a clean close;
     * with {@code lastAtOneTimestamp} the last batch's records all have its first one's timestamp.
     */
    private void fill(final String topic, final boolean lastAtOneTimestamp) throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog(topic, 0, CONFIG);
            for (int b = 0; b < BATCHES; b++)
            {
                builder.wrap(buffer, 0);
                for (int k = 0; k < RECORDS_PER_BATCH; k++)
                {
                    final long offset = (long)b * RECORDS_PER_BATCH + k;
                    final long ts = lastAtOneTimestamp && b == BATCHES - 1 ? timestamp(offset - k) : timestamp(offset);
                    builder.appendRecord(ts, ("k" + offset).getBytes(StandardCharsets.UTF_8), Batches.value(offset, k));
                }
                log.append(buffer, 0, builder.build(), result);
                assertEquals(AppendResult.OK, result.status);
            }
            log.highWatermark(log.logEndOffset());
        }
    }

    /** Damages the middle batch of {@code topic}'s second segment (below its last index entry); returns its base offset. */
    private long damageTheMiddleBatchOfTheSecondSegment(final String topic, final Damage how) throws IOException
    {
        final List<Path> logs = logs(topic);
        assertTrue(logs.size() >= 3, "segments: " + logs.size());
        final List<Integer> positions = positions(logs.get(1));
        assertTrue(positions.size() >= 3, "batches in the second segment: " + positions.size());
        return damage(logs.get(1), positions.get(positions.size() / 2), how);
    }

    /** Damages the batch at {@code position} of {@code file}; returns its base offset. */
    private static long damage(final Path file, final int position, final Damage how) throws IOException
    {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final ByteBuffer length = ByteBuffer.allocate(12);
            ch.read(length, position);
            final byte[] bytes = new byte[12 + length.getInt(8)];
            ch.read(ByteBuffer.wrap(bytes), position);
            final RecordBatch batch = new RecordBatch().wrap(new UnsafeBuffer(bytes), 0);
            assertTrue(batch.isCrcValid(), "whole before the damage");
            final Record first = new RecordReader().reset(batch).next();
            final int at;
            final int mask;
            if (how == Damage.VALUE)
            {
                at = first.valueOffset() + first.valueLength() / 2;
                mask = 0x10;
            }
            else if (how == Damage.RECORD_LENGTH)
            {
                at = batch.recordsOffset(); // the first record's length varint made 0: an empty record
                mask = bytes[at];
            }
            else
            {
                at = 8; // the batch length's high byte
                mask = 0x40;
            }
            final ByteBuffer one = ByteBuffer.allocate(1);
            ch.read(one, position + at);
            ch.write(ByteBuffer.allocate(1).put(0, (byte)(one.get(0) ^ mask)), position + at);
            return batch.baseOffset();
        }
    }

    private List<Path> logs(final String topic) throws IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve(topic + "-0")))
        {
            return files.filter(p -> p.toString().endsWith(Segment.LOG_SUFFIX)).sorted().toList();
        }
    }

    /** The positions of the batches in {@code file}, walked by their lengths. */
    private static List<Integer> positions(final Path file) throws IOException
    {
        final List<Integer> positions = new ArrayList<>();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ))
        {
            final ByteBuffer header = ByteBuffer.allocate(17);
            int p = 0;
            while (p + 17 <= ch.size())
            {
                header.clear();
                ch.read(header, p);
                if (header.get(16) != 2)
                {
                    break; // the zeros after the last batch
                }
                positions.add(p);
                p += 12 + header.getInt(8);
            }
        }
        return positions;
    }
}
