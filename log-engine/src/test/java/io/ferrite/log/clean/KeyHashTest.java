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
     * keys of 0-300 bytes; commons-codec 1.17.1's {@code MurmurHash3.hash128x64(key, 0, length, KeyHash.SEED)} gives
     * the same values). The prefixes of 0-32 bytes of one sentence cover every tail length 0-15 (the boundary at 8
     * between the tail's two halves among them) after no whole 16-byte block and after one, and 32 bytes is two whole
     * blocks and no tail; the whole sentence is 43 bytes.
     */
    @Test
    void isMurmur3X64With128BitsAsGuavaComputesIt()
    {
        assertHash("", 0x9f8d17b56ecfec68L, 0x9ffa34a82124f394L);
        assertHash("hell", 0x34b55810be8f6fd8L, 0xfc4acf8f49b1d439L);
        assertHash("hello", 0xbf215b49f26c46e7L, 0x19b88d6034eaa7d2L);
        assertHash("key-123", 0x139f3f92dcd7b314L, 0x7b9138357ce14e0dL);
        assertHash("0123456789abcdef0", 0xa30df768b521383aL, 0x3287fb707d9660e4L);
        assertHash("The quick brown fox jumps over the lazy dog", 0x2293bfe8b9c125d0L, 0xd5aa78fa6bf1a318L);        assertHash("T", 0xb143496dee4853d2L, 0xa0bc2aee074064adL);
        assertHash("Th", 0x29cc26a8c9c4c1dbL, 0x50d2124f5a03d0e0L);
        assertHash("The", 0xaa0f65f332fb6c19L, 0x959f6b60df38811eL);
        assertHash("The ", 0x1f09cabbb6fadb7aL, 0x7e0a5d4f192907a8L);
        assertHash("The q", 0xa229543981a794feL, 0x77bda660df036e01L);
        assertHash("The qu", 0x9833667737001c63L, 0x4168059d2f365dc4L);
        assertHash("The qui", 0xe722e6a06d96cc32L, 0x64329048d8acbcc6L);
        assertHash("The quic", 0xd423296103bd9680L, 0xe28284701031b4a2L);
        assertHash("The quick", 0xea63d630fce404a1L, 0x8c848f3631f63408L);
        assertHash("The quick ", 0x87070a1dac65871eL, 0x192b527257b14895L);
        assertHash("The quick b", 0x3e749c6d6fa75e74L, 0xb47acbc8d1944dfeL);
        assertHash("The quick br", 0x85441db9d0ffa0c5L, 0xb08ac21cc59af089L);
        assertHash("The quick bro", 0xbf1e2850827a1804L, 0x100992d56999cd72L);
        assertHash("The quick brow", 0x0ddd74346a025c2cL, 0x450940ad791f3601L);
        assertHash("The quick brown", 0xd5a5867c70940fabL, 0xf07a22ad58274418L);
        assertHash("The quick brown ", 0xae8b833cf93db167L, 0x129717eb60e0d250L);
        assertHash("The quick brown f", 0xd9beccb511819cffL, 0xa097cbc33a53a69cL);
        assertHash("The quick brown fo", 0xb61396a21277c1f4L, 0xcfe2a346e0b4459cL);
        assertHash("The quick brown fox", 0x93d2112680876668L, 0x62a1fd0df41bf3faL);
        assertHash("The quick brown fox ", 0x97a63f3337f00debL, 0xaa43097c81749a63L);
        assertHash("The quick brown fox j", 0xf8fd3bb66c80dc81L, 0xe5172354801b7283L);
        assertHash("The quick brown fox ju", 0xcb480b6bbe999f18L, 0x8274cbe2d26982aeL);
        assertHash("The quick brown fox jum", 0xa5d7dd4138b6cf8fL, 0xd5da23a2576af7a0L);
        assertHash("The quick brown fox jump", 0xc55b01f914534279L, 0x58991807ae8ebf95L);
        assertHash("The quick brown fox jumps", 0xc15475bb1a2c0124L, 0x15d57f92e40bbb94L);
        assertHash("The quick brown fox jumps ", 0xd42825b1eda51732L, 0x659501c692a43780L);
        assertHash("The quick brown fox jumps o", 0x713e38614c9bb47eL, 0x45356bff789f16b8L);
        assertHash("The quick brown fox jumps ov", 0xb9c9267c726723caL, 0xfd4223e45c41d840L);
        assertHash("The quick brown fox jumps ove", 0x5e889bca08b42cd2L, 0xb52494d65fbea019L);
        assertHash("The quick brown fox jumps over", 0xf51ef706c23f2287L, 0xbf7aba0b4856222aL);
        assertHash("The quick brown fox jumps over ", 0x06aa177a5e581dbfL, 0x51b1eafa5cff7401L);
        assertHash("The quick brown fox jumps over t", 0x3adf32cb85ca7672L, 0xd60b4757c81bc668L);
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
