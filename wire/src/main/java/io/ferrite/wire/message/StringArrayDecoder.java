package io.ferrite.wire.message;

import org.agrona.DirectBuffer;

import java.util.NoSuchElementException;

/**
 * Iterates an array of strings (or of bytes) that its parent decoder has already checked:
 * {@code for (var a = d.topicNames(); a.hasNext(); ) { a.next(); a.value(); }}.
 */
public final class StringArrayDecoder implements ArrayDecoder<StringArrayDecoder>
{
    private final boolean bytes;
    private DirectBuffer buffer;
    private boolean compact;
    private int count;
    private int index;
    private int nextAt;
    private int limit;
    private int valueAt;
    private int valueLength;

    public StringArrayDecoder(final boolean bytes)
    {
        this.bytes = bytes;
    }

    void reset(final DirectBuffer buffer, final int firstAt, final int count, final int limit, final boolean compact)
    {
        this.buffer = buffer;
        this.nextAt = firstAt;
        this.count = count;
        this.limit = limit;
        this.compact = compact;
        this.index = 0;
    }

    @Override
    public int elementCount()
    {
        return count;
    }

    @Override
    public boolean isNullArray()
    {
        return count < 0;
    }

    @Override
    public boolean hasNext()
    {
        return index < count;
    }

    @Override
    public StringArrayDecoder next()
    {
        if (index >= count)
        {
            throw new NoSuchElementException();
        }
        final long h = bytes ?
            Decoding.bytes(buffer, nextAt, limit, compact, false, "element") :
            Decoding.string(buffer, nextAt, limit, compact, false, "element");
        valueAt = Decoding.at(h);
        valueLength = Decoding.length(h);
        nextAt = valueAt + valueLength;
        index++;
        return this;
    }

    /** Offset of the current element's bytes in {@link #buffer()}. */
    public int valueOffset()
    {
        return valueAt;
    }

    public int valueLength()
    {
        return valueLength;
    }

    public DirectBuffer buffer()
    {
        return buffer;
    }

    /** The current element as a String (allocates). */
    public String value()
    {
        return buffer.getStringWithoutLengthUtf8(valueAt, valueLength);
    }

    /** The current element's bytes (allocates). */
    public byte[] valueBytes()
    {
        final byte[] b = new byte[valueLength];
        buffer.getBytes(valueAt, b);
        return b;
    }
}
