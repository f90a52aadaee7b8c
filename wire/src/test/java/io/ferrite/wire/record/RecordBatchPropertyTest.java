package io.ferrite.wire.record;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.testing.Property;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Arbitrary batches: whatever we build we read back record for record; and any corruption of a
 * valid batch is either caught by {@link RecordBatch#check} or leaves the reader throwing only
 * {@link CorruptRecordException} — never an IndexOutOfBounds or an unbounded allocation.
 */
class RecordBatchPropertyTest
{
    @Test
    void arbitraryBatchesRoundTrip()
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader();
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(256);
        Property.check("batch round trip", 300, r ->
        {
            final KafkaBatches.Spec spec = KafkaBatches.random(r, CompressionType.values()[r.nextInt(5)]);
            final int at = r.nextInt(64);
            final int size = KafkaBatches.buildWithFerrite(spec, builder, out, at);
            batch.wrap(out, at);
            assertEquals(RecordBatch.OK, batch.check(size));
            assertEquals(spec.records().size(), batch.recordCount());
            reader.reset(batch);
            for (final KafkaBatches.Rec rec : spec.records())
            {
                assertTrue(reader.hasNext());
                final Record record = reader.next();
                assertEquals(spec.logAppendTime() ? spec.logAppendTimestamp() : rec.timestamp(), record.timestamp());
                assertArrayEquals(rec.key(), copy(record, record.keyOffset(), record.keyLength()));
                assertArrayEquals(rec.value(), copy(record, record.valueOffset(), record.valueLength()));
                assertEquals(rec.headers().size(), record.headerCount());
            }
            assertTrue(!reader.hasNext());
        });
    }

    @Test
    void corruptedBatchesAreRefusedTyped()
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader(new io.ferrite.wire.compress.Codecs(), 1 << 20);
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(256);
        final int[] refused = new int[2];
        Property.check("corrupted batches", 400, r ->
        {
            final KafkaBatches.Spec spec = KafkaBatches.random(r, CompressionType.values()[r.nextInt(5)]);
            final int size = KafkaBatches.buildWithFerrite(spec, builder, out, 0);
            final byte[] bytes = new byte[size];
            out.getBytes(0, bytes);
            final byte[] bad = corrupt(bytes, r);
            batch.wrap(new UnsafeBuffer(bad), 0);
            final boolean fixCrc = r.nextBoolean();
            if (fixCrc && bad.length >= RecordBatchDescriptor.HEADER_LENGTH && batch.sizeInBytes() <= bad.length &&
                batch.sizeInBytes() >= RecordBatchDescriptor.HEADER_LENGTH)
            {
                // as a producer would that computes the CRC over what it got wrong
                new UnsafeBuffer(bad).putInt(RecordBatchDescriptor.CRC_OFFSET, batch.computeCrc(), java.nio.ByteOrder.BIG_ENDIAN);
            }
            final int check = batch.check(bad.length);
            if (check != RecordBatch.OK)
            {
                refused[0]++;
            }
            // whatever check says, reading must fail typed or succeed
            if (bad.length >= RecordBatchDescriptor.HEADER_LENGTH && batch.sizeInBytes() <= bad.length &&
                batch.sizeInBytes() >= RecordBatchDescriptor.HEADER_LENGTH)
            {
                try
                {
                    reader.reset(batch);
                    while (reader.hasNext())
                    {
                        reader.next();
                    }
                }
                catch (final CorruptRecordException expected)
                {
                    refused[1]++;
                }
            }
        });
        assertTrue(refused[0] > 150, "check() refused only " + refused[0]);
        assertTrue(refused[1] > 50, "the reader refused only " + refused[1]);
    }

    static byte[] corrupt(final byte[] valid, final Random r)
    {
        final byte[] b = valid.clone();
        switch (r.nextInt(4))
        {
            case 0:
                return Arrays.copyOf(b, r.nextInt(b.length));
            case 1:
                for (int i = 0, n = 1 + r.nextInt(3); i < n; i++)
                {
                    final int at = RecordBatchDescriptor.RECORDS_OFFSET + r.nextInt(b.length - RecordBatchDescriptor.RECORDS_OFFSET);
                    b[at] ^= (byte)(1 << r.nextInt(8));
                }
                return b;
            case 2:
            {
                // a plausible-looking but wrong record count or length
                final int field = r.nextBoolean() ? RecordBatchDescriptor.RECORD_COUNT_OFFSET : RecordBatchDescriptor.BATCH_LENGTH_OFFSET;
                final int value = new int[] {-1, 0, Integer.MAX_VALUE, 1 << 24, 3}[r.nextInt(5)];
                new UnsafeBuffer(b).putInt(field, value, java.nio.ByteOrder.BIG_ENDIAN);
                return b;
            }
            default:
            {
                final int from = RecordBatchDescriptor.RECORDS_OFFSET + r.nextInt(b.length - RecordBatchDescriptor.RECORDS_OFFSET);
                for (int i = from; i < Math.min(b.length, from + 1 + r.nextInt(16)); i++)
                {
                    b[i] = (byte)r.nextInt();
                }
                return b;
            }
        }
    }

    private static byte[] copy(final Record r, final int offset, final int length)
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
