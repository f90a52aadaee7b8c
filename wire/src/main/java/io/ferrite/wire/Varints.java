package io.ferrite.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Kafka's variable-length integers: unsigned varints (protocol lengths, counts and tags, at most
 * five bytes) and zig-zag signed varints and varlongs (record fields, at most five and ten bytes).
 *
 * <p>Readers take a {@code limit} and never look past it. Because Java returns one value, the int
 * readers return a packed long: the encoded size in the high 32 bits and the value in the low 32
 * ({@link #value(long)}, {@link #size(long)}); that costs nothing and allocates nothing.
 */
public final class Varints
{
    private Varints()
    {
    }

    public static int value(final long packed)
    {
        return (int)packed;
    }

    public static int size(final long packed)
    {
        return (int)(packed >>> 32);
    }

    /**
     * Reads an unsigned varint as Kafka does: up to five bytes, seven bits each, little end first.
     * Values of 2^31 and above come back negative, as in Kafka.
     */
    public static long readUnsignedVarint(final DirectBuffer buffer, final int offset, final int limit, final String field)
    {
        int value = 0;
        int shift = 0;
        int p = offset;
        while (true)
        {
            if (p >= limit)
            {
                throw new ProtocolException(field, "truncated varint");
            }
            final int b = buffer.getByte(p++);
            if ((b & 0x80) == 0)
            {
                value |= b << shift;
                return ((long)(p - offset) << 32) | (value & 0xFFFF_FFFFL);
            }
            value |= (b & 0x7F) << shift;
            shift += 7;
            if (shift > 28)
            {
                throw new ProtocolException(field, "varint longer than 5 bytes");
            }
        }
    }

    /** Reads a zig-zag signed varint (at most five bytes); packed like {@link #readUnsignedVarint}. */
    public static long readVarint(final DirectBuffer buffer, final int offset, final int limit, final String field)
    {
        final long raw = readUnsignedVarint(buffer, offset, limit, field);
        final int u = (int)raw;
        return (raw & 0xFFFF_FFFF_0000_0000L) | (((u >>> 1) ^ -(u & 1)) & 0xFFFF_FFFFL);
    }

    /** The number of bytes of the zig-zag varlong at {@code offset} (at most ten). */
    public static int varlongSize(final DirectBuffer buffer, final int offset, final int limit, final String field)
    {
        int p = offset;
        for (int i = 0; i < 10; i++)
        {
            if (p >= limit)
            {
                throw new ProtocolException(field, "truncated varlong");
            }
            if ((buffer.getByte(p++) & 0x80) == 0)
            {
                return p - offset;
            }
        }
        throw new ProtocolException(field, "varlong longer than 10 bytes");
    }

    /** Reads a zig-zag signed varlong whose size {@link #varlongSize} has already checked. */
    public static long readVarlongUnchecked(final DirectBuffer buffer, final int offset)
    {
        long value = 0;
        int shift = 0;
        int p = offset;
        long b;
        while (((b = buffer.getByte(p++)) & 0x80) != 0)
        {
            value |= (b & 0x7F) << shift;
            shift += 7;
        }
        value |= b << shift;
        return (value >>> 1) ^ -(value & 1);
    }

    public static int unsignedVarintSize(final int value)
    {
        // 1 byte per 7 bits of the highest set bit, at least one byte
        final int bits = 32 - Integer.numberOfLeadingZeros(value);
        return bits <= 7 ? 1 : (bits + 6) / 7;
    }

    public static int varintSize(final int value)
    {
        return unsignedVarintSize((value << 1) ^ (value >> 31));
    }

    public static int varlongSize(final long value)
    {
        final long v = (value << 1) ^ (value >> 63);
        final int bits = 64 - Long.numberOfLeadingZeros(v);
        return bits <= 7 ? 1 : (bits + 6) / 7;
    }

    /** Writes an unsigned varint; returns the number of bytes written. */
    public static int putUnsignedVarint(final MutableDirectBuffer buffer, final int offset, final int value)
    {
        int v = value;
        int p = offset;
        while ((v & 0xFFFF_FF80) != 0)
        {
            buffer.putByte(p++, (byte)((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        buffer.putByte(p++, (byte)v);
        return p - offset;
    }

    public static int putVarint(final MutableDirectBuffer buffer, final int offset, final int value)
    {
        return putUnsignedVarint(buffer, offset, (value << 1) ^ (value >> 31));
    }

    public static int putVarlong(final MutableDirectBuffer buffer, final int offset, final long value)
    {
        long v = (value << 1) ^ (value >> 63);
        int p = offset;
        while ((v & 0xFFFF_FFFF_FFFF_FF80L) != 0)
        {
            buffer.putByte(p++, (byte)((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        buffer.putByte(p++, (byte)v);
        return p - offset;
    }
}
