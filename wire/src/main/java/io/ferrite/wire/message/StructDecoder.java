package io.ferrite.wire.message;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.Varints;
import org.agrona.DirectBuffer;

import java.util.NoSuchElementException;

/**
 * Base of the generated decoders: a flyweight over one struct of a Kafka message in a buffer.
 *
 * <p>{@link #wrap} walks the struct once, checking every length against the limit and recording
 * where each field starts; the accessors then read in place. Wrapping a top-level message walks
 * and checks the whole message, so a handler never acts on half of a malformed request. Nested
 * structs are reached through one reusable decoder per struct field, which doubles as an iterator
 * over the elements of an array: {@code for (var t = r.topics(); t.hasNext(); ) { t.next(); ... }}.
 * Reusing it is the flyweight contract: a nested decoder is valid until its parent moves on. Each
 * generated nested decoder is an {@link ArrayDecoder} of itself, for walks shared between APIs.
 *
 * <p>Fields absent in the wrapped version, and tagged fields not sent, read as their defaults.
 * Not thread-safe; nothing here allocates except the accessors that return a {@code String} or
 * {@code byte[]}.
 */
public abstract class StructDecoder
{
    protected DirectBuffer buffer;
    protected short version;
    protected int offset;
    protected int end;
    protected int unknownTaggedFields;

    private DirectBuffer elementsBuffer;
    private short elementsVersion;
    private int elementCount;
    private int elementIndex;
    private int nextElementAt;
    private int elementsLimit;

    /**
     * Walks and checks the struct at {@code offset}, reading nothing at or past {@code limit}.
     *
     * @return the offset just after the struct
     * @throws ProtocolException naming the first field that does not fit
     */
    public abstract int wrap(DirectBuffer buffer, int offset, int limit, short version);

    /** Makes every field read as its default, for a struct the message does not carry. */
    protected abstract void wrapDefaults(short version);

    protected final void begin(final DirectBuffer buffer, final int offset, final short version)
    {
        this.buffer = buffer;
        this.offset = offset;
        this.version = version;
        this.unknownTaggedFields = 0;
    }

    protected final int finish(final int end)
    {
        this.end = end;
        return end;
    }

    public final DirectBuffer buffer()
    {
        return buffer;
    }

    /** The version this struct was wrapped with. */
    public final short messageVersion()
    {
        return version;
    }

    /** Where the struct starts in {@link #buffer()}. */
    public final int encodedOffset()
    {
        return offset;
    }

    /** The number of bytes the struct occupies. */
    public final int encodedLength()
    {
        return end - offset;
    }

    /** Tagged fields this decoder does not know (Kafka keeps them; so may a caller, by offset). */
    public final int unknownTaggedFields()
    {
        return unknownTaggedFields;
    }

    // ---- iteration over the elements of an array field ----

    protected final void elements(
        final DirectBuffer buffer, final int firstAt, final int count, final int limit, final short version)
    {
        this.elementsBuffer = buffer;
        this.elementsVersion = version;
        this.elementCount = count;
        this.elementIndex = 0;
        this.nextElementAt = firstAt;
        this.elementsLimit = limit;
    }

    /** Elements in the array this decoder iterates; -1 when the array is null. */
    public final int elementCount()
    {
        return elementCount;
    }

    public final boolean isNullArray()
    {
        return elementCount < 0;
    }

    public final boolean hasNext()
    {
        return elementIndex < elementCount;
    }

    /** Moves to the next element; the generated subclasses return themselves from {@code next()}. */
    protected final void nextElement()
    {
        if (elementIndex >= elementCount)
        {
            throw new NoSuchElementException();
        }
        nextElementAt = wrap(elementsBuffer, nextElementAt, elementsLimit, elementsVersion);
        elementIndex++;
    }

    /** Skips a tagged-field section of which this struct knows no field. */
    protected final int skipTaggedFields(final DirectBuffer buffer, final int offset, final int limit)
    {
        int p = offset;
        final long n = Decoding.count(buffer, p, limit, "TaggedFields");
        p += Varints.size(n);
        for (int i = 0, count = Varints.value(n); i < count; i++)
        {
            final long tag = Decoding.count(buffer, p, limit, "TaggedFields");
            p += Varints.size(tag);
            final long size = Decoding.count(buffer, p, limit, "TaggedFields");
            p = Decoding.require(p + Varints.size(size), Varints.value(size), limit, "TaggedFields");
            unknownTaggedFields++;
        }
        return p;
    }
}
