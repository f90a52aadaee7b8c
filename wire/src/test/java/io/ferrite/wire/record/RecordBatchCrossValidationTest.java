package io.ferrite.wire.record;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.testing.Property;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.ControlRecordType;
import org.apache.kafka.common.record.internal.EndTransactionMarker;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

import static io.ferrite.wire.record.KafkaBatches.bytesOf;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RecordBatch v2 against kafka-clients 4.4, for every compression: batches built by Kafka's
 * {@code MemoryRecordsBuilder} (keys, null keys and values, headers, idempotent, transactional,
 * LogAppendTime, control markers) are read field-exact by ours; batches we build pass Kafka's CRC
 * and structure checks and hold identical records.
 */
class RecordBatchCrossValidationTest
{
    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void batchesKafkaBuildsAreReadFieldExact(final CompressionType compression)
    {
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader();
        Property.check("kafka-built " + compression, 60, r ->
        {
            final KafkaBatches.Spec spec = KafkaBatches.random(r, compression);
            final ByteBuffer kafkaBytes = KafkaBatches.buildWithKafka(spec);
            final MutableRecordBatch kafka = MemoryRecords.readableRecords(kafkaBytes.duplicate()).batches().iterator().next();
            // read from the heap and from off-heap memory
            final byte[] heap = bytesOf(kafkaBytes);
            final ExpandableDirectByteBuffer direct = new ExpandableDirectByteBuffer(heap.length + 16);
            direct.putBytes(16, heap);
            for (final boolean offHeap : new boolean[] {false, true})
            {
                batch.wrap(offHeap ? direct : new UnsafeBuffer(heap), offHeap ? 16 : 0);
                assertEquals(RecordBatch.OK, batch.check(heap.length));
                assertHeaderEquals(kafka, batch);
                assertRecordsEqual(spec.records(), kafka, reader.reset(batch));
            }
        });
    }

    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void batchesWeBuildPassKafkasChecksWithIdenticalRecords(final CompressionType compression)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final RecordBatch batch = new RecordBatch();
        Property.check("ferrite-built " + compression, 60, r ->
        {
            final KafkaBatches.Spec spec = KafkaBatches.random(r, compression);
            final MutableDirectBuffer out = r.nextBoolean() ? new ExpandableArrayBuffer(64) : new ExpandableDirectByteBuffer(64);
            final int size = KafkaBatches.buildWithFerrite(spec, builder, out, 0);
            final byte[] bytes = new byte[size];
            out.getBytes(0, bytes);

            final Iterator<MutableRecordBatch> batches = KafkaBatches.readable(bytes).batches().iterator();
            final MutableRecordBatch kafka = batches.next();
            assertFalse(batches.hasNext());
            kafka.ensureValid();
            assertTrue(kafka.isValid());
            assertEquals(size, kafka.sizeInBytes());
            assertEquals(spec.baseOffset(), kafka.baseOffset());
            assertEquals(spec.baseOffset() + spec.records().size() - 1, kafka.lastOffset());
            assertEquals(spec.partitionLeaderEpoch(), kafka.partitionLeaderEpoch());
            assertEquals(compression.id, kafka.compressionType().id);
            assertEquals(spec.producerId(), kafka.producerId());
            assertEquals(spec.producerEpoch(), kafka.producerEpoch());
            assertEquals(spec.baseSequence(), kafka.baseSequence());
            assertEquals(spec.transactional(), kafka.isTransactional());
            assertFalse(kafka.isControlBatch());
            assertEquals(spec.logAppendTime() ? org.apache.kafka.common.record.TimestampType.LOG_APPEND_TIME :
                org.apache.kafka.common.record.TimestampType.CREATE_TIME, kafka.timestampType());
            final long max = spec.logAppendTime() ? spec.logAppendTimestamp() :
                spec.records().stream().mapToLong(KafkaBatches.Rec::timestamp).max().orElseThrow();
            assertEquals(max, kafka.maxTimestamp());
            // and the header reads the same through our flyweight
            batch.wrap(new UnsafeBuffer(bytes), 0);
            assertHeaderEquals(kafka, batch);
            assertRecordsEqual(spec.records(), kafka, new RecordReader().reset(batch));
        });
    }

    @ParameterizedTest
    @EnumSource(value = ControlRecordType.class, names = {"COMMIT", "ABORT"})
    void transactionMarkersBothWays(final ControlRecordType type)
    {
        final boolean commit = type == ControlRecordType.COMMIT;
        final MemoryRecords kafka = MemoryRecords.withEndTransactionMarker(
            42L, 1_700_000_000_123L, 7, 1234L, (short)3, new EndTransactionMarker(type, 19));
        final byte[] kafkaBytes = bytesOf(kafka.buffer());
        final RecordBatch batch = new RecordBatch().wrap(new UnsafeBuffer(kafkaBytes), 0);
        assertEquals(RecordBatch.OK, batch.check(kafkaBytes.length));
        assertTrue(batch.isControl());
        assertTrue(batch.isTransactional());
        final Record marker = new RecordReader().reset(batch).next();
        assertEquals(commit ? ControlRecords.COMMIT : ControlRecords.ABORT, ControlRecords.type(marker));
        assertEquals(19, ControlRecords.coordinatorEpoch(marker));
        assertEquals(42L, marker.offset());

        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(128);
        final int size = new RecordBatchBuilder().wrap(out, 0).baseOffset(42L).partitionLeaderEpoch(7)
            .producer(1234L, (short)3, -1).transactional(true).control(true)
            .appendEndTxnMarker(1_700_000_000_123L, commit, 19).build();
        assertArrayEquals(kafkaBytes, Arrays.copyOf(out.byteArray(), size), "byte-identical to Kafka's marker batch");
    }

    static void assertHeaderEquals(final org.apache.kafka.common.record.internal.RecordBatch kafka, final RecordBatch ours)
    {
        assertEquals(kafka.baseOffset(), ours.baseOffset());
        assertEquals(kafka.sizeInBytes(), ours.sizeInBytes());
        assertEquals(kafka.partitionLeaderEpoch(), ours.partitionLeaderEpoch());
        assertEquals(kafka.magic(), ours.magic());
        assertEquals(kafka.checksum(), ours.crc() & 0xFFFF_FFFFL);
        assertTrue(ours.isCrcValid());
        assertEquals(kafka.compressionType().id, ours.compression().id);
        assertEquals(kafka.timestampType().name(), ours.timestampType().name());
        assertEquals(kafka.isTransactional(), ours.isTransactional());
        assertEquals(kafka.isControlBatch(), ours.isControl());
        assertEquals(kafka.lastOffset(), ours.lastOffset());
        assertEquals(kafka.maxTimestamp(), ours.maxTimestamp());
        assertEquals(kafka.producerId(), ours.producerId());
        assertEquals(kafka.producerEpoch(), ours.producerEpoch());
        assertEquals(kafka.baseSequence(), ours.baseSequence());
        assertEquals(kafka.lastSequence(), ours.lastSequence());
        assertEquals(kafka.countOrNull().intValue(), ours.recordCount());
        assertEquals(((org.apache.kafka.common.record.internal.DefaultRecordBatch)kafka).baseTimestamp(), ours.baseTimestamp());
    }

    static void assertRecordsEqual(
        final List<KafkaBatches.Rec> expected, final org.apache.kafka.common.record.internal.RecordBatch kafka,
        final RecordReader ours)
    {
        final Iterator<org.apache.kafka.common.record.internal.Record> theirs = kafka.iterator();
        int i = 0;
        while (ours.hasNext())
        {
            final Record r = ours.next();
            final org.apache.kafka.common.record.internal.Record k = theirs.next();
            final KafkaBatches.Rec e = expected.get(i++);
            assertEquals(k.offset(), r.offset());
            assertEquals(k.timestamp(), r.timestamp());
            assertArrayEquals(e.key(), bytes(r, r.keyOffset(), r.keyLength()));
            assertArrayEquals(bytesOf(k.key()), bytes(r, r.keyOffset(), r.keyLength()));
            assertArrayEquals(e.value(), bytes(r, r.valueOffset(), r.valueLength()));
            assertArrayEquals(bytesOf(k.value()), bytes(r, r.valueOffset(), r.valueLength()));
            final Header[] kh = k.headers();
            assertEquals(e.headers().size(), r.headerCount());
            assertEquals(kh.length, r.headerCount());
            for (int h = 0; h < kh.length; h++)
            {
                assertTrue(r.nextHeader());
                assertArrayEquals(kh[h].key().getBytes(java.nio.charset.StandardCharsets.UTF_8),
                    bytes(r, r.headerKeyOffset(), r.headerKeyLength()));
                assertArrayEquals(kh[h].value(), bytes(r, r.headerValueOffset(), r.headerValueLength()));
            }
            assertFalse(r.nextHeader());
        }
        assertFalse(theirs.hasNext());
        assertEquals(expected.size(), i);
    }

    private static byte[] bytes(final Record r, final int offset, final int length)
    {
        if (length < 0)
        {
            return null;
        }
        final byte[] b = new byte[length];
        r.buffer().getBytes(offset, b);
        return b;
    }
}
