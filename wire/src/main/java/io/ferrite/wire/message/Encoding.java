package io.ferrite.wire.message;

import io.ferrite.wire.Utf8;
import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;

/**
 * The protocol's length-prefixed encodings, for the generated encoders. Misuse (a null where the
 * version allows none, a string over 32767 bytes, a value the version cannot carry) is a bug in the
 * caller and throws {@link IllegalArgumentException} before anything is written.
 */
public final class Encoding
{
    private Encoding()
    {
    }

    public static void string(
        final EncodeCursor c, final CharSequence value, final boolean compact, final boolean nullable, final String field)
    {
        if (value == null)
        {
            nullValue(c, compact, nullable, true, field);
            return;
        }
        final int length = Utf8.encodedLength(value);
        if (length > Decoding.MAX_STRING_LENGTH)
        {
            throw tooLong(field);
        }
        stringPrefix(c, length, compact);
        c.putUtf8(value);
    }

    /** Writes a string whose UTF-8 bytes are already in a buffer. */
    public static void string(
        final EncodeCursor c, final DirectBuffer src, final int offset, final int length, final boolean compact,
        final String field)
    {
        if (length > Decoding.MAX_STRING_LENGTH || length < 0)
        {
            throw invalidLength(field, length);
        }
        stringPrefix(c, length, compact);
        c.putBytes(src, offset, length);
    }

    private static void stringPrefix(final EncodeCursor c, final int length, final boolean compact)
    {
        if (compact)
        {
            c.putUnsignedVarint(length + 1);
        }
        else
        {
            c.putShort(length);
        }
    }

    public static void bytes(final EncodeCursor c, final byte[] value, final boolean compact, final boolean nullable, final String field)
    {
        if (value == null)
        {
            nullValue(c, compact, nullable, false, field);
            return;
        }
        lengthPrefix(c, value.length, compact);
        c.putBytes(value);
    }

    public static void bytes(
        final EncodeCursor c, final DirectBuffer src, final int offset, final int length, final boolean compact)
    {
        if (length < 0)
        {
            throw negativeLength(length);
        }
        lengthPrefix(c, length, compact);
        c.putBytes(src, offset, length);
    }

    /** The prefix of a bytes or array value: compact unsigned varint of n + 1, or int32 n. */
    public static void lengthPrefix(final EncodeCursor c, final int length, final boolean compact)
    {
        if (compact)
        {
            c.putUnsignedVarint(length + 1);
        }
        else
        {
            c.putInt(length);
        }
    }

    public static void nullValue(
        final EncodeCursor c, final boolean compact, final boolean nullable, final boolean string, final String field)
    {
        if (!nullable)
        {
            throw notNullable(field);
        }
        if (compact)
        {
            c.putUnsignedVarint(0);
        }
        else if (string)
        {
            c.putShort(-1);
        }
        else
        {
            c.putInt(-1);
        }
    }

    public static void arrayCount(final EncodeCursor c, final int count, final boolean compact, final String field)
    {
        if (count < 0)
        {
            throw negativeCount(field, count);
        }
        lengthPrefix(c, count, compact);
    }

    /** Size in bytes of a compact string of {@code utf8Length} bytes (for a tagged field's size). */
    public static int compactSize(final int utf8Length)
    {
        return Varints.unsignedVarintSize(utf8Length + 1) + utf8Length;
    }

    /** Writes the tag and size that precede a tagged field's value. */
    public static void tag(final EncodeCursor c, final int tag, final int size)
    {
        c.putUnsignedVarint(tag);
        c.putUnsignedVarint(size);
    }

    public static IllegalArgumentException nonDefault(final String field, final short version)
    {
        return new IllegalArgumentException("Attempted to write a non-default " + field + " at version " + version);
    }

    /** The generated encoders' {@code wrap} for a version the schema does not declare. */
    public static IllegalArgumentException unsupportedVersion(final String message, final short version)
    {
        return new IllegalArgumentException(message + ": unsupported version " + version);
    }

    // the messages of the exceptions above, built out of the methods they guard (they stay small enough to inline)

    private static IllegalArgumentException tooLong(final String field)
    {
        return new IllegalArgumentException("'" + field + "' field is too long to be serialized");
    }

    private static IllegalArgumentException invalidLength(final String field, final int length)
    {
        return new IllegalArgumentException("'" + field + "' field has invalid length " + length);
    }

    private static IllegalArgumentException negativeLength(final int length)
    {
        return new IllegalArgumentException("negative length " + length);
    }

    private static IllegalArgumentException notNullable(final String field)
    {
        return new IllegalArgumentException("non-nullable field " + field + " was serialized as null");
    }

    private static IllegalArgumentException negativeCount(final String field, final int count)
    {
        return new IllegalArgumentException(field + ": negative element count " + count);
    }
}
