package io.ferrite.log.clean;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class KeyHashTest
{
    /**
     * MurmurHash3 x64 128 with {@link KeyHash#SEED}: the values are Guava 33.4.8's
     * {@code Hashing.murmur3_128(KeyHash.SEED).hashBytes(key).asBytes()} read as two little-endian longs (computed
     * once outside this build, which does not depend on Guava; the same program matched this class on 20 000 random
     * keys of 0-300 bytes). The keys cover every tail length 0-15 and one and two whole 16-byte blocks.
     */
    @Test
    void isMurmur3X64With128BitsAsGuavaComputesIt()
    {
        assertHash("", 0x9f8d17b56ecfec68L, 0x9ffa34a82124f394L);
        assertHash("hell", 0x34b55810be8f6fd8L, 0xfc4acf8f49b1d439L);
        assertHash("hello", 0xbf215b49f26c46e7L, 0x19b88d6034eaa7d2L);
        assertHash("key-123", 0x139f3f92dcd7b314L, 0x7b9138357ce14e0dL);
        assertHash("0123456789abcdef0", 0xa30df768b521383aL, 0x3287fb707d9660e4L);
        assertHash("The quick brown fox jumps over the lazy dog", 0x2293bfe8b9c125d0L, 0xd5aa78fa6bf1a318L);
    }

    private static void assertHash(final String key, final long high, final long low)
    {
        final KeyHash hash = new KeyHash();
        hash.hash(new UnsafeBuffer(key.getBytes(StandardCharsets.US_ASCII)), 0, key.length());
        assertEquals(high, hash.high(), key);
        assertEquals(low, hash.low(), key);
    }

    /** A key's hash is the same wherever its bytes are: on the heap or off it, at any offset, whatever follows them. */
    @Test
    void dependsOnTheKeysBytesOnly()
    {
        final Random random = new Random(3);
        final KeyHash onHeap = new KeyHash();
        final KeyHash offHeap = new KeyHash();
        for (int length = 0; length < 70; length++)
        {
            final byte[] key = new byte[length];
            random.nextBytes(key);
            final int at = random.nextInt(16);
            final byte[] heap = new byte[at + length + 8];
            random.nextBytes(heap);
            System.arraycopy(key, 0, heap, at, length);
            final UnsafeBuffer direct = new UnsafeBuffer(ByteBuffer.allocateDirect(length + 3));
            direct.putBytes(3, key);
            onHeap.hash(new UnsafeBuffer(heap), at, length);
            offHeap.hash(direct, 3, length);
            assertEquals(onHeap.high(), offHeap.high(), "length " + length);
            assertEquals(onHeap.low(), offHeap.low(), "length " + length);
        }
    }

    /** Keys that differ in one bit, and keys that are prefixes of each other, all hash apart. */
    @Test
    void nearKeysHashApart()
    {
        final KeyHash hash = new KeyHash();
        final Set<String> seen = new HashSet<>();
        final byte[] key = new byte[40];
        for (int length = 0; length <= key.length; length++)
        {
            hash.hash(new UnsafeBuffer(key), 0, length);
            assertTrue(seen.add(hash.high() + ":" + hash.low()), "prefix of " + length);
        }
        for (int bit = 0; bit < key.length * 8; bit++)
        {
            key[bit / 8] ^= (byte)(1 << (bit % 8));
            hash.hash(new UnsafeBuffer(key), 0, key.length);
            assertTrue(seen.add(hash.high() + ":" + hash.low()), "bit " + bit);
            key[bit / 8] ^= (byte)(1 << (bit % 8));
        }
    }

    /**
     * The empty key (a record's key of 0 bytes, not a null key) at offset 0 is held: with seed 0 it would hash to 128
     * zero bits and fill its slot with 24 zero bytes, which the map reads as an empty slot.
     */
    @Test
    void theEmptyKeyAtOffsetZeroIsHeld()
    {
        try (OffsetMap map = new OffsetMap(24 * 64, 0.9))
        {
            final UnsafeBuffer empty = new UnsafeBuffer(new byte[0]);
            map.put(empty, 0, 0, 0);
            assertEquals(0, map.get(empty, 0, 0));
            map.put(empty, 0, 0, 3);
            assertEquals(1, map.size(), "the update found the key's slot");
            assertEquals(3, map.get(empty, 0, 0));
        }
    }
}
