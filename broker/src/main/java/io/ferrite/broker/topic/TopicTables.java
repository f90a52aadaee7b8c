package io.ferrite.broker.topic;

import org.agrona.DirectBuffer;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Immutable lookup tables over one set of topics, published whole by {@link TopicRegistry} on every
 * change: open-addressing arrays by name (FNV-1a over the UTF-8 bytes, so a lookup straight from a
 * request's bytes allocates nothing) and by topic id.
 */
final class TopicTables
{
    static final TopicTables EMPTY = new TopicTables(List.of());

    final List<Topic> list;
    private final Topic[] names;
    private final Topic[] ids;
    private final int mask;

    TopicTables(final List<Topic> topics)
    {
        this.list = Collections.unmodifiableList(new ArrayList<>(topics));
        int size = 16;
        while (size < topics.size() * 3)
        {
            size <<= 1;
        }
        mask = size - 1;
        names = new Topic[size];
        ids = new Topic[size];
        for (final Topic t : topics)
        {
            int i = hash(t.nameBytes) & mask;
            while (names[i] != null)
            {
                i = (i + 1) & mask;
            }
            names[i] = t;
            int j = idHash(t.idMostSignificantBits, t.idLeastSignificantBits) & mask;
            while (ids[j] != null)
            {
                j = (j + 1) & mask;
            }
            ids[j] = t;
        }
    }

    Topic byName(final DirectBuffer buffer, final int offset, final int length)
    {
        int h = 0x811C9DC5;
        for (int i = 0; i < length; i++)
        {
            h = (h ^ (buffer.getByte(offset + i) & 0xFF)) * 0x01000193;
        }
        for (int i = h & mask; ; i = (i + 1) & mask)
        {
            final Topic t = names[i];
            if (t == null)
            {
                return null;
            }
            if (equal(t.nameBytes, buffer, offset, length))
            {
                return t;
            }
        }
    }

    Topic byNameString(final String name)
    {
        final byte[] bytes = name.getBytes(StandardCharsets.UTF_8);
        return byName(new org.agrona.concurrent.UnsafeBuffer(bytes), 0, bytes.length);
    }

    Topic byId(final long msb, final long lsb)
    {
        for (int i = idHash(msb, lsb) & mask; ; i = (i + 1) & mask)
        {
            final Topic t = ids[i];
            if (t == null)
            {
                return null;
            }
            if (t.idMostSignificantBits == msb && t.idLeastSignificantBits == lsb)
            {
                return t;
            }
        }
    }

    private static boolean equal(final byte[] name, final DirectBuffer buffer, final int offset, final int length)
    {
        if (name.length != length)
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (name[i] != buffer.getByte(offset + i))
            {
                return false;
            }
        }
        return true;
    }

    /** FNV-1a: the same function {@link #byName} runs over a buffer. */
    private static int hash(final byte[] bytes)
    {
        int h = 0x811C9DC5;
        for (final byte b : bytes)
        {
            h = (h ^ (b & 0xFF)) * 0x01000193;
        }
        return h;
    }

    private static int idHash(final long msb, final long lsb)
    {
        final long h = (msb * 0x9E3779B97F4A7C15L) ^ lsb;
        return (int)(h ^ (h >>> 32));
    }
}
