package io.ferrite.client;

import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;

/**
 * The headers of the next record to send: byte ranges the producer copies into the batch during
 * {@link Producer#send}. Reusable: {@link #clear()} and add again; grows only while warming up.
 */
public final class OutgoingHeaders
{
    private DirectBuffer[] keys = new DirectBuffer[4];
    private int[] keyOffsets = new int[4];
    private int[] keyLengths = new int[4];
    private DirectBuffer[] values = new DirectBuffer[4];
    private int[] valueOffsets = new int[4];
    private int[] valueLengths = new int[4];
    private int count;

    public OutgoingHeaders clear()
    {
        for (int i = 0; i < count; i++)
        {
            keys[i] = null;
            values[i] = null;
        }
        count = 0;
        return this;
    }

    /**
     * Adds a header; a -1 value length (and null value) is a null value.
     *
     * @throws NullPointerException     for a null key (a -1 key length), as kafka-clients' {@code RecordHeader}
     * @throws IllegalArgumentException for a value length below -1 or a range outside its buffer
     */
    public OutgoingHeaders add(
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        checkHeader(key, keyOffset, keyLength, value, valueOffset, valueLength);
        if (count == keys.length)
        {
            grow();
        }
        keys[count] = key;
        keyOffsets[count] = keyOffset;
        keyLengths[count] = keyLength;
        values[count] = value;
        valueOffsets[count] = valueOffset;
        valueLengths[count] = valueLength;
        count++;
        return this;
    }

    public int count()
    {
        return count;
    }

    /** The ranges again at send: a buffer re-wrapped since {@link #add} may no longer hold them. */
    void check()
    {
        for (int i = 0; i < count; i++)
        {
            checkHeader(keys[i], keyOffsets[i], keyLengths[i], values[i], valueOffsets[i], valueLengths[i]);
        }
    }

    private static void checkHeader(
        final DirectBuffer key, final int keyOffset, final int keyLength,
        final DirectBuffer value, final int valueOffset, final int valueLength)
    {
        if (keyLength < 0)
        {
            throw new NullPointerException("Null header keys are not permitted");
        }
        RecordChecks.field("header key", key, keyOffset, keyLength);
        RecordChecks.field("header value", value, valueOffset, valueLength);
    }

    /** The bytes the headers take in a record at most (each length a varint of at most five bytes). */
    int maxEncodedLength()
    {
        int n = 5;
        for (int i = 0; i < count; i++)
        {
            n += 10 + keyLengths[i] + Math.max(valueLengths[i], 0);
        }
        return n;
    }

    /** The bytes the headers take in a record: their count and each key and value with its varint length (-1 for null). */
    int encodedLength()
    {
        int n = Varints.varintSize(count);
        for (int i = 0; i < count; i++)
        {
            n += lengthPrefixed(keyLengths[i]) + lengthPrefixed(valueLengths[i]);
        }
        return n;
    }

    /** A field of {@code length} bytes with its varint length before it; a null one (-1) is its one-byte length. */
    static int lengthPrefixed(final int length)
    {
        return length < 0 ? 1 : Varints.varintSize(length) + length;
    }

    void appendTo(final io.ferrite.wire.record.RecordBatchBuilder builder)
    {
        for (int i = 0; i < count; i++)
        {
            builder.header(keys[i], keyOffsets[i], keyLengths[i], values[i], valueOffsets[i], valueLengths[i]);
        }
    }

    private void grow()
    {
        final int n = keys.length * 2;
        keys = java.util.Arrays.copyOf(keys, n);
        keyOffsets = java.util.Arrays.copyOf(keyOffsets, n);
        keyLengths = java.util.Arrays.copyOf(keyLengths, n);
        values = java.util.Arrays.copyOf(values, n);
        valueOffsets = java.util.Arrays.copyOf(valueOffsets, n);
        valueLengths = java.util.Arrays.copyOf(valueLengths, n);
    }
}
