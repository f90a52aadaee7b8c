package io.ferrite.log.clean;

import org.agrona.DirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The 128-bit hash of a key in the {@link OffsetMap}: MurmurHash3 x64 128 (Austin Appleby's public-domain function,
 * written here from its description, with the seed {@link #SEED}), read in place from a {@link DirectBuffer} 16 bytes at a time,
 * allocating nothing. {@link #high()} and {@link #low()} are its two 64-bit halves ({@code h1}, {@code h2}); the same
 * bytes as Guava's {@code Hashing.murmur3_128(SEED)} give, which reads them little-endian.
 *
 * <p><b>Why not MD5, as Kafka's {@code SkimpyOffsetMap}.</b> The map keeps only a key's hash, so two keys with one
 * hash share a slot and the older key's latest value would be removed by a clean. What makes that safe is that a
 * collision among the keys of one clean is unlikely, not that it is hard to make:
 * <ul>
 *   <li>For keys not chosen to collide, a 128-bit function whose outputs are indistinguishable from random gives any
 *       two distinct keys one chance in 2^128 of one hash, as MD5 does: with the 5.6 million keys a 128 MiB map holds,
 *       about 2^-84 per clean. MurmurHash3 x64 128 passes SMHasher's avalanche, differential and collision tests; it
 *       is not a cryptographic function, but nothing here asks for one.</li>
 *   <li>For keys chosen to collide (a producer that wants a clean to remove another key's value), MD5 gives no
 *       protection either: MD5 collisions are made in seconds on a laptop (Wang et al. 2004, chosen-prefix collisions
 *       since 2007), so Kafka's map is open to the same attack. A producer that may write both keys of a topic can in
 *       any case delete the other key's value with a tombstone, which is the authority the attack would need.</li>
 * </ul>
 * What the change costs: a key lands in another slot than in Kafka's map of the same size, so the map's bytes differ
 * from Kafka's; which records a clean keeps, hence the cleaned log's bytes, do not (both maps answer every key's
 * latest offset; which slot holds it is not observable). What it buys: MD5 through {@code MessageDigest}, run twice
 * per record kept or dropped (once to build the map, once to filter), was a large part of a clean's CPU: 19% of the
 * cleaner thread's in one profiled broker clean (a 128 MiB map, whose cache and TLB misses and page faults cost more),
 * 40-55% in the in-memory {@code CleanBenchmark} (jmh-results/profiles.md, "Issue 13: the key hash and the map's
 * pages").
 */
final class KeyHash
{
    /**
     * Not 0: with seed 0 the empty key hashes to 128 zero bits, and an empty key at offset 0 would then be a slot of
     * 24 zero bytes, which the map reads as empty (MD5 of the empty key is not zero).
     */
    static final int SEED = 0x5eed_f00d;
    private static final long C1 = 0x87c37b91114253d5L;
    private static final long C2 = 0x4cf5ad432745937fL;

    private long high;
    private long low;

    /** The first half ({@code h1}): the map's first 8 hash bytes, big-endian. */
    long high()
    {
        return high;
    }

    /** The second half ({@code h2}): the map's last 8 hash bytes, big-endian. */
    long low()
    {
        return low;
    }

    /** Hashes {@code [offset, offset + length)} of {@code buffer} into {@link #high()} and {@link #low()}. */
    void hash(final DirectBuffer buffer, final int offset, final int length)
    {
        long h1 = SEED & 0xFFFF_FFFFL;
        long h2 = h1;
        final int blocksEnd = offset + (length & ~15);
        for (int i = offset; i < blocksEnd; i += 16)
        {
            h1 ^= mixK1(buffer.getLong(i, LITTLE_ENDIAN));
            h1 = Long.rotateLeft(h1, 27) + h2;
            h1 = h1 * 5 + 0x52dce729;
            h2 ^= mixK2(buffer.getLong(i + 8, LITTLE_ENDIAN));
            h2 = Long.rotateLeft(h2, 31) + h1;
            h2 = h2 * 5 + 0x38495ab5;
        }
        final int tail = length & 15;
        if (tail > 8)
        {
            h2 ^= mixK2(partialLong(buffer, blocksEnd + 8, tail - 8));
        }
        if (tail >= 8)
        {
            h1 ^= mixK1(buffer.getLong(blocksEnd, LITTLE_ENDIAN));
        }
        else if (tail > 0)
        {
            h1 ^= mixK1(partialLong(buffer, blocksEnd, tail));
        }
        h1 ^= length;
        h2 ^= length;
        h1 += h2;
        h2 += h1;
        h1 = fmix64(h1);
        h2 = fmix64(h2);
        h1 += h2;
        h2 += h1;
        high = h1;
        low = h2;
    }

    /** {@code count} (1..7) bytes at {@code offset} as a little-endian long. */
    private static long partialLong(final DirectBuffer buffer, final int offset, final int count)
    {
        long k = 0;
        for (int j = count - 1; j >= 0; j--)
        {
            k = (k << 8) | (buffer.getByte(offset + j) & 0xFFL);
        }
        return k;
    }

    private static long mixK1(final long k)
    {
        return Long.rotateLeft(k * C1, 31) * C2;
    }

    private static long mixK2(final long k)
    {
        return Long.rotateLeft(k * C2, 33) * C1;
    }

    private static long fmix64(final long h)
    {
        long k = h;
        k ^= k >>> 33;
        k *= 0xff51afd7ed558ccdL;
        k ^= k >>> 33;
        k *= 0xc4ceb9fe1a85ec53L;
        k ^= k >>> 33;
        return k;
    }
}
