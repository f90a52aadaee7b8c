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
 * (a cleaner thread's share of {@code log.cleaner.dedupe.buffer.size}, 128 MiB in all by default) holding
 * 24-byte slots ({@link OffsetMapDescriptor}) — the key's 128-bit hash and an offset — in open addressing. Keys are
 * never stored, only their hashes: two keys with one hash would share a slot (Kafka accepts the same 2^-128 risk),
 * which is what lets 128 MiB hold 5.6 million slots (5 million keys at the 0.9 load factor) whatever the keys' length.
 *
 * <p>The hash is MurmurHash3 x64 128 ({@link KeyHash}, which says why that is as safe as Kafka's MD5), not MD5:
 * MD5 through {@code MessageDigest} was a large part of a clean's CPU (19% of the cleaner thread's in a profiled
 * broker clean, 40-55% in the in-memory {@code CleanBenchmark}). The slot layout, the probe sequence and the load
 * factor are Kafka's: attempt {@code i} reads the big-endian int at byte {@code min(i, 12)} of the hash, adds
 * {@code max(0, i - 12)}, and takes it modulo the slots (after Kafka's {@code Utils.abs}). So the map answers every
 * key as Kafka's map of the same size does and fills up after the same number of distinct keys (a clean stops
 * in the same place), though a key sits in another slot than in Kafka's.
 *
 * <p>The map is "full" ({@link #isFull()}) once it holds {@code log.cleaner.io.buffer.load.factor} (0.9) of its
 * slots: past that, probe chains grow long, so the cleaner stops loading keys there and cleans the rest of the
 * dirty log in a later pass, as Kafka does. {@link #put} throws once every slot is taken, for a key already held
 * as for a new one (Kafka's {@code SkimpyOffsetMap.put} checks before it hashes).
 *
 * <p>Keys are read in place ({@code DirectBuffer}, offset, length): the record's key in the segment's mapping
 * or in a decompressed batch. Neither {@link #put} nor {@link #get} allocates: the hash and its bytes are this
 * map's own. One thread uses a map; {@link #close()} frees its memory at once
 * rather than when the GC finds the buffer.
 *
 * <p><b>Memory only where used.</b> Given a directory on disk, the block is a private (copy-on-write) mapping of a
 * sparse file made and deleted there at once ({@link OffsetMapMemory}), i.e. memory the OS hands out zeroed page by
 * page on first touch and never writes back to the disk: a map of 128 MiB that no clean ever uses costs its page tables, not 128 MiB of resident memory (a
 * {@code ByteBuffer.allocateDirect}, or Kafka's heap array, zeroes and so touches every page when made), and one that
 * held 10 keys costs the few pages they landed in. {@link #clear()} zeroes only the 4 KiB pages a {@link #put} wrote
 * since the last clear (a bitmap, one bit a page: 4 KiB of heap for 128 MiB), where Kafka's zeroes the whole block
 * before every clean; the slots, hashes, probes and load factor are Kafka's all the same. Without such a directory
 * (none given, one on {@code tmpfs}, one where no file can be made) the block is {@code allocateDirect}: resident
 * whole from the start.
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

    private final ByteBuffer memory;
    private final boolean residentWhereUsed;
    private final UnsafeBuffer slotsBuffer;
    /** One bit per page of the block a {@link #put} wrote since the last {@link #clear()}. */
    private final long[] writtenPages;
    private boolean closed;
    private final int slots;
    private final int maxEntries;
    private final KeyHash keyHash = new KeyHash();
    private final byte[] hash = new byte[HASH_LENGTH];
    private final UnsafeBuffer hashView = new UnsafeBuffer(hash);
    private long hashHigh;
    private long hashLow;
    private int entries;
    private long latestOffset = NO_OFFSET;

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

    public int slots()
    {
        return slots;
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
     * @throws IllegalStateException when every slot is taken (even if the key is held), or the map is closed
     */
    public void put(final DirectBuffer key, final int keyOffset, final int keyLength, final long offset)
    {
        ensureOpen();
        if (entries >= slots)
        {
            throw new IllegalStateException("the offset map is full: " + entries + " entries in " + slots + " slots");
        }
        hash(key, keyOffset, keyLength);
        int attempt = 0;
        int position = positionOf(attempt);
        while (!isEmpty(position))
        {
            if (holdsHash(position))
            {
                slotsBuffer.putLong(position + OFFSET_OFFSET, offset, BIG_ENDIAN);
                latestOffset = offset;
                return;
            }
            position = positionOf(++attempt);
        }
        // marked before the writes, so that a fault between them (an InternalError) leaves no written page unmarked
        markWritten(position);
        markWritten(position + SLOT_LENGTH - 1); // a slot may straddle two pages
        slotsBuffer.putBytes(position, hash, 0, HASH_LENGTH);
        slotsBuffer.putLong(position + OFFSET_OFFSET, offset, BIG_ENDIAN);
        latestOffset = offset;
        entries++;
    }

    /** The latest offset put for the key, or {@link #NO_OFFSET}. */
    public long get(final DirectBuffer key, final int keyOffset, final int keyLength)
    {
        ensureOpen();
        hash(key, keyOffset, keyLength);
        // as Kafka: a chain longer than the slots plus the hash's extra start points means the key is absent
        final int maxAttempts = slots + HASH_LENGTH - 4;
        for (int attempt = 0; attempt < maxAttempts; attempt++)
        {
            final int position = positionOf(attempt);
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
        hashView.putLong(0, hashHigh, BIG_ENDIAN);
        hashView.putLong(8, hashLow, BIG_ENDIAN);
    }

    private int positionOf(final int attempt)
    {
        final int probe = hashView.getInt(Math.min(attempt, HASH_LENGTH - 4), BIG_ENDIAN) + Math.max(0, attempt - HASH_LENGTH + 4);
        final int slot = (probe == Integer.MIN_VALUE ? 0 : Math.abs(probe)) % slots;
        return slot * SLOT_LENGTH;
    }

    /**
     * Whether the slot at {@code position} is 24 zero bytes. A slot whose page(s) no {@link #put} wrote since the last
     * {@link #clear()} is zero without a look (every non-zero byte is on a page marked written): most probes of a
     * large map that holds few keys are such, and not reading them spares a cache miss, and, in a sparse file's
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
