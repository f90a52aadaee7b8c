package io.ferrite.wire.compress;

import io.ferrite.wire.record.CorruptRecordException;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;
import org.xerial.snappy.Snappy;

import java.io.IOException;
import java.nio.ByteBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Snappy in the framing of xerial's {@code SnappyOutputStream}, which Kafka uses: an eight-byte
 * magic, version and compatible version (int32 each), then blocks of int32 compressed length and a
 * raw Snappy block. Input without the magic is read as one raw Snappy block, as
 * {@code SnappyInputStream} does.
 */
final class SnappyCodec implements Codec
{
    private static final byte[] MAGIC = {(byte)0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
    private static final int HEADER = 16;
    /** xerial's default block size, which Kafka keeps. */
    private static final int BLOCK = 32 * 1024;

    private final CodecSupport support = new CodecSupport();

    @Override
    public CompressionType type()
    {
        return CompressionType.SNAPPY;
    }

    @Override
    public int compress(final DirectBuffer src, final int offset, final int length, final MutableDirectBuffer dst, final int dstOffset)
    {
        final int blocks = Math.max(1, (length + BLOCK - 1) / BLOCK);
        final ExpandableDirectByteBuffer scratch =
            support.directScratch(HEADER + blocks * (4 + Snappy.maxCompressedLength(BLOCK)));
        scratch.putBytes(0, MAGIC);
        scratch.putInt(8, 1, BIG_ENDIAN);
        scratch.putInt(12, 1, BIG_ENDIAN);
        int p = HEADER;
        try
        {
            for (int done = 0; done < length; done += BLOCK)
            {
                final int n = Math.min(BLOCK, length - done);
                final ByteBuffer in = support.directInput(src, offset + done, n);
                final int written = Snappy.compress(in, support.out.of(scratch, p + 4, scratch.capacity() - p - 4));
                scratch.putInt(p, written, BIG_ENDIAN);
                p += 4 + written;
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("snappy compression failed", ex);
        }
        support.copyOut(p, dst, dstOffset);
        return p;
    }

    @Override
    public int decompress(
        final DirectBuffer src, final int offset, final int length, final ExpandableDirectByteBuffer dst, final int dstOffset,
        final int maxLength)
    {
        final int limit = CodecSupport.limit(dstOffset, maxLength);
        final ByteBuffer input = support.directInput(src, offset, length);
        final int base = input.position();
        try
        {
            if (!hasMagic(src, offset, length))
            {
                return block(input, base, length, dst, dstOffset, limit) - dstOffset;
            }
            int p = HEADER;
            int out = dstOffset;
            while (p < length)
            {
                if (length - p < 4)
                {
                    throw new CorruptRecordException("snappy: truncated block length");
                }
                final int n = src.getInt(offset + p, BIG_ENDIAN);
                p += 4;
                if (n < 0 || n > length - p)
                {
                    throw CorruptRecordException.of("snappy: block length ", n, " exceeds the data");
                }
                out = block(input, base + p, n, dst, out, limit);
                p += n;
            }
            return out - dstOffset;
        }
        catch (final IOException ex)
        {
            throw CorruptRecordException.of("snappy", ex);
        }
    }

    private int block(
        final ByteBuffer input, final int at, final int n, final ExpandableDirectByteBuffer dst, final int out, final int limit)
        throws IOException
    {
        // the input view is ours: narrow it to this block (Snappy reads position to limit)
        final ByteBuffer block = input.limit(input.capacity()).position(at).limit(at + n);
        final int size = Snappy.uncompressedLength(block);
        if (size < 0)
        {
            throw new CorruptRecordException("snappy: invalid block");
        }
        if ((long)out + size > limit)
        {
            throw new CorruptRecordException("snappy: decompressed data exceeds the limit");
        }
        CodecSupport.room(dst, out, size, limit);
        final int written = Snappy.uncompress(block, support.out.of(dst, out, size));
        if (written != size)
        {
            throw CorruptRecordException.of("snappy: block decompressed to ", written, " bytes, not ", size, "");
        }
        return out + written;
    }

    private static boolean hasMagic(final DirectBuffer src, final int offset, final int length)
    {
        if (length < HEADER)
        {
            return false;
        }
        for (int i = 0; i < MAGIC.length; i++)
        {
            if (src.getByte(offset + i) != MAGIC[i])
            {
                return false;
            }
        }
        return true;
    }
}
