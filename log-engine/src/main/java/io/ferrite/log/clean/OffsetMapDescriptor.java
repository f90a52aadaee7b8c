package io.ferrite.log.clean;

/**
 * Layout of one slot of an {@link OffsetMap}, Kafka's {@code SkimpyOffsetMap} slot: the key's 128-bit hash and the
 * offset of the key's latest record, big-endian, slots packed end to end in one off-heap block.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |        MurmurHash3 x64 128 of the key (16 bytes)              |  0
 *  |                                                               |
 *  |                                                               |
 *  |                                                               |
 *  +---------------------------------------------------------------+
 *  |                  Latest offset (int64)                        | 16
 *  |                                                               |
 *  +---------------------------------------------------------------+
 * </pre>
 * A slot of 24 zero bytes is empty (so is, as in Kafka, a key whose hash is all zeros put at offset 0: the
 * chance is 2^-128). The block is never resized: a map of {@code memory} bytes has {@code memory / 24} slots.
 */
public final class OffsetMapDescriptor
{
    public static final int HASH_OFFSET = 0;
    /** 128 bits, as Kafka's MD5; {@link KeyHash}'s halves, each big-endian. */
    public static final int HASH_LENGTH = 16;
    public static final int OFFSET_OFFSET = HASH_OFFSET + HASH_LENGTH;
    public static final int SLOT_LENGTH = OFFSET_OFFSET + 8;

    private OffsetMapDescriptor()
    {
    }
}
