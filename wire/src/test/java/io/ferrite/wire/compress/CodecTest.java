package io.ferrite.wire.compress;

import io.ferrite.wire.record.CorruptRecordException;
import io.ferrite.wire.testing.Property;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.ByteBufferOutputStream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Each codec against Kafka's own streams, both ways, over sizes that cross the codecs' block sizes
 * (32 KiB for Snappy, 64 KiB for LZ4); and bounded, typed failures on corrupt or explosive input.
 */
class CodecTest
{
    private static final int SEGMENT = 300 * 1024;

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void kafkaReadsWhatWeCompressAndWeReadWhatKafkaCompresses(final CompressionType type)
    {
        final Codec codec = new Codecs().codec(type);
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(64);
        Property.check("codec " + type, 40, r ->
        {
            final byte[] data = data(r);
            final MutableDirectBuffer src = r.nextBoolean() ? new UnsafeBuffer(data) : direct(data);
            final MutableDirectBuffer compressedInto = r.nextBoolean() ? new ExpandableArrayBuffer(16) : new ExpandableDirectByteBuffer(16);
            final int n = codec.compress(src, 0, data.length, compressedInto, 0);
            final byte[] ours = new byte[n];
            compressedInto.getBytes(0, ours);
            assertArrayEquals(data, kafkaDecompress(type, ours), "Kafka reads ours");

            final byte[] theirs = kafkaCompress(type, data);
            final int at = r.nextInt(8);
            final int m = codec.decompress(new UnsafeBuffer(theirs), 0, theirs.length, out, at, Integer.MAX_VALUE);
            final byte[] back = new byte[m];
            out.getBytes(at, back);
            assertArrayEquals(data, back, "we read Kafka's");
        });
    }

    @ParameterizedTest
    @EnumSource(value = CompressionType.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    void decompressionIsBoundedAndCorruptionIsTyped(final CompressionType type)
    {
        final Codec codec = new Codecs().codec(type);
        final byte[] zeros = new byte[4 << 20];
        final ExpandableArrayBuffer compressed = new ExpandableArrayBuffer(64);
        final int n = codec.compress(new UnsafeBuffer(zeros), 0, zeros.length, compressed, 0);
        final ExpandableDirectByteBuffer out = new ExpandableDirectByteBuffer(64);
        assertThrows(CorruptRecordException.class, () -> codec.decompress(compressed, 0, n, out, 0, 1 << 20));
        assertEquals(zeros.length, codec.decompress(compressed, 0, n, out, 0, zeros.length));

        final byte[] valid = Arrays.copyOf(compressed.byteArray(), n);
        Property.check("corrupt " + type, 300, r ->
        {
            final byte[] bad = valid.clone();
            if (r.nextBoolean())
            {
                for (int i = 0, k = 1 + r.nextInt(4); i < k; i++)
                {
                    bad[r.nextInt(bad.length)] = (byte)r.nextInt();
                }
            }
            final int length = r.nextBoolean() ? bad.length : r.nextInt(bad.length);
            try
            {
                codec.decompress(new UnsafeBuffer(bad), 0, length, out, 0, 8 << 20);
            }
            catch (final CorruptRecordException expected)
            {
                // typed: the broker answers CORRUPT_MESSAGE
            }
        });
    }

    private static byte[] data(final Random r)
    {
        final int size = r.nextInt(4) == 0 ? r.nextInt(SEGMENT) : r.nextInt(2000);
        final byte[] data = new byte[size];
        if (r.nextBoolean())
        {
            r.nextBytes(data);
        }
        else
        {
            for (int i = 0; i < size; i++)
            {
                data[i] = (byte)("ferrite ".charAt(i % 8) + (i / 4096));
            }
        }
        return data;
    }

    private static MutableDirectBuffer direct(final byte[] data)
    {
        final ExpandableDirectByteBuffer b = new ExpandableDirectByteBuffer(data.length);
        b.putBytes(0, data);
        return b;
    }

    static Compression kafka(final CompressionType type)
    {
        switch (type)
        {
            case GZIP: return Compression.gzip().build();
            case SNAPPY: return Compression.snappy().build();
            case LZ4: return Compression.lz4().build();
            case ZSTD: return Compression.zstd().build();
            default: throw new IllegalArgumentException(type.name());
        }
    }

    static byte[] kafkaCompress(final CompressionType type, final byte[] data)
    {
        final ByteBufferOutputStream stream = new ByteBufferOutputStream(64);
        try (OutputStream out = kafka(type).wrapForOutput(stream, RecordBatch.MAGIC_VALUE_V2))
        {
            out.write(data);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        final ByteBuffer b = stream.buffer();
        return Arrays.copyOf(b.array(), b.position());
    }

    static byte[] kafkaDecompress(final CompressionType type, final byte[] compressed)
    {
        try (InputStream in = kafka(type).wrapForInput(ByteBuffer.wrap(compressed), RecordBatch.MAGIC_VALUE_V2,
            BufferSupplier.create()))
        {
            final ByteArrayOutputStream all = new ByteArrayOutputStream();
            in.transferTo(all);
            return all.toByteArray();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
