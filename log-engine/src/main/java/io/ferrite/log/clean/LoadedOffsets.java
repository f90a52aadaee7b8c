package io.ferrite.log.clean;

import java.util.Arrays;

/**
 * What the {@link OffsetMap}'s load learned of each offset of the dirty range, kept for the filter of the same clean
 * so that it neither hashes a key the load hashed already nor probes the map for it, and skips the records of a batch
 * the load found wholly superseded: two bitsets indexed by {@code offset - firstDirtyOffset}.
 * <ul>
 *   <li><b>put</b>: the load put a key at this offset;</li>
 *   <li><b>superseded</b>: a later put of the same clean found this offset in the slot it took (the same key, or a
 *   key of the same hash): the map no longer answers it, so {@code offset >= map.get(key)} is false for it.</li>
 * </ul>
 * A put offset not superseded is what the map answers for its key ({@code offset >= map.get(key)} true). That holds
 * because the puts come in increasing offset order: a put that finds an offset in its slot is later than it. A load
 * whose offsets do not increase (a corrupt batch's offset deltas) switches this off for its clean
 * ({@link #answer} says {@link #UNKNOWN} for every offset), as does a record outside its batch's offsets
 * ({@link #switchOff}), and a {@link OffsetMap#clear()} until the next load starts; every offset past
 * {@link #MAX_OFFSETS} is unknown: the filter then hashes and probes as before, for the same answers.
 *
 * <p>Why bits and not the hashes: Kafka's cleaner (and this one until now) hashes each dirty key twice, once to
 * load and once to filter. Keeping the 16-byte hashes for the filter would still cost its probe of the map; what the
 * filter asks of the map for a loaded key is one bit, which the load learns for free (the put reads the slot's old
 * offset). Sizes: {@link #MAX_OFFSETS} of 2^23 offsets is 1 MiB per bitset at most (2 MiB in all), grown from
 * 16 KiB as cleans need it and kept for the next: about 1.7 GB of dirty log of 200-byte records (the side by side's
 * 210 bytes a record) per clean. One thread; allocates only when it grows.
 */
final class LoadedOffsets
{
    /** {@link #answer}: the load did not put this offset (or this clean cannot tell): ask the map. */
    static final int UNKNOWN = 0;
    /** {@link #answer}: put, and still its key's latest in the map. */
    static final int LATEST = 1;
    /** {@link #answer}: put, and replaced in the map by a later offset. */
    static final int SUPERSEDED = 2;

    /** The offsets after the first dirty one that a clean tracks: 2^23, 1 MiB per bitset. */
    static final int MAX_OFFSETS = 1 << 23;
    private static final int FIRST_WORDS = 1 << 10; // 65 536 offsets, 8 KiB per bitset

    private static final int PUT = 0;
    private static final int SUPERSEDED_BITS = 1;

    /** The two bitsets: {@link #PUT}, {@link #SUPERSEDED_BITS}. */
    private final long[][] bits = {new long[FIRST_WORDS], new long[FIRST_WORDS]};
    /** Words {@code [0, usedWords)} may hold set bits. */
    private int usedWords;
    private final OffsetMap map;
    /** The map's {@link OffsetMap#clears()} when this load began: its answers hold for that map only. */
    private long generation = -1;
    private long firstOffset;
    private long lastPut;
    private boolean valid;

    LoadedOffsets(final OffsetMap map)
    {
        this.map = map;
    }

    /**
     * Starts a load at {@code firstDirtyOffset} when the map was cleared since the last one began (a new clean),
     * forgetting that one's offsets; else does nothing.
     */
    void startIfCleared(final long firstDirtyOffset)
    {
        if (map.clears() != generation)
        {
            reset(firstDirtyOffset);
        }
    }

    private void reset(final long firstDirtyOffset)
    {
        generation = map.clears();
        for (final long[] bitset : bits)
        {
            Arrays.fill(bitset, 0, usedWords, 0L);
        }
        usedWords = 0;
        firstOffset = firstDirtyOffset;
        lastPut = firstDirtyOffset - 1;
        valid = true;
    }

    /**
     * The load put a key at {@code offset}, whose slot held {@code previous} ({@link OffsetMap#NO_OFFSET} for a new
     * key). An offset not after every offset put before switches this clean's answers off.
     */
    void onPut(final long offset, final long previous)
    {
        if (offset <= lastPut)
        {
            valid = false;
        }
        lastPut = offset;
        if (!valid)
        {
            return;
        }
        final int index = indexOf(offset);
        if (index >= 0)
        {
            set(PUT, index);
        }
        if (previous != OffsetMap.NO_OFFSET)
        {
            final int before = indexOf(previous);
            if (before >= 0)
            {
                set(SUPERSEDED_BITS, before);
            }
        }
    }

