package io.ferrite.log.clean;

import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static io.ferrite.log.clean.OffsetMapDescriptor.HASH_LENGTH;
import static io.ferrite.log.clean.OffsetMapDescriptor.OFFSET_OFFSET;
import static io.ferrite.log.clean.OffsetMapDescriptor.SLOT_LENGTH;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The cleaner's key to latest-offset map, Kafka's {@code SkimpyOffsetMap}: a fixed block of off-heap memory
 * (a cleaner thread's share of {@code log.cleaner.dedupe.buffer.size}, 128 MiB in all by default) of
 * 24-byte slots ({@link OffsetMapDescriptor}) — the key's 128-bit hash and an offset — in open addressing. Keys are
 * never stored, only their hashes: two keys with one hash would share a slot (Kafka accepts the same 2^-128 risk),
 * which is what lets 128 MiB hold 5.6 million slots (5 million keys at the 0.9 load factor) whatever the keys' length.
 *
 * <p>The hash is MurmurHash3 x64 128 ({@link KeyHash}, which says why that is as safe as Kafka's MD5), not MD5:
 * MD5 through {@code MessageDigest} was a large part of a clean's CPU (19% of the cleaner thread's in a profiled
 * broker clean, 40-55% in the in-memory {@code CleanBenchmark}). The slot layout and the probe sequence are Kafka's:
 * attempt {@code i} reads the big-endian int at byte {@code min(i, 12)} of the hash, adds {@code max(0, i - 12)}, and
 * takes it modulo the slots of the region in use (after Kafka's {@code Utils.abs}; see below).
 *
 * <p><b>Capacity is Kafka's.</b> The map is "full" ({@link #isFull()}) once it holds {@code log.cleaner.io.buffer.load.factor}
 * (0.9) of its block's slots: past that, probe chains grow long, so the cleaner stops loading keys there and cleans
 * the rest of the dirty log in a later pass, as Kafka does; a clean so covers the offsets Kafka's covers. {@link #put}
 * throws once every slot of the block is taken, for a key already held as for a new one (Kafka's
 * {@code SkimpyOffsetMap.put} checks before it hashes).
 *
 * <p><b>A region sized to the keys.</b> Kafka's map spreads even 10 keys over the whole block, so every probe of a
 * clean is a cache and TLB miss on a page of its own (and, on a first clean here, a page fault): in a profiled broker
 * clean of 20 000 keys (41.7 MB) the map's probes were half the cleaner thread's CPU. This map uses only a region at
 * the block's start: 65 536 slots (1.5 MiB) after each {@link #clear()}, doubled whenever it is half full up to 12 MiB
 * ({@link #LAST_DOUBLED_REGION_SLOTS}), after which (or once the next doubling would pass the block) the whole block is
 * the region (so a map of more than 262 144 keys probes what Kafka's does). Growing moves the keys held into the new region in place, by their stored hashes (no key is read again;
 * each entry is marked with its offset's sign bit and placed at the first free or still-marked slot of its new probe
 * sequence, a marked one moving on in its turn), and allocates nothing. A power-of-two region takes its slot with a
 * mask, which is the same slot as Kafka's {@code %}: a region of {@code r} slots holds its keys exactly where Kafka's
 * map of {@code r} slots does, as long as it has not grown (after a growth, where a chain of collisions put a key
 * depends on the order the growth moved them in). Where a key sits is not observable: the map answers every key as
 * Kafka's of the same size does, holds the same set of (hash, offset) slots, and fills up after the same number of
 * distinct keys.
 *
 * <p>Keys are read in place ({@code DirectBuffer}, offset, length): the record's key in the segment's mapping
 * or in a decompressed batch. Neither {@link #put} nor {@link #get} allocates: the hash is this map's own. One thread
 * uses a map; {@link #close()} frees its memory at once rather than when the GC finds the buffer.
 *
 * <p><b>Memory only where used.</b> Given a directory on disk, the block is a private (copy-on-write) mapping of a
 * sparse file made and deleted there at once ({@link OffsetMapMemory}), i.e. memory the OS hands out zeroed page by
 * page on first touch and never writes back to the disk: a map of 128 MiB costs its page tables and the pages of the
 * largest region a clean used, not 128 MiB of resident memory (a {@code ByteBuffer.allocateDirect}, or Kafka's heap
 * array, zeroes and so touches every page when made). {@link #clear()} zeroes only the 4 KiB pages written since the
 * last clear (a bitmap, one bit a page: 4 KiB of heap for 128 MiB), where Kafka's zeroes the whole block before every
 * clean. Without such a directory (none given, one on {@code tmpfs}, one where no file can be made) the block is
 * {@code allocateDirect}: resident whole from the start.
 */
public final class OffsetMap implements AutoCloseable
{
    /** Kafka's {@code log.cleaner.io.buffer.load.factor} default. */
    public static final double DEFAULT_LOAD_FACTOR = 0.9;
    /** Kafka's {@code log.cleaner.dedupe.buffer.size} default (shared by all cleaner threads). */
    public static final long DEFAULT_DEDUPE_BUFFER_SIZE = 128L * 1024 * 1024;

    /** {@link #get} finds no entry for the key. */
    public static final long NO_OFFSET = -1L;

    /** The granularity of {@link #clear()}'s bookkeeping: the OS page on x86-64 and most arm64 Linux. */
    private static final int PAGE_SHIFT = 12;
    /**
     * The region's slots after a clear, when the block has more: 1.5 MiB (384 pages, within a core's TLB reach and
     * cache), which holds 32 768 keys before it first grows. Only the pages a clean writes become resident.
     */
    static final int FIRST_REGION_SLOTS = 65_536;
    /**
     * The largest region a doubling makes: 12 MiB (524 288 slots, 262 144 keys), about a server's last-level cache.
     * When it is half full the region becomes the whole block at once: past the cache a larger region's probes miss as
     * the block's do, and doubling on into 24, 48 and 96 MiB moved millions of entries Kafka's map never moves (a map of
     * 3 million keys took 40-90% longer than the whole block from the start, review 1 of issue 13).
     */
    static final int LAST_DOUBLED_REGION_SLOTS = 1 << 19;
    /** An entry's mark while a growth moves it: its offset's sign bit (offsets put are never negative). */
    private static final long MOVING = Long.MIN_VALUE;

    private final ByteBuffer memory;
    private final boolean residentWhereUsed;
    private final UnsafeBuffer slotsBuffer;
    /** One bit per page of the block a {@link #put} wrote since the last {@link #clear()}. */
    private final long[] writtenPages;
    private boolean closed;
    private final int slots;
    private final int maxEntries;
    private final int firstRegionSlots;
    private final KeyHash keyHash = new KeyHash();
    private long hashHigh;
    private long hashLow;
    /** The slots in use: the block's first {@code region} slots. */
    private int region;
    /** {@code region - 1} when the region is a power of two, else -1 (the slot by {@code %}). */
    private int regionMask;
    /** The entries at which the next put first grows the region. */
    private int growAt;
    private int entries;
    private long latestOffset = NO_OFFSET;
    /** {@link #clear()}s so far: a load's {@link LoadedOffsets} holds for the map as cleared that many times. */
    private long clears;

    /**
     * @param memoryBytes the map's size in bytes (a cleaner thread's {@code dedupe.buffer.size / threads}); at
     *                    least one slot
     * @param loadFactor  the share of slots in use at which {@link #isFull()} says stop ({@code 0 < f <= 1})
     * @throws IllegalArgumentException when {@code slots * loadFactor <= 1}: such a map would be full before its
     *                                  first key and a clean would never progress (Kafka refuses it too)
     */
    public OffsetMap(final int memoryBytes, final double loadFactor)
    {
        this(memoryBytes, loadFactor, null);
    }

    /**
     * @param memoryBytes the map's size in bytes (a cleaner thread's {@code dedupe.buffer.size / threads}); at
     *                    least one slot
     * @param loadFactor  the share of slots in use at which {@link #isFull()} says stop ({@code 0 < f <= 1})
     * @param dir         a disk-backed directory for the block's sparse file (made and deleted at once), or null
     *                    for direct memory
     * @throws IllegalArgumentException when {@code slots * loadFactor <= 1}
     * @throws OutOfMemoryError         when the block can be neither mapped nor allocated
     */
    public OffsetMap(final int memoryBytes, final double loadFactor, final Path dir)
    {
        this(memoryBytes, loadFactor, dir, FIRST_REGION_SLOTS);
    }

    /**
     * A map whose region after a clear is {@code firstRegionSlots} (or the whole block, if smaller): the tests'
     * way to a map that never grows, which holds its keys byte for byte where Kafka's map of the same size does.
     */
    OffsetMap(final int memoryBytes, final double loadFactor, final Path dir, final int firstRegionSlots)
    {
        final String problem = problem(memoryBytes, loadFactor);
        if (problem != null)
        {
            throw new IllegalArgumentException(problem);
        }
        slots = memoryBytes / SLOT_LENGTH;
        maxEntries = (int)(slots * loadFactor);
        final ByteBuffer mapped = OffsetMapMemory.mapSparse(slots * SLOT_LENGTH, dir);
        residentWhereUsed = mapped != null;
        memory = mapped != null ? mapped : ByteBuffer.allocateDirect(slots * SLOT_LENGTH); // zero: every slot empty
        slotsBuffer = new UnsafeBuffer(memory);
        writtenPages = new long[(((slots * SLOT_LENGTH - 1) >>> PAGE_SHIFT) >>> 6) + 1];
        this.firstRegionSlots = firstRegionSlots;
        useRegion(Math.min(slots, firstRegionSlots));
    }

    /**
     * Why a map of {@code memoryBytes} at {@code loadFactor} cannot be made (no slot, a load factor outside (0, 1],
     * full before its first key), or null when it can. Pure: a dynamic change is checked with it before it is stored.
     */
    public static String problem(final long memoryBytes, final double loadFactor)
    {
        if (memoryBytes < SLOT_LENGTH)
        {
            return "an offset map of " + memoryBytes + " bytes has no slot of " + SLOT_LENGTH;
        }
        if (!(loadFactor > 0 && loadFactor <= 1))
        {
            return "load factor " + loadFactor + " is not in (0, 1]";
        }
        final long slots = memoryBytes / SLOT_LENGTH;
        if (slots * loadFactor <= 1.0)
        {
            return "an offset map of " + slots + " slots at load factor " + loadFactor + " would be full before its first key";
        }
        return null;
    }

    /** A cleaner thread's map: Kafka sizes it {@code min(dedupeBufferSize / threads, Integer.MAX_VALUE)}. */
    public static int memoryPerThread(final long dedupeBufferSize, final int threads)
    {
        return (int)Math.min(dedupeBufferSize / threads, Integer.MAX_VALUE);
    }

    /** Whether the block is the mapping of a sparse file (resident where used), not direct memory (resident whole). */
    public boolean residentOnlyWhereUsed()
    {
        return residentWhereUsed;
    }

    /** The block's slots (Kafka's {@code slots}): what the capacity counts. */
    public int slots()
    {
        return slots;
    }

    /** The slots of the region in use (the first ones of the block). */
    int regionSlots()
    {
        return region;
    }

    /** Keys held. */
    public int size()
    {
        return entries;
    }

    /** The share of slots in use. */
    public double utilization()
    {
        return (double)entries / slots;
    }

    /** Whether the map holds its load factor's share of the slots: the cleaner stops adding keys (Kafka's check before each put). */
    public boolean isFull()
    {
        return entries >= maxEntries;
    }

    /** The offset of the last record loaded (or as set by {@link #updateLatestOffset}), -1 when none. */
    public long latestOffset()
    {
        return latestOffset;
    }

    /** Moves the latest offset past records that put no key (a batch's last offset, a segment's end). */
    public void updateLatestOffset(final long offset)
    {
        latestOffset = offset;
    }

    /**
     * Records {@code offset} as the latest for the key at {@code [keyOffset, keyOffset + keyLength)} of
     * {@code key}, replacing the key's earlier offset, and makes it the map's latest offset.
     *
     * @return the offset the key's slot held before ({@link #NO_OFFSET} for a key new to the map): the load's
     * {@link LoadedOffsets} learns from it that the older offset is no longer its key's latest, without a lookup
     * @throws IllegalStateException    when every slot is taken (even if the key is held), or the map is closed
     * @throws IllegalArgumentException when {@code offset} is negative (no record has such an offset)
     */
    public long put(final DirectBuffer key, final int keyOffset, final int keyLength, final long offset)
    {
        ensureOpen();
        if (entries >= slots)
        {
            throw new IllegalStateException("the offset map is full: " + entries + " entries in " + slots + " slots");
        }
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset " + offset + " put for a key");
        }
        if (entries >= growAt)
        {
            grow();
        }
        hash(key, keyOffset, keyLength);
        int attempt = 0;
        int position = positionOf(hashHigh, hashLow, attempt);
        while (!isEmpty(position))
        {
            if (holdsHash(position))
            {
                final long previous = slotsBuffer.getLong(position + OFFSET_OFFSET, BIG_ENDIAN);
                slotsBuffer.putLong(position + OFFSET_OFFSET, offset, BIG_ENDIAN);
                latestOffset = offset;
                return previous;
            }
            position = positionOf(hashHigh, hashLow, ++attempt);
        }
        write(position, hashHigh, hashLow, offset);
        latestOffset = offset;
        entries++;
        return NO_OFFSET;
    }

    /** The latest offset put for the key, or {@link #NO_OFFSET}. */
    public long get(final DirectBuffer key, final int keyOffset, final int keyLength)
    {
        ensureOpen();
        hash(key, keyOffset, keyLength);
        // as Kafka: a chain longer than the slots plus the hash's extra start points means the key is absent
        final int maxAttempts = region + HASH_LENGTH - 4;
        for (int attempt = 0; attempt < maxAttempts; attempt++)
        {
            final int position = positionOf(hashHigh, hashLow, attempt);
            if (isEmpty(position))
            {
                return NO_OFFSET;
            }
            if (holdsHash(position))
            {
                return slotsBuffer.getLong(position + OFFSET_OFFSET, BIG_ENDIAN);
            }
        }
        return NO_OFFSET;
    }

    /**
     * Empties the map for the next clean: zeros over every page a {@link #put} wrote since the last clear (the others
     * are zero still), which leaves the block as Kafka's clear leaves it without touching pages no clean used.
     */
    public void clear()
    {
        ensureOpen();
        final int capacity = slotsBuffer.capacity();
        for (int word = 0; word < writtenPages.length; word++)
        {
            long bits = writtenPages[word];
            while (bits != 0)
            {
                final int page = (word << 6) + Long.numberOfTrailingZeros(bits);
                final int start = page << PAGE_SHIFT;
                slotsBuffer.setMemory(start, Math.min(1 << PAGE_SHIFT, capacity - start), (byte)0);
                bits &= bits - 1;
            }
            writtenPages[word] = 0;
        }
        entries = 0;
        latestOffset = NO_OFFSET;
        clears++;
        useRegion(Math.min(slots, firstRegionSlots));
    }

    /** How many times {@link #clear()} ran: a load's bookkeeping is for one of these. */
    long clears()
    {
        return clears;
    }

    private void useRegion(final int regionSlots)
    {
        region = regionSlots;
        regionMask = Integer.bitCount(regionSlots) == 1 ? regionSlots - 1 : -1;
        growAt = regionSlots < slots ? regionSlots >>> 1 : Integer.MAX_VALUE;
    }

    /**
     * Doubles the region (or makes it the whole block, if a doubling would pass it or the region is
     * {@link #LAST_DOUBLED_REGION_SLOTS} already) and moves every entry into it: each
     * entry of the old region is marked {@link #MOVING} first, then each marked one, in slot order, goes to the first
     * slot of its new probe sequence that is empty or holds a marked entry, which it takes in turn to its own place.
     * An entry is so placed past only slots that hold placed entries, as a put would have placed it.
     */
    private void grow()
    {
        final int old = region;
        for (int position = 0; position < old * SLOT_LENGTH; position += SLOT_LENGTH)
        {
            if (!isEmpty(position))
            {
                slotsBuffer.putLong(position + OFFSET_OFFSET, slotsBuffer.getLong(position + OFFSET_OFFSET, BIG_ENDIAN) | MOVING, BIG_ENDIAN);
            }
        }
        useRegion(old > slots >>> 1 || old >= LAST_DOUBLED_REGION_SLOTS ? slots : old << 1);
        for (int from = 0; from < old * SLOT_LENGTH; from += SLOT_LENGTH)
        {
            if (isEmpty(from) || slotsBuffer.getLong(from + OFFSET_OFFSET, BIG_ENDIAN) >= 0)
            {
                continue; // empty, or an entry placed already
            }
            long high = slotsBuffer.getLong(from, BIG_ENDIAN);
            long low = slotsBuffer.getLong(from + 8, BIG_ENDIAN);
            long offset = slotsBuffer.getLong(from + OFFSET_OFFSET, BIG_ENDIAN) & ~MOVING;
            slotsBuffer.setMemory(from, SLOT_LENGTH, (byte)0);
            int attempt = 0;
            while (true)
            {
                final int to = positionOf(high, low, attempt);
                if (isEmpty(to))
                {
                    write(to, high, low, offset);
                    break;
                }
                final long held = slotsBuffer.getLong(to + OFFSET_OFFSET, BIG_ENDIAN);
                if (held < 0)
                {
                    // a marked entry: this one takes its slot, and it is moved next
                    final long heldHigh = slotsBuffer.getLong(to, BIG_ENDIAN);
                    final long heldLow = slotsBuffer.getLong(to + 8, BIG_ENDIAN);
                    write(to, high, low, offset);
                    high = heldHigh;
                    low = heldLow;
                    offset = held & ~MOVING;
                    attempt = 0;
                }
                else
                {
                    attempt++;
                }
            }
        }
    }

    /** One slot's hash and offset, its page(s) marked written first. */
    private void write(final int position, final long high, final long low, final long offset)
    {
        // marked before the writes, so that a fault between them (an InternalError) leaves no written page unmarked
        markWritten(position);
        markWritten(position + SLOT_LENGTH - 1); // a slot may straddle two pages
        slotsBuffer.putLong(position, high, BIG_ENDIAN);
        slotsBuffer.putLong(position + 8, low, BIG_ENDIAN);
        slotsBuffer.putLong(position + OFFSET_OFFSET, offset, BIG_ENDIAN);
    }

    private void markWritten(final int position)
    {
        final int page = position >>> PAGE_SHIFT;
        writtenPages[page >>> 6] |= 1L << (page & 63);
    }

    /**
     * Frees the off-heap block now. {@link #put}, {@link #get} and {@link #clear} throw after it (rather than touch
     * freed memory); a second close does nothing.
     */
    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            slotsBuffer.wrap(new byte[0]); // nothing points at the freed block any more
            IoUtil.unmap(memory);
        }
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("the offset map is closed");
        }
    }

    private void hash(final DirectBuffer key, final int keyOffset, final int keyLength)
    {
        keyHash.hash(key, keyOffset, keyLength);
        hashHigh = keyHash.high();
        hashLow = keyHash.low();
    }

    /**
     * Kafka's probe: attempt {@code i} takes the big-endian int at byte {@code min(i, 12)} of the hash (its halves
     * {@code high}, {@code low}, each big-endian), adds {@code max(0, i - 12)}, and takes Kafka's {@code Utils.abs} of
     * it modulo the region's slots (a mask when they are a power of two: the same slot).
     */
    private int positionOf(final long high, final long low, final int attempt)
    {
        final int at = Math.min(attempt, HASH_LENGTH - 4);
        final long window = at == 0 ? high : at < 8 ? (high << (at << 3)) | (low >>> (64 - (at << 3))) : low << ((at - 8) << 3);
        final int probe = (int)(window >>> 32) + Math.max(0, attempt - HASH_LENGTH + 4);
        final int abs = probe == Integer.MIN_VALUE ? 0 : Math.abs(probe);
        return (regionMask >= 0 ? abs & regionMask : abs % region) * SLOT_LENGTH;
    }

    /**
     * Whether the slot at {@code position} is 24 zero bytes. A slot whose page(s) no {@link #put} wrote since the last
     * {@link #clear()} is zero without a look (every non-zero byte is on a page marked written): the probes of a
     * region's pages no clean has used yet are such, and not reading them spares a cache miss, and, in a sparse file's
     * mapping, a read fault that maps a page of the file's page cache just before the put's write fault copies it.
     */
    private boolean isEmpty(final int position)
    {
        if (!isWritten(position) && !isWritten(position + SLOT_LENGTH - 1))
        {
            return true;
        }
        return slotsBuffer.getLong(position) == 0 && slotsBuffer.getLong(position + 8) == 0 &&
            slotsBuffer.getLong(position + OFFSET_OFFSET) == 0;
    }

    private boolean isWritten(final int position)
    {
        final int page = position >>> PAGE_SHIFT;
        return (writtenPages[page >>> 6] & (1L << (page & 63))) != 0;
    }

    private boolean holdsHash(final int position)
    {
        return slotsBuffer.getLong(position, BIG_ENDIAN) == hashHigh && slotsBuffer.getLong(position + 8, BIG_ENDIAN) == hashLow;
    }
}
