package io.ferrite.wire.message;

import org.agrona.DirectBuffer;

/**
 * Writes the elements of an array of primitives, strings or bytes. The parent declares the count;
 * writing more or fewer elements, or elements of another type, throws.
 */
public final class ArrayEncoder implements NestedEncoder
{
    /** Element kinds, as the generated code names them. */
    public static final int BOOL = 0, INT8 = 1, INT16 = 2, UINT16 = 3, INT32 = 4, UINT32 = 5, INT64 = 6,
        FLOAT64 = 7, UUID = 8, STRING = 9, BYTES = 10;

    private final EncodeCursor out;
    private final int kind;
    private final String field;
    private boolean compact;
    private int declared;
    private int written;
    private int sizeAt = -1;
    private int discardFrom = -1;

    ArrayEncoder(final EncodeCursor out, final int kind, final String field)
    {
        this.out = out;
        this.kind = kind;
        this.field = field;
    }

    ArrayEncoder begin(final int count, final boolean compact, final int sizeAt, final int discardFrom)
    {
        this.declared = count;
        this.written = 0;
        this.compact = compact;
        this.sizeAt = sizeAt;
        this.discardFrom = discardFrom;
        return this;
    }

    private void element(final int expectedKind)
    {
        if (expectedKind != kind)
        {
            throw wrongType(field);
        }
        if (written == declared)
        {
            throw StructEncoder.tooMany(field, declared);
        }
        written++;
    }

    public ArrayEncoder addBool(final boolean value)
    {
        element(BOOL);
        out.putBool(value);
        return this;
    }

    public ArrayEncoder addInt8(final byte value)
    {
        element(INT8);
        out.putByte(value);
        return this;
    }

    public ArrayEncoder addInt16(final short value)
    {
        element(INT16);
        out.putShort(value);
        return this;
    }

    public ArrayEncoder addUint16(final int value)
    {
        element(UINT16);
        out.putShort(value);
        return this;
    }

    public ArrayEncoder addInt32(final int value)
    {
        element(INT32);
        out.putInt(value);
        return this;
    }

    public ArrayEncoder addUint32(final long value)
    {
        element(UINT32);
        out.putInt((int)value);
        return this;
    }

    public ArrayEncoder addInt64(final long value)
    {
        element(INT64);
        out.putLong(value);
        return this;
    }

    public ArrayEncoder addFloat64(final double value)
    {
        element(FLOAT64);
        out.putDouble(value);
        return this;
    }

    public ArrayEncoder addUuid(final long mostSignificantBits, final long leastSignificantBits)
    {
        element(UUID);
        out.putUuid(mostSignificantBits, leastSignificantBits);
        return this;
    }

    public ArrayEncoder addString(final CharSequence value)
    {
        element(STRING);
        Encoding.string(out, value, compact, false, field);
        return this;
    }

    public ArrayEncoder addString(final DirectBuffer src, final int offset, final int length)
    {
        element(STRING);
        Encoding.string(out, src, offset, length, compact, field);
        return this;
    }

    public ArrayEncoder addBytes(final byte[] value)
    {
        element(BYTES);
        Encoding.bytes(out, value, compact, false, field);
        return this;
    }

    public ArrayEncoder addBytes(final DirectBuffer src, final int offset, final int length)
    {
        element(BYTES);
        Encoding.bytes(out, src, offset, length, compact);
        return this;
    }

    @Override
    public void closeNested()
    {
        if (written != declared)
        {
            throw StructEncoder.tooFew(field, declared, written);
        }
        if (sizeAt >= 0)
        {
            out.patchSize(sizeAt);
        }
        if (discardFrom >= 0)
        {
            out.position(discardFrom);
        }
    }

    private static IllegalStateException wrongType(final String field)
    {
        return new IllegalStateException(field + ": element of the wrong type");
    }
}
