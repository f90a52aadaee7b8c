package io.ferrite.wire.record;

import io.ferrite.wire.compress.CompressionType;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A record whose header throws half-way (a null key, a range outside its buffer) is dropped by
 * {@link RecordBatchBuilder#abortRecord()}: the batch holds the records before and after it, as Kafka reads them.
 */
class RecordBatchBuilderAbortTest
{
    @ParameterizedTest
    @EnumSource(CompressionType.class)
    void aRecordAbortedAfterAHeaderThrewLeavesTheBatchAsBefore(final CompressionType compression)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final ExpandableArrayBuffer out = new ExpandableArrayBuffer(64);
        builder.wrap(out, 0).compression(compression).baseOffset(0);
        builder.beginRecord(1_000, null, bytes("a")).header("h", bytes("1")).endRecord();

        builder.beginRecord(5_000, null, bytes("lost")).header("h", bytes("2"));
        final UnsafeBuffer v = new UnsafeBuffer(bytes("x"));
        assertThrows(IllegalArgumentException.class, () -> builder.header(null, 0, -1, v, 0, 1));
        builder.abortRecord();

        builder.beginRecord(2_000, null, bytes("b")).header("h", bytes("3"));
        assertThrows(IndexOutOfBoundsException.class, () -> builder.header(v, 0, 50, v, 0, 1));
        builder.abortRecord();

        builder.beginRecord(2_000, null, bytes("c")).header("h", bytes("4")).endRecord();
        builder.appendRecord(3_000, null, bytes("d"));
        assertEquals(3, builder.recordCount());
        final int size = builder.build();
        final byte[] batchBytes = new byte[size];
        out.getBytes(0, batchBytes);

        final Iterator<MutableRecordBatch> batches = KafkaBatches.readable(batchBytes).batches().iterator();
        final MutableRecordBatch batch = batches.next();
        assertFalse(batches.hasNext());
        batch.ensureValid();
        assertEquals(2, batch.lastOffset());
        assertEquals(3_000, batch.maxTimestamp());
        final List<String> values = new ArrayList<>();
        final List<Integer> headerCounts = new ArrayList<>();
        for (final Record r : batch)
        {
            final byte[] value = new byte[r.valueSize()];
            r.value().get(value);
            values.add(new String(value, StandardCharsets.UTF_8));
            headerCounts.add(r.headers().length);
        }
        assertEquals(List.of("a", "c", "d"), values);
        assertEquals(List.of(1, 1, 0), headerCounts);
        final Record second = batch.iterator().next();
        assertArrayEquals(bytes("h"), second.headers()[0].key().getBytes(StandardCharsets.UTF_8));
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
