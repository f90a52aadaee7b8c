package io.ferrite.wire;

import org.agrona.MutableDirectBuffer;

/**
 * UTF-8 without allocation, byte-for-byte what {@code String.getBytes(UTF_8)} produces (which is
 * what Kafka sends): a surrogate pair becomes four bytes, a lone surrogate becomes {@code '?'}.
 */
public final class Utf8
{
    private Utf8()
    {
    }

    public static int encodedLength(final CharSequence s)
    {
        final int n = s.length();
        int length = n;
        for (int i = 0; i < n; i++)
        {
            final char c = s.charAt(i);
            if (c < 0x80)
            {
                continue;
            }
            if (c < 0x800)
            {
                length += 1;
            }
            else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1)))
            {
                length += 2; // 4 bytes for 2 chars
                i++;
            }
            else if (Character.isSurrogate(c))
            {
                // a lone surrogate is replaced by '?': one byte, already counted
                continue;
            }
            else
            {
                length += 2;
            }
        }
        return length;
    }

    /** Encodes {@code s} at {@code offset}; returns the number of bytes written. */
    public static int encode(final CharSequence s, final MutableDirectBuffer buffer, final int offset)
    {
        final int n = s.length();
        int p = offset;
        for (int i = 0; i < n; i++)
        {
            final char c = s.charAt(i);
            if (c < 0x80)
            {
                buffer.putByte(p++, (byte)c);
            }
            else if (c < 0x800)
            {
                buffer.putByte(p++, (byte)(0xC0 | (c >> 6)));
                buffer.putByte(p++, (byte)(0x80 | (c & 0x3F)));
            }
            else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1)))
            {
                final int cp = Character.toCodePoint(c, s.charAt(++i));
                buffer.putByte(p++, (byte)(0xF0 | (cp >> 18)));
                buffer.putByte(p++, (byte)(0x80 | ((cp >> 12) & 0x3F)));
                buffer.putByte(p++, (byte)(0x80 | ((cp >> 6) & 0x3F)));
                buffer.putByte(p++, (byte)(0x80 | (cp & 0x3F)));
            }
            else if (Character.isSurrogate(c))
            {
                buffer.putByte(p++, (byte)'?');
            }
            else
            {
                buffer.putByte(p++, (byte)(0xE0 | (c >> 12)));
                buffer.putByte(p++, (byte)(0x80 | ((c >> 6) & 0x3F)));
                buffer.putByte(p++, (byte)(0x80 | (c & 0x3F)));
            }
        }
        return p - offset;
    }
}
