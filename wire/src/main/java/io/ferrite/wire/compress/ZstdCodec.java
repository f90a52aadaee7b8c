package io.ferrite.wire.compress;

import com.github.luben.zstd.Zstd;
import com.github.luben.zstd.ZstdCompressCtx;
import com.github.luben.zstd.ZstdDecompressCtx;
import com.github.luben.zstd.ZstdException;
import io.ferrite.wire.record.CorruptRecordException;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

/**
 * Zstandard frames, as Kafka's {@code ZstdOutputStream} writes and {@code ZstdInputStream} reads
 * them (one or more frames, content size present or not). Compression level 3, Kafka's default.
 */
final class ZstdCodec implements Codec
{
    private static final int LEVEL = 3;
    private static final int STEP = 64 * 1024;

    private final CodecSupport support = new CodecSupport();
    private final ZstdCompressCtx compressor = new ZstdCompressCtx().setLevel(LEVEL);
    private final ZstdDecompressCtx decompressor = new ZstdDecompressCtx();

    @Override
    public CompressionType type()
    {
        return CompressionType.ZSTD;
    }

    @Override
    public int compress(final DirectBuffer src, final int offset, final int length, final MutableDirectBuffer dst, final int dstOffset)
    {
        final int bound = (int)Zstd.compressBound(length);
        final ExpandableDirectByteBuffer scratch = support.directScratch(bound);
        final ByteBuffer in = support.directInput(src, offset, length);
        final ByteBuffer out = support.out.of(scratch, 0, bound);
        final int written = compressor.compressDirectByteBuffer(out, out.position(), bound, in, in.position(), length);
        support.copyOut(written, dst, dstOffset);
        return written;
    }

    @Override
    public int decompress(
        final DirectBuffer src, final int offset, final int length, final ExpandableDirectByteBuffer dst, final int dstOffset,
        final int maxLength)
    {
        final int limit = CodecSupport.limit(dstOffset, maxLength);
        final ByteBuffer in = support.directInput(src, offset, length);
        int out = dstOffset;
        boolean frameDone = false;
        decompressor.reset();
        try
        {
            while (in.hasRemaining())
            {
                final int room = CodecSupport.room(dst, out, STEP, limit);
                final ByteBuffer o = support.out.of(dst, out, room);
                final int before = o.position();
                final int inBefore = in.position();
                frameDone = decompressor.decompressDirectByteBufferStream(o, in);
                out += o.position() - before;
                if (!frameDone && o.hasRemaining() && in.position() == inBefore && o.position() == before)
                {
                    throw new CorruptRecordException("zstd: no progress decoding the frame");
                }
            }
        }
        catch (final ZstdException ex)
        {
            throw CorruptRecordException.of("zstd", ex);
        }
        if (!frameDone)
        {
            throw new CorruptRecordException("zstd: data ends inside a frame");
        }
        return out - dstOffset;
    }
}
