package io.ferrite.wire.compress;

import io.ferrite.wire.record.CorruptRecordException;
import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4SafeDecompressor;
import net.jpountz.xxhash.StreamingXXHash32;
import net.jpountz.xxhash.XXHash32;
import net.jpountz.xxhash.XXHashFactory;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * LZ4 in the frame format (v1.5.1) as Kafka writes it: magic {@code 0x184D2204}, a descriptor
 * (FLG, BD, optional content size, and HC, the second byte of the xxHash32 of the descriptor), then
 * blocks of a little-endian int32 size (high bit: stored uncompressed) and data, an end mark of 0.
 * Kafka writes 64 KiB independent blocks without checksums; other producers may add block or
 * content checksums, which are verified.
 */
final class Lz4Codec implements Codec
{
    static final int MAGIC = 0x184D2204;
    private static final int UNCOMPRESSED = 0x8000_0000;
    private static final int FLG_VERSION_MASK = 0xC0;
    private static final int FLG_VERSION = 0x40;
    private static final int FLG_BLOCK_INDEPENDENCE = 0x20;
    private static final int FLG_BLOCK_CHECKSUM = 0x10;
    private static final int FLG_CONTENT_SIZE = 0x08;
    private static final int FLG_CONTENT_CHECKSUM = 0x04;
    private static final int FLG_RESERVED = 0x02;
    private static final int FLG_DICT_ID = 0x01;
    /** Kafka's choice: 64 KiB blocks (BD block-size id 4), independent, no checksums. */
    private static final int BLOCK = 64 * 1024;
    private static final byte FLG_KAFKA = (byte)(FLG_VERSION | FLG_BLOCK_INDEPENDENCE);
    private static final byte BD_KAFKA = (byte)(4 << 4);

    private static final LZ4Compressor COMPRESSOR = LZ4Factory.fastestInstance().fastCompressor();
    private static final LZ4SafeDecompressor DECOMPRESSOR = LZ4Factory.fastestInstance().safeDecompressor();
    private static final XXHash32 XXHASH = XXHashFactory.fastestInstance().hash32();

    private final CodecSupport support = new CodecSupport();
    private final StreamingXXHash32 contentHash = XXHashFactory.fastestInstance().newStreamingHash32(0);
    private byte[] hashChunk;

    @Override
    public CompressionType type()
    {
        return CompressionType.LZ4;
    }

    @Override
    public int compress(final DirectBuffer src, final int offset, final int length, final MutableDirectBuffer dst, final int dstOffset)
    {
        final int blocks = (length + BLOCK - 1) / BLOCK;
        dst.checkLimit(dstOffset + 7 + blocks * (4 + COMPRESSOR.maxCompressedLength(BLOCK)) + 4);
        int p = dstOffset;
        dst.putInt(p, MAGIC, LITTLE_ENDIAN);
        dst.putByte(p + 4, FLG_KAFKA);
        dst.putByte(p + 5, BD_KAFKA);
        final ByteBuffer descriptor = support.out.of(dst, p + 4, 2);
        dst.putByte(p + 6, (byte)(XXHASH.hash(descriptor, descriptor.position(), 2, 0) >> 8));
        p += 7;
        for (int done = 0; done < length; done += BLOCK)
        {
            final int n = Math.min(BLOCK, length - done);
            final ByteBuffer in = support.in.of(src, offset + done, n);
            final int room = dst.capacity() - p - 4;
            final ByteBuffer out = support.out.of(dst, p + 4, room);
            final int written = COMPRESSOR.compress(in, in.position(), n, out, out.position(), room);
            if (written >= n)
            {
                // incompressible: store the block as it is
                dst.putInt(p, n | UNCOMPRESSED, LITTLE_ENDIAN);
                dst.putBytes(p + 4, src, offset + done, n);
                p += 4 + n;
            }
            else
            {
                dst.putInt(p, written, LITTLE_ENDIAN);
                p += 4 + written;
            }
        }
        dst.putInt(p, 0, LITTLE_ENDIAN);
        return p + 4 - dstOffset;
    }