    /**
     * The load read a record outside its batch's offsets (a corrupt batch's offset deltas): this clean's answers go
     * off, as for offsets that do not increase. {@link #wholeBatchSuperseded} relies on every record read lying within
     * its batch.
     */
    void switchOff()
    {
        valid = false;
    }

    /** {@link #LATEST}, {@link #SUPERSEDED} or {@link #UNKNOWN} for the record at {@code offset}. */
    int answer(final long offset)
    {
        final int index = indexOf(offset);
        if (!answers() || index < 0 || !isSet(PUT, index))
        {
            return UNKNOWN;
        }
        return isSet(SUPERSEDED_BITS, index) ? SUPERSEDED : LATEST;
    }

    /**
     * Whether every record of the data batch {@code [baseOffset, lastOffset]} holding {@code recordCount} records was
     * put by the load and superseded since: the map answers none of its keys with its offset. The superseded bits of
     * its offsets are enough, with no bit per batch: while the answers are on, every record the load read lay within
     * its own batch's offsets ({@link #switchOff}) and no two puts had one offset ({@link #onPut}). A keyed record of
     * this batch at or past the first dirty offset therefore sits at one of the batch's offsets and was put there
     * (else the map filled first, and its offset is past the map's latest, which the caller checks), and it is the
     * only put at that offset: the offset's superseded bit is that record's, the map's answer for it. A keyless
     * record goes anyway. The record count equal to the offsets' is kept as a cheap first test (a cleaned batch with
     * gaps never qualifies).
     */
    boolean wholeBatchSuperseded(final long baseOffset, final long lastOffset, final int recordCount)
    {
        final int first = indexOf(baseOffset);
        final int last = indexOf(lastOffset);
        if (!answers() || first < 0 || last < 0 || lastOffset - baseOffset + 1 != recordCount)
        {
            return false;
        }
        for (int word = first >>> 6; word <= last >>> 6; word++)
        {
            long mask = -1L;
            if (word == first >>> 6)
            {
                mask &= -1L << (first & 63);
            }
            if (word == last >>> 6)
            {
                mask &= -1L >>> (63 - (last & 63));
            }
            if ((bits[SUPERSEDED_BITS][word] & mask) != mask)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * How many offsets of {@code [from, to)} the load put and a later put superseded: records the filter drops, as no
     * longer their key's latest (0 when the answers are off, or for offsets this clean does not track). A lower bound
     * of what a clean removes there, for the grouping ({@link SegmentGroups}).
     */
    long supersededIn(final long from, final long to)
    {
        final long lo = Math.max(from, firstOffset);
        final long hi = Math.min(to, firstOffset + MAX_OFFSETS);
        if (!answers() || lo >= hi)
        {
            return 0;
        }
        final int first = (int)(lo - firstOffset);
        final int last = (int)(hi - firstOffset) - 1;
        final long[] words = bits[SUPERSEDED_BITS];
        long superseded = 0;
        for (int word = first >>> 6; word <= last >>> 6 && word < words.length; word++)
        {
            long mask = -1L;
            if (word == first >>> 6)
            {
                mask &= -1L << (first & 63);
            }
            if (word == last >>> 6)
            {
                mask &= -1L >>> (63 - (last & 63));
            }
            superseded += Long.bitCount(words[word] & mask);
        }
        return superseded;
    }

    /** Whether the bits are the map's: its puts came in increasing offsets, and it was not cleared since. */
    private boolean answers()
    {
        return valid && map.clears() == generation;
    }

    /** The bit index of {@code offset}, or -1 when it is outside what this clean tracks. */
    private int indexOf(final long offset)
    {
        final long index = offset - firstOffset;
        return index >= 0 && index < MAX_OFFSETS ? (int)index : -1;
    }

    private boolean isSet(final int bitset, final int index)
    {
        final long[] words = bits[bitset];
        final int word = index >>> 6;
        return word < words.length && (words[word] & (1L << index)) != 0;
    }

    private void set(final int bitset, final int index)
    {
        final int word = index >>> 6;
        if (word >= bits[bitset].length)
        {
            grow(word);
        }
        bits[bitset][word] |= 1L << index;
        usedWords = Math.max(usedWords, word + 1);
    }

    /** Doubles every bitset until it holds {@code word} (at most {@link #MAX_OFFSETS} bits: indexes stop there). */
    private void grow(final int word)
    {
        int words = bits[PUT].length;
        while (words <= word)
        {
            words <<= 1;
        }
        for (int b = 0; b < bits.length; b++)
        {
            bits[b] = Arrays.copyOf(bits[b], words);
        }
    }
}
