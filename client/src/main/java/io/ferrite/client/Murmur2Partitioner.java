package io.ferrite.client;

import org.agrona.DirectBuffer;

/**
 * Kafka's default key placement: {@code (murmur2(key) & 0x7fffffff) % partitions}, the 32-bit
 * MurmurHash2 with Kafka's seed ({@code 0x9747b28c}), over the key's bytes in place. A keyed record
 * therefore lands on the partition kafka-clients would choose for the same key and partition count.
 */
public final class Murmur2Partitioner
{
    private static final int SEED = 0x9747b28c;
    private static final int M = 0x5bd1e995;
    private static final int R = 24;

    private Murmur2Partitioner()
    {
    }

    public static int partition(final DirectBuffer key, final int offset, final int length, final int partitions)
    {
        return (murmur2(key, offset, length) & 0x7fffffff) % partitions;
    }

    /** MurmurHash2 of {@code [offset, offset + length)}, four bytes at a time little-endian, the tail mixed last. */
    public static int murmur2(final DirectBuffer data, final int offset, final int length)
    {
        int h = SEED ^ length;
        final int blocks = length >>> 2;
        for (int i = 0; i < blocks; i++)
        {
            final int at = offset + (i << 2);
            int k = (data.getByte(at) & 0xff) | ((data.getByte(at + 1) & 0xff) << 8) |
                ((data.getByte(at + 2) & 0xff) << 16) | ((data.getByte(at + 3) & 0xff) << 24);
            k *= M;
            k ^= k >>> R;
            k *= M;
            h *= M;
            h ^= k;
        }
        final int tail = offset + (blocks << 2);
        switch (length & 3)
        {
            case 3:
                h ^= (data.getByte(tail + 2) & 0xff) << 16;
                // fall through
            case 2:
                h ^= (data.getByte(tail + 1) & 0xff) << 8;
                // fall through
            case 1:
                h ^= data.getByte(tail) & 0xff;
                h *= M;
                break;
            default:
                break;
        }
        h ^= h >>> 13;
        h *= M;
        h ^= h >>> 15;
        return h;
    }
}