    @Override
    public int decompress(
        final DirectBuffer src, final int offset, final int length, final ExpandableDirectByteBuffer dst, final int dstOffset,
        final int maxLength)
    {
        final int end = offset + length;
        final int limit = CodecSupport.limit(dstOffset, maxLength);
        if (length < 7 || src.getInt(offset, LITTLE_ENDIAN) != MAGIC)
        {
            throw new CorruptRecordException("lz4: not an LZ4 frame");
        }
        final int flg = src.getByte(offset + 4) & 0xFF;
        final int bd = src.getByte(offset + 5) & 0xFF;
        if ((flg & FLG_VERSION_MASK) != FLG_VERSION || (flg & (FLG_RESERVED | FLG_DICT_ID)) != 0 || (bd & 0x8F) != 0)
        {
            throw new CorruptRecordException("lz4: unsupported frame descriptor");
        }
        final int blockSizeId = (bd >> 4) & 0x7;
        if (blockSizeId < 4)
        {
            throw CorruptRecordException.of("lz4: invalid block size id ", blockSizeId, "");
        }
        final int maxBlock = 1 << (8 + 2 * blockSizeId);
        int p = offset + 6;
        if ((flg & FLG_CONTENT_SIZE) != 0)
        {
            p += 8;
        }
        if (p >= end)
        {
            throw new CorruptRecordException("lz4: truncated frame descriptor");
        }
        final ByteBuffer descriptor = support.in.of(src, offset + 4, p - offset - 4);
        if (src.getByte(p) != (byte)(XXHASH.hash(descriptor, descriptor.position(), p - offset - 4, 0) >> 8))
        {
            throw new CorruptRecordException("lz4: frame descriptor checksum mismatch");
        }
        p++;
        final boolean blockChecksum = (flg & FLG_BLOCK_CHECKSUM) != 0;
        final boolean contentChecksum = (flg & FLG_CONTENT_CHECKSUM) != 0;
        contentHash.reset();
        int out = dstOffset;
        while (true)
        {
            if (end - p < 4)
            {
                throw new CorruptRecordException("lz4: frame ends before its end mark");
            }
            final int header = src.getInt(p, LITTLE_ENDIAN);
            p += 4;
            if (header == 0)
            {
                break;
            }
            final int size = header & ~UNCOMPRESSED;
            if (size > maxBlock || size > end - p)
            {
                throw CorruptRecordException.of("lz4: block of ", size, " bytes exceeds the frame or its maximum");
            }
            final int room = CodecSupport.room(dst, out, maxBlock, limit);
            final int written;
            if ((header & UNCOMPRESSED) != 0)
            {
                if (size > room)
                {
                    throw new CorruptRecordException("lz4: decompressed data exceeds the limit");
                }
                dst.putBytes(out, src, p, size);
                written = size;
            }
            else
            {
                try
                {
                    final ByteBuffer in = support.in.of(src, p, size);
                    final ByteBuffer o = support.out.of(dst, out, room);
                    written = DECOMPRESSOR.decompress(in, in.position(), size, o, o.position(), Math.min(room, maxBlock));
                }
                catch (final LZ4Exception ex)
                {
                    throw CorruptRecordException.of("lz4", ex);
                }
            }
            if (blockChecksum)
            {
                if (end - p - size < 4)
                {
                    throw new CorruptRecordException("lz4: truncated block checksum");
                }
                final ByteBuffer block = support.in.of(src, p, size);
                if (XXHASH.hash(block, block.position(), size, 0) != src.getInt(p + size, LITTLE_ENDIAN))
                {
                    throw new CorruptRecordException("lz4: block checksum mismatch");
                }
                p += 4;
            }
            if (contentChecksum)
            {
                hashContent(dst, out, written);
            }
            p += size;
            out += written;
        }
        if (contentChecksum)
        {
            if (end - p < 4)
            {
                throw new CorruptRecordException("lz4: truncated content checksum");
            }
            if (contentHash.getValue() != src.getInt(p, LITTLE_ENDIAN))
            {
                throw new CorruptRecordException("lz4: content checksum mismatch");
            }
        }
        return out - dstOffset;
    }

    private void hashContent(final DirectBuffer data, final int offset, final int length)
    {
        if (hashChunk == null)
        {
            hashChunk = new byte[8192];
        }
        for (int done = 0; done < length; )
        {
            final int n = Math.min(hashChunk.length, length - done);
            data.getBytes(offset + done, hashChunk, 0, n);
            contentHash.update(hashChunk, 0, n);
            done += n;
        }
    }
}
