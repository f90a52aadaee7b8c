package io.ferrite.wire.message;

import io.ferrite.wire.Utf8;
import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The write position shared by all encoders of one message: every nested encoder appends at the
 * same cursor, so a message is written front to back in one pass. An expandable buffer grows as
 * it is written; a fixed one throws {@code IndexOutOfBoundsException} when full.
 */
public final class EncodeCursor
{
    private MutableDirectBuffer buffer;
    private int position;
    private short version;

    void wrap(final MutableDirectBuffer buffer, final int offset, final short version)
    {
        this.buffer = buffer;
        this.position = offset;
        this.version = version;
    }

    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    public int position()
    {
        return position;
    }

    void position(final int position)
    {
        this.position = position;
    }

    public short version()
    {
        return version;
    }

    void putByte(final int value)
    {
        buffer.putByte(position, (byte)value);
        position += 1;
    }

    void putBool(final boolean value)
    {
        putByte(value ? 1 : 0);
    }

    void putShort(final int value)
    {
        buffer.putShort(position, (short)value, BIG_ENDIAN);
        position += 2;
    }

    void putInt(final int value)
    {
        buffer.putInt(position, value, BIG_ENDIAN);
        position += 4;
    }

    void putLong(final long value)
    {
        buffer.putLong(position, value, BIG_ENDIAN);
        position += 8;
    }

    void putDouble(final double value)
    {
        buffer.putDouble(position, value, BIG_ENDIAN);
        position += 8;
    }

    void putUuid(final long mostSignificantBits, final long leastSignificantBits)
    {
        putLong(mostSignificantBits);
        putLong(leastSignificantBits);
    }

    void putUnsignedVarint(final int value)
    {
        position += Varints.putUnsignedVarint(buffer, position, value);
    }

    void putBytes(final DirectBuffer src, final int offset, final int length)
    {
        buffer.putBytes(position, src, offset, length);
        position += length;
    }

    void putBytes(final byte[] src)
    {
        buffer.putBytes(position, src);
        position += src.length;
    }

    void putUtf8(final CharSequence value)
    {
        position += Utf8.encode(value, buffer, position);
    }

    /** Writes a one-byte placeholder for a size or count patched later; returns its offset. */
    int reserveByte()
    {
        final int at = position;
        putByte(0);
        return at;
    }

    /**
     * Writes, at a placeholder reserved by {@link #reserveByte()}, the number of bytes written since
     * it. Sizes under 128 fit the placeholder; larger ones move what follows to make room.
     */
    void patchSize(final int sizeAt)
    {
        final int dataAt = sizeAt + 1;
        final int size = position - dataAt;
        final int width = Varints.unsignedVarintSize(size);
        if (width > 1)
        {
            // grow first (an expandable buffer extends on put), then move the value up
            buffer.putByte(position + width - 2, (byte)0);
            buffer.putBytes(dataAt + width - 1, buffer, dataAt, size);
            position += width - 1;
        }
        Varints.putUnsignedVarint(buffer, sizeAt, size);
    }
}
