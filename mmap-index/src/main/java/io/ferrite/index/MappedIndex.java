package io.ferrite.index;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A file of fixed-size entries, memory-mapped whole. A writable index is preallocated to its
 * maximum size (rounded down to whole entries) and trimmed to its entries when it stops taking
 * appends; a read-only one is mapped at its real size. A writable index whose file does not exist
 * makes it when it first needs it ({@link IndexFile}).
 *
 * <p>The mapping is made on first use — the first entry written or read — not when the index is
 * opened, as Kafka's {@code LazyIndex} does: an index without entries (an idle partition's) is never
 * mapped, and a log can give a rolled segment's mapping back after checking it on open
 * ({@link #releaseMapping}) until a read needs it. Why: every mapping is a line of
 * {@code vm.max_map_count} (65 530 by default), and three per segment ran out at about 20 000
 * segments where Kafka has two per active segment and none for an unread rolled one.
 *
 * <p>The search ({@link WarmSectionSearch}) looks first at the newest entries, where tailing readers'
 * targets lie.
 */
abstract class MappedIndex implements AutoCloseable
{
    private static final VarHandle ENTRIES;
    private static final VarHandle DIRTY;

    static
    {
        try
        {
            ENTRIES = MethodHandles.lookup().findVarHandle(MappedIndex.class, "entries", int.class);
            DIRTY = MethodHandles.lookup().findVarHandle(MappedIndex.class, "dirty", boolean.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    protected final Path file;
    protected final long baseOffset;
    protected final int entrySize;
    private final boolean writable;
    /** Its entries' mapping (made, given back and remade under this object's monitor). */
    private final IndexMapping mapping = new IndexMapping();
    private boolean closed;
    /** Its file (sized, made, claimed and forced under this object's monitor). */
    private final IndexFile indexFile;
    private int maxEntries;
    /**
     * Blocks claimed (zeros written) up to here: raised under this object's monitor by the writer
     * ({@link #ensureRoomAllocated}) or the preallocator ({@link #allocateAhead}), read unlocked.
     */
    private volatile long allocatedBytes;
    /** No more claims (trimmed, closed or deleted); guarded by this object's monitor. */
    private boolean sealed;
    /** {@link #forDeletion} ran: nothing reaches the file by its path (set under the monitor; {@link #flush} reads it without). */
    private volatile boolean deleted;
    /**
     * The writer has claimed room since the index was opened: only then does the preallocator claim
     * ahead (an index reopened with the closing time-index entry of a clean stop is not growing, and
     * must not hold a descriptor for it).
     */
    private volatile boolean growing;
    @SuppressWarnings("unused") // accessed through ENTRIES
    private volatile int entries;
    /** Entries written or dropped since the last {@link #flush} (the writer sets it, flush clears it). */
    private volatile boolean dirty;

    MappedIndex(final Path file, final long baseOffset, final int entrySize, final int maxIndexSize, final boolean writable)
        throws IOException
    {
        this.file = file;
        this.baseOffset = baseOffset;
        this.entrySize = entrySize;
        this.writable = writable;
        final boolean absent = writable && !Files.exists(file); // made when first needed: see IndexFile
        this.indexFile = new IndexFile(file, absent);
        if (absent)
        {
            maxEntries = maxIndexSize / entrySize;
            return;
        }
        // the file is open only while it is being mapped, sized or claimed: a mapping needs no open
        // file, and an index holding its descriptor made three per segment where Kafka has one
        final long preallocated = (long)(maxIndexSize / entrySize) * entrySize; // sparse
        final long found = indexFile.openFound(writable, preallocated, entrySize);
        if (found % entrySize != 0)
        {
            throw new CorruptIndexException("index " + file + " has " + found + " bytes, not whole " + entrySize + "-byte entries");
        }
        final int existing = (int)(found / entrySize);
        maxEntries = (int)(indexFile.length() / entrySize); // a writable one's capacity: never below its entries
        ENTRIES.setRelease(this, existing);
        allocatedBytes = (long)existing * entrySize;
    }

    /**
     * The entries' bytes, mapped now if they are not yet: every read and write of an entry goes
     * through here. One volatile read once mapped.
     */
    protected final UnsafeBuffer buffer()
    {
        if (!mapping.ready())
        {
            mapNow();
        }
        return mapping.buffer();
    }

    private synchronized void mapNow()
    {
        if (mapping.ready())
        {
            return;
        }
        // after a close too, read-only: a reader racing the close gets valid memory, and the log's
        // closed check after its answer tells it the log is gone (the mapping goes with the GC)
        final long bytes = (long)maxEntries * entrySize;
        if (bytes > 0)
        {
            if (deleted) // its path may name another partition's index by now
            {
                throw new UncheckedIOException(new IOException("index " + file + " was deleted before it was mapped"));
            }
            final boolean forWrites = writable && !closed;
            try (FileChannel channel = indexFile.openForMapping(forWrites, bytes))
            {
                mapping.map(channel, forWrites, bytes);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException("cannot map index " + file, ex);
            }
        }
        else
        {
            mapping.mapEmpty();
        }
    }

    /**
     * Gives the mapping back until the next use of an entry maps it again: for a log that checked a
     * rolled segment's index on open. Only while no reader can hold the index, and only when nothing
     * written through the mapping waits for a {@link #flush} (else it keeps the mapping).
     */
    public synchronized void releaseMapping()
    {
        if (!dirty)
        {
            mapping.unmap();
        }
    }

    /**
     * Before the file is deleted or its directory renamed: maps it now, for readers still holding the
     * index, and never reaches the file by its path again (no claim, trim, flush or map). Why: a
     * partition made again under the same name has an index at that path, and a trim through it would
     * cut that index under its writer's mapping (a SIGBUS).
     *
     * @throws UncheckedIOException when the map is refused (vm.max_map_count); the index is marked all the same
     */
    public synchronized void forDeletion()
    {
        try
        {
            if (!indexFile.absent()) // else it has no entries to read, and no file to keep
            {
                buffer();
            }
        }
        finally
        {
            deleted = true;
            sealed = true;
            growing = false;
            try
            {
                indexFile.releaseClaimChannel();
            }
            catch (final IOException ignored)
            {
                // a descriptor of a file that is going: nothing was waiting on its close
            }
        }
    }

    public Path file()
    {
        return file;
    }

    public long baseOffset()
    {
        return baseOffset;
    }

    /** Entries readers may see (acquire). */
    public int entries()
    {
        return (int)ENTRIES.getAcquire(this);
    }

    public int maxEntries()
    {
        return maxEntries;
    }

    public boolean isFull()
    {
        return entries() >= maxEntries;
    }

    /** Bytes of the entries (the size the file has after {@link #trimToValidSize()}). */
    public long sizeInBytes()
    {
        return (long)entries() * entrySize;
    }

    /**
     * Makes sure disk blocks exist for the next entry, allocating {@value #ALLOCATION_CHUNK} bytes at
     * a time with {@code write()} of zeros. Why: the file is preallocated sparse, and a store into an
     * unallocated page of a mapping on a full disk is a SIGBUS, where a write is an IOException the
     * log can report — so the space is claimed here, before the segment takes the batch.
     *
     * <p>The zeros go only past the entries, never over them: the write lands in the same page cache
     * the mapping shows. Why it matters: recovery rebuilds an index through the mapping without
     * claiming first, so after {@link #resize} and {@link #reset} its entries can run past what was
     * claimed (a rolled segment's index rebuilt with more entries than its trimmed file held), and
     * zeros written from the old claim would wipe them — the out-of-order entries a crash test found.
     */
    public void ensureRoomAllocated() throws IOException
    {
        final int n = entries();
        if ((long)(n + 1) * entrySize <= allocatedBytes || n >= maxEntries)
        {
            return;
        }
        growing = true;
        claim(n); // the first entry, or the writer outran the preallocator
    }

    /**
     * The preallocator's side of {@link #ensureRoomAllocated}: keeps at least half a chunk claimed
     * ahead of the entries, so that the writer's appends make no system call for it. An index with no
     * entries gets nothing: a partition that holds little costs no blocks and no descriptor.
     */
    public void allocateAhead() throws IOException
    {
        final int n = entries();
        if (growing && allocatedBytes - (long)n * entrySize < ALLOCATION_CHUNK / 2)
        {
            claim(n);
        }
    }

    private synchronized void claim(final int n) throws IOException
    {
        final long limit = (long)maxEntries * entrySize;
        final long from = Math.max(allocatedBytes, (long)n * entrySize);
        final long target = Math.min(limit, Math.max((long)(n + 1) * entrySize, from + ALLOCATION_CHUNK));
        if (sealed || target <= allocatedBytes)
        {
            return;
        }
        indexFile.zeroFill(from, target, limit);
        allocatedBytes = target;
    }

    /**
     * Four pages: 2 048 offset-index entries, about 8 MiB of log at Kafka's 4096-byte index interval,
     * per claim (an open, a write and a close of the file); a partition that holds little claims
     * 16 KiB per index, not 64 KiB.
     */
    private static final int ALLOCATION_CHUNK = 16 * 1024;

    /**
     * Publishes {@code n} entries (release): the bytes of entry {@code n - 1} must be written before.
     * Their blocks now exist (the stores into the mapping allocated them), so the claim covers them:
     * {@link #ensureRoomAllocated} must never count them as space still to be zeroed.
     */
    protected final void publishEntries(final int n)
    {
        DIRTY.setRelease(this, true); // no full fence per entry: a flush reads it after an acquire of the log end above this
        ENTRIES.setRelease(this, n);
        final long end = (long)n * entrySize;
        if (end > allocatedBytes) // only a rebuild writes entries it did not claim
        {
            synchronized (this)
            {
                allocatedBytes = Math.max(allocatedBytes, end);
            }
        }
    }

    /** Forgets every entry (before the segment's index is rebuilt). */
    public void reset()
    {
        requireWritable();
        publishEntries(0);
        onTruncated();
    }

    /** Keeps only the first {@code n} entries. */
    protected final void truncateToEntries(final int n)
    {
        requireWritable();
        publishEntries(Math.min(n, entries()));
        onTruncated();
    }

    /** Lets a subclass refresh cached facts about its last entry. */
    protected abstract void onTruncated();

    protected final void requireWritable()
    {
        if (!writable)
        {
            throw stateError("index ", file, " is read-only");
        }
    }

    /**
     * Makes the file now if it is not made yet (preallocated): before a roll, so that its trim cannot
     * fail on the creation, and ahead of the first entry (the preallocator), so that the writer does
     * not make it. One volatile read once it is made.
     *
     * @return whether this call made it
     */
    public boolean makeFile() throws IOException
    {
        return indexFile.absent() && makeFileNow();
    }

    private synchronized boolean makeFileNow() throws IOException
    {
        if (writable && !sealed && !deleted && indexFile.absent())
        {
            indexFile.makeIfAbsent((long)maxEntries * entrySize);
            return true;
        }
        return false;
    }

    /**
     * Cuts the file to its entries; the index then takes no more appends. Called when its segment
     * stops being the active one, and on close. The mapping stays as it is: readers may be searching
     * it, and they never look past the entries, which the file still holds.
     */
    public synchronized void trimToValidSize() throws IOException
    {
        requireWritable();
        if (deleted)
        {
            return; // the file is going, and its path may be another index's (see forDeletion)
        }
        final int n = entries();
        maxEntries = n;
        sealed = true;
        growing = false;
        indexFile.releaseClaimChannel();
        allocatedBytes = Math.min(allocatedBytes, (long)n * entrySize);
        if (indexFile.absent() || indexFile.length() != (long)n * entrySize)
        {
            // an absent file is made now, empty: a rolled or closed segment has its index files
            indexFile.setLength((long)n * entrySize); // once, at the roll: a deleted segment's close finds it trimmed
            dirty = true; // the roll's flush makes the new length durable (else a power loss can bring back the zeros)
        }
    }

    /**
     * Remaps the file for up to {@code maxIndexSize} bytes of entries (rounded down to whole
     * entries, never below those it has): reopening the last segment of a log for appends. Only
     * while no reader can hold the index — when the log is being opened.
     */
    public synchronized void resize(final int maxIndexSize) throws IOException
    {
        requireWritable();
        final int capacity = Math.max(maxIndexSize / entrySize, entries());
        mapping.unmap(); // what was written through it stays in the page cache; the next flush forces the file
        indexFile.setLength((long)capacity * entrySize);
        maxEntries = capacity; // mapped at the next use, at the new size
        sealed = false;
        allocatedBytes = (long)entries() * entrySize;
    }

    /** fsync of what was written through the mapping since the last flush (nothing when it is not mapped). */
    public void flush() throws IOException
    {
        if (!writable || !dirty || deleted)
        {
            return;
        }
        dirty = false; // before the force: an entry written during it sets it again for the next flush
        final MappedByteBuffer m = mapping.mapped();
        if (m != null)
        {
            m.force();
        }
        else
        {
            indexFile.force(); // written through an earlier mapping, given back since (resize), or none
        }
    }

    /**
     * Index of the largest entry whose key is at most {@code target}, or -1 when every key is
     * larger (or there are no entries): see {@link WarmSectionSearch}.
     */
    protected final int search(final long target, final int n)
    {
        return WarmSectionSearch.search(this, target, n);
    }

    /** The search key of entry {@code i}: an offset or a timestamp. */
    protected abstract long key(int i);

    /**
     * Trims (when writable), flushes and gives back the claims' descriptor; the index takes no more
     * entries. The mapping stays, for readers still searching it: it goes when the index is no
     * longer reachable (the buffer's cleaner unmaps it), or at {@link #unmapNow}. Why not unmap here:
     * a reader racing the close would search an unmapped page, a SIGSEGV of the whole process.
     */
    @Override
    public synchronized void close() throws IOException
    {
        if (!closed)
        {
            closed = true;
            try
            {
                if (writable)
                {
                    trimToValidSize();
                    flush();
                }
            }
            finally
            {
                indexFile.releaseClaimChannel();
            }
        }
    }

    /**
     * {@link #close} and unmap at once: only once no reader can hold the index any more (a deleted
     * segment after {@code file.delete.delay.ms}, whose file would otherwise keep its disk blocks
     * until the GC collects the mapping).
     */
    public synchronized void unmapNow() throws IOException
    {
        try
        {
            close();
        }
        finally
        {
            mapping.unmap();
        }
    }

    /**
     * {@code new IllegalStateException(a + file + b)}, built here rather than in the append methods that throw it
     * (javac's inline string concatenation, issue 17, would grow them past the JIT's inlining limits).
     */
    static IllegalStateException stateError(final String a, final Object file, final String b)
    {
        return new IllegalStateException(a + file + b);
    }

    /** {@code new IllegalArgumentException(a + x + b + y + c + file)}, as {@link #stateError}. */
    static IllegalArgumentException argumentError(final String a, final long x, final String b, final long y, final String c,
        final Object file)
    {
        return new IllegalArgumentException(a + x + b + y + c + file);
    }
}
