package io.ferrite.wire;

import io.ferrite.wire.message.Decoding;
import io.ferrite.wire.testing.Property;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.utils.internals.ByteUtils;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Varints and UTF-8 strings against kafka-clients' ByteUtils and the JDK, over random values. */
class PrimitivesPropertyTest
{
    @Test
    void unsignedVarintsMatchKafkaBothWays()
    {
        Property.check("unsigned varint", 5000, r ->
        {
            final int value = Property.anyInt(r);
            final ByteBuffer kafka = ByteBuffer.allocate(5);
            ByteUtils.writeUnsignedVarint(value, kafka);
            final ExpandableArrayBuffer ours = new ExpandableArrayBuffer(8);
            final int size = Varints.putUnsignedVarint(ours, 0, value);
            assertEquals(kafka.position(), size);
            assertEquals(ByteUtils.sizeOfUnsignedVarint(value), Varints.unsignedVarintSize(value));
            assertArrayEquals(Arrays.copyOf(kafka.array(), size), Arrays.copyOf(ours.byteArray(), size));
            final long read = Varints.readUnsignedVarint(new UnsafeBuffer(kafka.array()), 0, size, "v");
            assertEquals(value, Varints.value(read));
            assertEquals(size, Varints.size(read));
        });
    }

    @Test
    void signedVarintsAndVarlongsMatchKafkaBothWays()
    {
        Property.check("varint and varlong", 5000, r ->
        {
            final int i = Property.anyInt(r);
            final long l = Property.anyLong(r);
            final ByteBuffer kafka = ByteBuffer.allocate(15);
            ByteUtils.writeVarint(i, kafka);
            ByteUtils.writeVarlong(l, kafka);
            final ExpandableArrayBuffer ours = new ExpandableArrayBuffer(16);
            int p = Varints.putVarint(ours, 0, i);
            assertEquals(ByteUtils.sizeOfVarint(i), p);
            assertEquals(ByteUtils.sizeOfVarint(i), Varints.varintSize(i));
            p += Varints.putVarlong(ours, p, l);
            assertEquals(ByteUtils.sizeOfVarlong(l), Varints.varlongSize(l));
            assertEquals(kafka.position(), p);
            assertArrayEquals(Arrays.copyOf(kafka.array(), p), Arrays.copyOf(ours.byteArray(), p));

            final UnsafeBuffer in = new UnsafeBuffer(kafka.array());
            final long v = Varints.readVarint(in, 0, p, "i");
            assertEquals(i, Varints.value(v));
            final int at = Varints.size(v);
            assertEquals(p - at, Varints.varlongSize(in, at, p, "l"));
            assertEquals(l, Varints.readVarlongUnchecked(in, at));
        });
    }

    @Test
    void truncatedOrOverlongVarintsFailTyped()
    {
        Property.check("bad varints", 2000, r ->
        {
            final int value = Property.anyInt(r) | 0x80; // at least two bytes
            final ExpandableArrayBuffer b = new ExpandableArrayBuffer(8);
            final int size = Varints.putUnsignedVarint(b, 0, value);
            final int cut = r.nextInt(size);
            assertThrows(ProtocolException.class, () -> Varints.readUnsignedVarint(b, 0, cut, "v"));
        });
        final UnsafeBuffer six = new UnsafeBuffer(new byte[] {-1, -1, -1, -1, -1, 1});
        assertEquals("v", assertThrows(ProtocolException.class, () -> Varints.readUnsignedVarint(six, 0, 6, "v")).field());
        final UnsafeBuffer eleven = new UnsafeBuffer(new byte[] {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 1});
        assertThrows(ProtocolException.class, () -> Varints.varlongSize(eleven, 0, 11, "l"));
    }

    @Test
    void utf8MatchesTheJdk()
    {
        Property.check("utf8", 5000, r ->
        {
            final String s = Property.string(r, 40);
            final byte[] jdk = s.getBytes(StandardCharsets.UTF_8);
            assertEquals(jdk.length, Utf8.encodedLength(s));
            final ExpandableArrayBuffer b = new ExpandableArrayBuffer(8);
            assertEquals(jdk.length, Utf8.encode(s, b, 0));
            assertArrayEquals(jdk, Arrays.copyOf(b.byteArray(), jdk.length));
        });
    }

    @Test
    void protocolStringsRoundTripAndFailTypedWhenCut()
    {
        Property.check("protocol strings", 3000, r ->
        {
            final boolean compact = r.nextBoolean();
            final String s = r.nextInt(8) == 0 ? null : Property.string(r, 30);
            final byte[] utf8 = s == null ? null : s.getBytes(StandardCharsets.UTF_8);
            final ByteBuffer kafka = ByteBuffer.allocate(256);
            if (compact)
            {
                ByteUtils.writeUnsignedVarint(utf8 == null ? 0 : utf8.length + 1, kafka);
            }
            else
            {
                kafka.putShort((short)(utf8 == null ? -1 : utf8.length));
            }
            if (utf8 != null)
            {
                kafka.put(utf8);
            }
            final int size = kafka.position();
            final UnsafeBuffer in = new UnsafeBuffer(kafka.array());
            final long h = Decoding.string(in, 0, size, compact, true, "S");
            assertEquals(utf8 == null ? -1 : utf8.length, Decoding.length(h));
            if (utf8 != null)
            {
                assertEquals(s.replace('\uD800', '?'), in.getStringWithoutLengthUtf8(Decoding.at(h), Decoding.length(h)));
            }
            if (size > 0)
            {
                final int cut = r.nextInt(size);
                if (utf8 != null || cut < size)
                {
                    try
                    {
                        final long c = Decoding.string(in, 0, cut, compact, true, "S");
                        // a cut can leave a valid shorter value only when nothing was cut from it
                        assertEquals(size, Decoding.at(c) + Math.max(0, Decoding.length(c)));
                    }
                    catch (final ProtocolException expected)
                    {
                        assertEquals("S", expected.field());
                    }
                }
            }
        });
    }
}
