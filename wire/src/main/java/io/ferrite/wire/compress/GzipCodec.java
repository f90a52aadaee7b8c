package io.ferrite.wire.compress;

import io.ferrite.wire.record.CorruptRecordException;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;
import java.util.zip.DataFormatException;
import java.util.zip.Deflater;
import java.util.zip.Inflater;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * GZIP (RFC 1952) as Kafka's {@code GZIPOutputStream}/{@code GZIPInputStream} produce and read it:
 * a raw deflate stream between a ten-byte header and a CRC32/length trailer. Reads concatenated
 * members and ignores bytes after the last one, as {@code GZIPInputStream} does.
 */
final class GzipCodec implements Codec
{
    private static final int HEADER = 10;
    private static final int TRAILER = 8;
    private static final int FHCRC = 2;
    private static final int FEXTRA = 4;
    private static final int FNAME = 8;
    private static final int FCOMMENT = 16;
    private static final int RESERVED = 0xE0;
    /** Room added per inflate step; deflate rarely expands data more than this per call. */
    private static final int STEP = 16 * 1024;

    private final CodecSupport support = new CodecSupport();
    private final Deflater deflater = new Deflater(Deflater.DEFAULT_COMPRESSION, true);
    private final Inflater inflater = new Inflater(true);
    private final CRC32 crc = new CRC32();

    @Override
    public CompressionType type()
    {
        return CompressionType.GZIP;
    }

    @Override
    public int compress(final DirectBuffer src, final int offset, final int length, final MutableDirectBuffer dst, final int dstOffset)
    {
        int p = dstOffset;
        dst.putInt(p, 0x00088B1F, LITTLE_ENDIAN); // magic 1f 8b, deflate, no flags
        dst.putInt(p + 4, 0); // mtime
        dst.putByte(p + 8, (byte)0); // extra flags
        dst.putByte(p + 9, (byte)0xFF); // OS unknown
        p += HEADER;

        deflater.reset();
        deflater.setInput(support.in.of(src, offset, length));
        deflater.finish();
        while (!deflater.finished())
        {
            dst.checkLimit(p + STEP);
            final ByteBuffer view = support.out.of(dst, p, dst.capacity() - p);
            p += deflater.deflate(view);
        }
        crc.reset();
        crc.update(support.in.of(src, offset, length));
        dst.checkLimit(p + TRAILER);
        dst.putInt(p, (int)crc.getValue(), LITTLE_ENDIAN);
        dst.putInt(p + 4, length, LITTLE_ENDIAN);
        return p + TRAILER - dstOffset;
    }

    @Override
    public int decompress(
        final DirectBuffer src, final int offset, final int length, final ExpandableDirectByteBuffer dst, final int dstOffset,
        final int maxLength)
    {
        final int end = offset + length;
        final int limit = CodecSupport.limit(dstOffset, maxLength);
        int p = offset;
        int out = dstOffset;
        do
        {
            p = header(src, p, end);
            inflater.reset();
            final ByteBuffer input = support.in.of(src, p, end - p);
            inflater.setInput(input);
            final int memberStart = out;
            try
            {
                while (!inflater.finished())
                {
                    final int room = CodecSupport.room(dst, out, STEP, limit);
                    final int n = inflater.inflate(support.out.of(dst, out, room));
                    out += n;
                    if (n == 0 && (inflater.needsInput() || inflater.needsDictionary()))
                    {
                        throw new CorruptRecordException("gzip: deflate stream ends early");
                    }
                }
            }
            catch (final DataFormatException ex)
            {
                throw CorruptRecordException.of("gzip", ex);
            }
            p = end - inflater.getRemaining();
            if (end - p < TRAILER)
            {
                throw new CorruptRecordException("gzip: missing trailer");
            }
            crc.reset();
            crc.update(support.out.of(dst, memberStart, out - memberStart));
            if (src.getInt(p, LITTLE_ENDIAN) != (int)crc.getValue())
            {
                throw new CorruptRecordException("gzip: CRC32 mismatch");
            }
            if (src.getInt(p + 4, LITTLE_ENDIAN) != out - memberStart)
            {
                throw new CorruptRecordException("gzip: length mismatch");
            }
            p += TRAILER;
        }
        while (end - p >= 2 && (src.getShort(p, LITTLE_ENDIAN) & 0xFFFF) == 0x8B1F);
        return out - dstOffset;
    }

    /** Checks a member header at {@code p}; returns where its deflate stream starts. */
    private static int header(final DirectBuffer src, final int p, final int end)
    {
        if (end - p < HEADER || (src.getShort(p, LITTLE_ENDIAN) & 0xFFFF) != 0x8B1F || src.getByte(p + 2) != 8)
        {
            throw new CorruptRecordException("gzip: not a gzip header");
        }
        final int flags = src.getByte(p + 3) & 0xFF;
        if ((flags & RESERVED) != 0)
        {
            throw new CorruptRecordException("gzip: reserved header flags set");
        }
        int q = p + HEADER;
        if ((flags & FEXTRA) != 0)
        {
            if (end - q < 2)
            {
                throw new CorruptRecordException("gzip: truncated header");
            }
            q += 2 + (src.getShort(q, LITTLE_ENDIAN) & 0xFFFF);
        }
        if ((flags & FNAME) != 0)
        {
            q = skipZeroTerminated(src, q, end);
        }
        if ((flags & FCOMMENT) != 0)
        {
            q = skipZeroTerminated(src, q, end);
        }
        if ((flags & FHCRC) != 0)
        {
            q += 2;
        }
        if (q > end)
        {
            throw new CorruptRecordException("gzip: truncated header");
        }
        return q;
    }

    private static int skipZeroTerminated(final DirectBuffer src, final int from, final int end)
    {
        for (int q = from; q < end; q++)
        {
            if (src.getByte(q) == 0)
            {
                return q + 1;
            }
        }
        throw new CorruptRecordException("gzip: truncated header");
    }
}
