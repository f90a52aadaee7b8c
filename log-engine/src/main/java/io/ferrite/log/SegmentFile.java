package io.ferrite.log;

import io.ferrite.index.ZeroFill;
import org.agrona.DirectBuffer;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The {@code .log} file of a segment: a channel (for {@code transferTo} and {@code fsync}) and a
 * memory mapping (for reading batch headers without system calls, and for writing in the
 * {@link WriteStrategy#MAPPED} strategy).
 *
 * <p>A writable file is preallocated (sparse) to its capacity so the mapping never changes while
 * the segment is active; {@link #trim(int)} cuts it to its data when the segment rolls, keeping the
 * mapping for readers (they never read past the published size). Single writer.
 */
final class SegmentFile implements AutoCloseable
{
    /** Blocks allocated (and pages touched) ahead of the write position, per step: 1 MiB, 256 pages. */
    static final int PREALLOCATION_CHUNK = 1 << 20;
    private static final int PAGE = 4096;

    private final Path path;
    private final FileChannel channel;
    private final WriteStrategy strategy;
    private final boolean writable;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private final io.ferrite.wire.BufferView source = new io.ferrite.wire.BufferView();
    private MappedByteBuffer mapped;
    private int capacity;
    /** Written by the appender and the preallocator under this object's monitor; read by the appender unlocked. */
    /** Allocated and its pages touched: the writer may write below it without the lock. */
    private volatile int allocatedUpTo;
    /** Zeros written up to here (guarded by this); pages above {@link #allocatedUpTo} not yet touched. */
    private int claimedUpTo;
    /** Set when the segment stops taking appends (or closes): nothing more is allocated or touched. */
    private boolean sealed;
    /** Appends that had to allocate blocks themselves (writer only). */
    private long stalls;
    private java.nio.file.FileStore store;

    private SegmentFile(final Path path, final FileChannel channel, final WriteStrategy strategy, final boolean writable,
        final int capacity, final int dataSize) throws IOException
    {
        this.path = path;
        this.channel = channel;
        this.strategy = strategy;
        this.writable = writable;
        this.capacity = capacity;
        this.allocatedUpTo = dataSize;
        this.claimedUpTo = dataSize;
        this.seenPosition = dataSize;
        if (capacity > 0)
        {
            mapped = channel.map(writable && strategy == WriteStrategy.MAPPED ?
                FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY, 0, capacity);
            view.wrap(mapped);
        }
    }

    /**
     * Opens (creating if needed) a segment's log file for appends, sized to {@code capacity}.
     *
     * @param dataSize the bytes of data it already holds (the rest is preallocation)
     */
    static SegmentFile openWritable(final Path path, final WriteStrategy strategy, final int capacity, final int dataSize)
        throws IOException
    {
        // one open, which makes the file when it is absent: its channel sizes it too (a FileChannel
        // cannot lengthen a file), where a second open per new segment cost a path walk
        final RandomAccessFile file = new RandomAccessFile(path.toFile(), "rw");
        final FileChannel channel = file.getChannel();
        try
        {
            final long found = channel.size();
            final int size = (int)Math.max(capacity, Math.min(found, Integer.MAX_VALUE));
            if (found != size)
            {
                file.setLength(size);
            }
            return new SegmentFile(path, channel, strategy, true, size, dataSize);
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    /** Opens a rolled segment's log file for reading. */
    static SegmentFile openReadOnly(final Path path, final WriteStrategy strategy) throws IOException
    {
        final FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE);
        try
        {
            final int size = (int)Math.min(channel.size(), Integer.MAX_VALUE);
            return new SegmentFile(path, channel, strategy, false, size, size);
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    private static void setLength(final Path path, final long length) throws IOException
    {
        try (RandomAccessFile raf = new RandomAccessFile(path.toFile(), "rw"))
        {
            raf.setLength(length);
        }
    }

    Path path()
    {
        return path;
    }

    FileChannel channel()
    {
        return channel;
    }

    /** The mapping: bytes below the segment's published size may be read from any thread. */
    DirectBuffer view()
    {
        return view;
    }

    int capacity()
    {
        return capacity;
    }

    /**
     * Writes {@code length} bytes at {@code position} (the current end of data).
     *
     * @throws IOException when the disk refuses them (full, failed); nothing is then published
     */
    void write(final DirectBuffer src, final int offset, final int length, final int position) throws IOException
    {
        if (position + (long)length > capacity)
        {
            throw new IOException(LogMessages.noRoom(path, length, position));
        }
        if (strategy == WriteStrategy.MAPPED)
        {
            ensureAllocated(position + length);
            view.putBytes(position, src, offset, length);
        }
        else
        {
            final ByteBuffer bb = source.of(src, offset, length);
            long at = position;
            while (bb.hasRemaining())
            {
                at += channel.write(bb, at);
            }
        }
    }

    /**
     * Wraps {@code into} over {@code length} bytes of the mapping at {@code position} (the end of
     * data), allocated first if the preallocator has not got there, for a batch built in place.
     *
     * @return false, wrapping nothing, when the strategy does not write through the mapping or the
     *     bytes do not fit in it
     * @throws IOException when the disk refuses the blocks (full, failed)
     */
    boolean claim(final int position, final int length, final UnsafeBuffer into) throws IOException
    {
        if (strategy != WriteStrategy.MAPPED || position + (long)length > capacity)
        {
            return false;
        }
        ensureAllocated(position + length);
        into.wrap(view, position, length);
        return true;
    }

    /** The writer's side of allocation (mapped strategy): blocks and touched pages up to {@code end}. */
    private void ensureAllocated(final int end) throws IOException
    {
        if (end > allocatedUpTo)
        {
            stalls++; // the writer outran the preallocator: it allocates what it needs, no more
            allocate(end, false);
            if (end > allocatedUpTo)
            {
                throw new IOException(LogMessages.text("segment ", path, " takes no more appends"));
            }
        }
    }

    /**
     * Keeps at least {@link #LOOKAHEAD} allocated ahead of {@code position}: called by the
     * preallocator thread (or an idle writer) so that appends find their pages ready.
     */
    void allocateAhead(final int position) throws IOException
    {
        if (strategy != WriteStrategy.MAPPED)
        {
            return;
        }
        final int written = position - seenPosition;
        seenPosition = position;
        if (written > 0)
        {
            // never more ahead than the file holds, so a partition that holds little costs little: a
            // file's lookahead doubles at most while it fills, unless it took over a rolled one's
            final long wanted = Math.min(Math.max(MIN_LOOKAHEAD, (long)written * LOOKAHEAD_LOOKS), Math.max(MIN_LOOKAHEAD, position));
            lookahead = (int)Math.min(LOOKAHEAD, Math.max(lookahead, (wanted + PAGE - 1) & -PAGE));
        }
        // to a page boundary: the rest of the page the writer is in counts as lookahead
        final int target = (int)Math.min(capacity, Math.max((long)position + lookahead & -PAGE, position + 1L));
        if (lookahead > 0 && target > allocatedUpTo)
        {
            allocate(target, true);
        }
    }

    /**
     * Starts with the lookahead a rolled file of the same log reached: a writer going flat out keeps
     * its pages ready across a roll instead of starting over from one page.
     */
    void takeLookaheadOf(final SegmentFile rolled)
    {
        lookahead = Math.max(lookahead, rolled.lookahead);
    }

    long stalls()
    {
        return stalls;
    }

    /** Bytes allocated (and touched) beyond {@code position}. */
    int allocatedAhead(final int position)
    {
        return allocatedUpTo - position;
    }

    /** The most allocated ahead of the writer before the preallocator tops it up: two chunks. */
    static final int LOOKAHEAD = 2 * PREALLOCATION_CHUNK;
    /** The least lookahead of a file that has been written to: one page. */
    static final int MIN_LOOKAHEAD = PAGE;
    /**
     * The lookahead covers what the writer wrote between two looks of the preallocator (1 ms apart),
     * this many times over, between {@link #MIN_LOOKAHEAD} and {@link #LOOKAHEAD}; a file nobody
     * writes gets none, and a file never more than it holds. Why not always the most: every page ahead
     * is a disk block and a resident page, and at 2 MiB ahead of every partition 2 000 idle partitions
     * held 3.2 GB of RSS and 1.5 MB of disk each (and 20 KiB ahead of 300 bytes, 10 000 partitions
     * twice Kafka's disk). 64 looks keep a writer going at 100 MB/s 2 MiB ahead, and one at 1 MB/s 64 KiB.
     */
    private static final int LOOKAHEAD_LOOKS = 64;
    /** The preallocator's lookahead for this file (only grows), and where it saw the writer last. */
    private int lookahead;
    private int seenPosition;

    /**
     * Allocates disk blocks and touches the pages up to {@code end} — or, {@code chunked}, for the
     * next {@link #PREALLOCATION_CHUNK} beyond what is allocated (the preallocator's way).
     */
    synchronized void allocate(final int end, final boolean chunked) throws IOException
    {
        if (strategy != WriteStrategy.MAPPED || end <= allocatedUpTo || sealed)
        {
            return;
        }
        final int target;
        if (chunked)
        {
            // on a nearly full disk the preallocator claims nothing: the space stays free for the
            // other files, and each write claims just what it needs
            if (store().getUsableSpace() <= 4L * PREALLOCATION_CHUNK)
            {
                return;
            }
            target = (int)Math.min(capacity, Math.max(end, (long)allocatedUpTo + Math.min(PREALLOCATION_CHUNK, lookahead / 2)));
        }
        else
        {
            target = end;
        }
        try
        {
            writeZerosUpTo(target);
        }
        finally
        {
            // touch what was claimed, even on failure, and only then publish it: a page touched
            // after publication could already hold the writer's data
            for (int page = (allocatedUpTo + PAGE - 1) & -PAGE; page < claimedUpTo; page += PAGE)
            {
                view.putByte(page, (byte)0); // maps the page writable now, not during an append
            }
            allocatedUpTo = claimedUpTo;
        }
    }

    private java.nio.file.FileStore store() throws IOException
    {
        if (store == null)
        {
            store = java.nio.file.Files.getFileStore(path);
        }
        return store;
    }

    private void writeZerosUpTo(final int target) throws IOException
    {
        while (claimedUpTo < target)
        {
            // progress is kept as it is made: what a full disk granted before refusing is used, not lost
            claimedUpTo += ZeroFill.write(channel, claimedUpTo, target - claimedUpTo);
        }
    }

    /** fsync of the data (and the metadata needed to read it back). */
    void flush() throws IOException
    {
        channel.force(false);
    }

    /**
     * Cuts the file to its {@code size} bytes of data when the segment stops taking appends. The
     * mapping stays: readers may be using it, and they never read past the data.
     */
    synchronized void trim(final int size) throws IOException
    {
        sealed = true;
        if (channel.size() != size)
        {
            channel.truncate(size);
        }
        allocatedUpTo = Math.min(allocatedUpTo, size);
        claimedUpTo = Math.min(claimedUpTo, size);
    }

    /**
     * Drops everything from {@code size} on (recovery, or a log truncated to an offset), leaving a
     * hole of zeros up to the capacity so that no stale batch can ever look valid past the new end.
     * Only while no reader looks past {@code size}.
     */
    synchronized void truncateTo(final int size) throws IOException
    {
        channel.truncate(size);
        if (writable)
        {
            setLength(path, capacity);
        }
        allocatedUpTo = Math.min(allocatedUpTo, size);
        claimedUpTo = Math.min(claimedUpTo, size);
    }

    /**
     * Closes the channel; nothing more is allocated or written. The mapping stays, and so does
     * {@link #view} over it: a reader racing the close (or holding a batch it wrapped before) reads
     * valid memory, and the mapping goes when nothing reaches it any more (the cleaner of the
     * {@link MappedByteBuffer}, which the view and every buffer wrapped from it reference), or at
     * {@link #unmapNow}. Unmapping here made such a reader a SIGSEGV of the whole process
     * ({@code CloseReadRaceTest}).
     */
    @Override
    public synchronized void close() throws IOException
    {
        sealed = true;
        channel.close();
    }

    /**
     * {@link #close} and unmap at once: only once no reader can hold the mapping any more (a deleted
     * segment after {@code file.delete.delay.ms}, whose blocks would otherwise stay allocated until
     * the GC collects the mapping).
     */
    synchronized void unmapNow() throws IOException
    {
        try
        {
            close();
        }
        finally
        {
            if (mapped != null)
            {
                final MappedByteBuffer m = mapped;
                mapped = null;
                view.wrap(0, 0);
                IoUtil.unmap(m);
            }
        }
    }
}
