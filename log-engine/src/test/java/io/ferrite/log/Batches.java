package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/** Builds client batches for the log tests (off-heap, as the broker's network buffers are). */
final class Batches
{
    final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    int length;

    /** {@code count} records with values derived from {@code seed}, timestamps from {@code timestamp}. */
    Batches records(final int count, final long seed, final long timestamp)
    {
        return build(count, seed, timestamp, CompressionType.NONE, -1, (short)-1, -1);
    }

    Batches build(final int count, final long seed, final long timestamp, final CompressionType compression, final long producerId,
        final short epoch, final int baseSequence)
    {
        builder.wrap(buffer, 0).compression(compression).producer(producerId, epoch, baseSequence);
        for (int i = 0; i < count; i++)
        {
            final byte[] value = value(seed, i);
            builder.appendRecord(timestamp + i, ("k" + i).getBytes(StandardCharsets.UTF_8), value);
        }
        length = builder.build();
        return this;
    }

    /** {@code count} records from a producer, in a transactional batch when {@code transactional}. */
    Batches producer(final int count, final long producerId, final short epoch, final int baseSequence, final boolean transactional,
        final long timestamp)
    {
        builder.wrap(buffer, 0).producer(producerId, epoch, baseSequence).transactional(transactional);
        for (int i = 0; i < count; i++)
        {
            builder.appendRecord(timestamp + i, ("k" + i).getBytes(StandardCharsets.UTF_8), value(producerId & 0xffff, i));
        }
        length = builder.build();
        return this;
    }

    static byte[] value(final long seed, final int i)
    {
        final int size = (int)((seed * 31 + i) % 97) + 10;
        final byte[] b = new byte[size];
        for (int j = 0; j < size; j++)
        {
            b[j] = (byte)(seed * 7 + i * 13 + j);
        }
        return b;
    }

    /** A copy of the built batch's bytes. */
    byte[] bytes()
    {
        final byte[] b = new byte[length];
        buffer.getBytes(0, b);
        return b;
    }

    UnsafeBuffer view()
    {
        return new UnsafeBuffer(buffer, 0, length);
    }
}
