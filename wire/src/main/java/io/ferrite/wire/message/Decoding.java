package io.ferrite.wire.message;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Bounds-checked reads of the protocol's length-prefixed fields, for the generated decoders.
 *
 * <p>Every method checks what it reads against {@code limit} (the end of the frame or of the
 * enclosing tagged field) and fails with one {@link ProtocolException} naming the field. Lengths
 * are checked against the bytes that remain before anything uses them, and nothing here allocates
 * on the success path.
 *
 * <p>Methods that find both where a field's data starts and how long it is return them packed in
 * one long: the data offset in the high 32 bits, the length (or count) in the low 32, -1 for null.
 */
public final class Decoding
{
    /** Kafka refuses strings longer than this on both sides. */
    public static final int MAX_STRING_LENGTH = 0x7FFF;

    private Decoding()
    {
    }

    public static int at(final long packed)
    {
        return (int)(packed >>> 32);
    }

    public static int length(final long packed)
    {
        return (int)packed;
    }

    private static long pack(final int offset, final int length)
    {
        return ((long)offset << 32) | (length & 0xFFFF_FFFFL);
    }

    /** Checks that {@code n} bytes remain at {@code p}; returns {@code p + n}. */
    public static int require(final int p, final long n, final int limit, final String field)
    {
        if (n < 0 || n > limit - p)
        {
            throw notEnough(field, n, limit - p);
        }
        return (int)(p + n);
    }

    /** Fails unless a tagged field's value ended exactly where its declared size said it would. */
    public static void requireEnd(final int p, final int end, final String field)
    {
        if (p != end)
        {
            throw new ProtocolException(field, "value does not fill the size its tag declared");
        }
    }

    public static long string(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final boolean nullable,
        final String field)
    {
        final long h = prefix(buffer, p, limit, compact, 2, field);
        return checked(at(h), length(h), limit, nullable, MAX_STRING_LENGTH, field);
    }

    public static long bytes(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final boolean nullable,
        final String field)
    {
        final long h = prefix(buffer, p, limit, compact, 4, field);
        return checked(at(h), length(h), limit, nullable, Integer.MAX_VALUE, field);
    }

    /**
     * Reads an array's element count. A count larger than the bytes that remain is refused before
     * anything iterates, as Kafka refuses to allocate such a collection.
     */
    public static long array(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final boolean nullable,
        final String field)
    {
        final long h = prefix(buffer, p, limit, compact, 4, field);
        final int dataAt = at(h);
        final int count = length(h);
        if (count == -1)
        {
            if (!nullable)
            {
                throw new ProtocolException(field, "non-nullable array was serialized as null");
            }
            return h;
        }
        if (count < 0)
        {
            throw invalid(field, "invalid array length ", count);
        }
        if (count > limit - dataAt)
        {
            throw arrayTooLong(field, count, limit - dataAt);
        }
        return h;
    }

    /**
     * Reads a length prefix: compact (unsigned varint of length + 1, 0 for null) or a signed int16 or
     * int32 ({@code width}), -1 for null. Returns the data offset and the raw length, which may be
     * negative beyond -1; the callers check it.
     */
    private static long prefix(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final int width,
        final String field)
    {
        if (compact)
        {
            final long v = Varints.readUnsignedVarint(buffer, p, limit, field);
            // 0 (null) becomes -1; a value of 2^31 or more stays negative and is refused by the caller
            return pack(p + Varints.size(v), Varints.value(v) - 1);
        }
        require(p, width, limit, field);
        return pack(p + width, width == 2 ? buffer.getShort(p, BIG_ENDIAN) : buffer.getInt(p, BIG_ENDIAN));
    }

    private static long checked(
        final int dataAt, final int length, final int limit, final boolean nullable, final int max, final String field)
    {
        if (length == -1)
        {
            if (!nullable)
            {
                throw new ProtocolException(field, "non-nullable field was serialized as null");
            }
            return pack(dataAt, -1);
        }
        if (length < 0)
        {
            throw invalid(field, "invalid length ", length);
        }
        if (length > max)
        {
            throw tooLong(field, length, max);
        }
        require(dataAt, length, limit, field);
        return pack(dataAt, length);
    }

    /** Skips one non-null string (an array element); returns the offset after it. */
    public static int skipString(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final String field)
    {
        final long h = string(buffer, p, limit, compact, false, field);
        return at(h) + length(h);
    }

    /** Skips one non-null bytes value (an array element); returns the offset after it. */
    public static int skipBytes(
        final DirectBuffer buffer, final int p, final int limit, final boolean compact, final String field)
    {
        final long h = bytes(buffer, p, limit, compact, false, field);
        return at(h) + length(h);
    }

    /** Reads an unsigned varint that must be a non-negative int (a count, a tag or a size). */
    public static long count(final DirectBuffer buffer, final int p, final int limit, final String field)
    {
        final long v = Varints.readUnsignedVarint(buffer, p, limit, field);
        if (Varints.value(v) < 0)
        {
            throw tooLarge(field, Varints.value(v));
        }
        return v;
    }

    /** The generated decoders' {@code wrap} for a version the schema does not declare. */
    public static ProtocolException unsupportedVersion(final String message, final short version)
    {
        return new ProtocolException(message, "unsupported version " + version);
    }

    // the messages of the exceptions above, built out of the methods they guard (they stay small enough to inline)

    private static ProtocolException notEnough(final String field, final long n, final int remaining)
    {
        return new ProtocolException(field, "needs " + n + " bytes, " + Math.max(0, remaining) + " remain");
    }

    private static ProtocolException invalid(final String field, final String what, final int value)
    {
        return new ProtocolException(field, what + value);
    }

    private static ProtocolException arrayTooLong(final String field, final int count, final int remaining)
    {
        return new ProtocolException(field, "array of " + count + " elements cannot fit in " + remaining + " bytes");
    }

    private static ProtocolException tooLong(final String field, final int length, final int max)
    {
        return new ProtocolException(field, "length " + length + " exceeds " + max);
    }

    private static ProtocolException tooLarge(final String field, final int unsigned)
    {
        return new ProtocolException(field, "value " + Integer.toUnsignedString(unsigned) + " is too large");
    }
}
