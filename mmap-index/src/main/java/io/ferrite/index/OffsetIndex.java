package io.ferrite.index;

import java.io.IOException;
import java.nio.file.Path;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The sparse offset index of a segment ({@code .index}): entries of
 * <pre>
 *   relative offset: int32   the last offset of a batch, minus the segment's base offset
 *   position: int32          where that batch starts in the .log file
 * </pre>
 * one every {@code index.interval.bytes} of log, in increasing offset order, big-endian, exactly
 * as Kafka writes them. {@link #lookup} gives the position of the last indexed batch whose last
 * offset is at most the target; the batch holding the target is there or after it.
 */
public final class OffsetIndex extends MappedIndex
{
    public static final int ENTRY_SIZE = 8;
    private static final int POSITION_OFFSET = 4;

    private long lastOffset;

    public OffsetIndex(final Path file, final long baseOffset, final int maxIndexSize, final boolean writable) throws IOException
    {
        super(file, baseOffset, ENTRY_SIZE, maxIndexSize, writable);
        onTruncated();
    }

    /**
     * Checks what Kafka checks ({@code length} in whole entries, the last offset not below the base)
     * and also that the offsets increase and positions do not decrease, which catches the zeros a
     * preallocated index keeps after a crash.
     *
     * @throws CorruptIndexException describing the first problem
     */
    public void sanityCheck()
    {
        final int n = entries();
        if (n > 0 && lastOffset < baseOffset)
        {
            throw new CorruptIndexException("index " + file + " has last offset " + lastOffset + " below its base " + baseOffset);
        }
        for (int i = 1; i < n; i++)
        {
            if (relativeOffset(i) <= relativeOffset(i - 1) || position(i) < position(i - 1))
            {
                throw new CorruptIndexException("index " + file + " entry " + i + " is out of order");
            }
        }
    }

    @Override
    protected void onTruncated()
    {
        final int n = entries();
        lastOffset = n == 0 ? baseOffset : baseOffset + relativeOffset(n - 1);
    }

    /** The last offset indexed, or the base offset when there is no entry. */
    public long lastOffset()
    {
        return lastOffset;
    }

    /** Whether {@code offset} can be stored relative to the base offset (as an int32). */
    public boolean canAppendOffset(final long offset)
    {
        final long relative = offset - baseOffset;
        return relative >= 0 && relative <= Integer.MAX_VALUE;
    }

    /**
     * Adds an entry (single writer).
     *
     * @throws IllegalArgumentException when the offset is not above the last one or out of range
     * @throws IllegalStateException    when the index is full
     */
    public void append(final long offset, final int position)
    {
        requireWritable();
        final int n = entries();
        if (n >= maxEntries())
        {
            throw stateError("index ", file, " is full");
        }
        if ((n > 0 && offset <= lastOffset) || !canAppendOffset(offset))
        {
            throw argumentError("offset ", offset, " cannot follow ", lastOffset, " in index ", file);
        }
        final int at = n * ENTRY_SIZE;
        buffer().putInt(at, (int)(offset - baseOffset), BIG_ENDIAN);
        buffer().putInt(at + POSITION_OFFSET, position, BIG_ENDIAN);
        lastOffset = offset;
        publishEntries(n + 1);
    }

    /**
     * The position of the last indexed batch whose last offset is at most {@code targetOffset}, or
     * 0 (the segment's start) when there is none. Safe from any thread.
     */
    public int lookup(final long targetOffset)
    {
        final int i = search(targetOffset - baseOffset, entries());
        return i < 0 ? 0 : position(i);
    }

    /**
     * The position of the first indexed batch whose last offset is at least {@code offset}, or -1:
     * an upper bound for scans that stop at an offset.
     */
    public int positionAtOrAfter(final long offset)
    {
        final int n = entries();
        final int i = search(offset - baseOffset - 1, n);
        final int next = i + 1;
        return next < n ? position(next) : -1;
    }

    /**
     * The largest indexed position that is at most {@code maxPosition}, or -1: lets a read find the
     * end of a byte-limited region without walking every batch header up to it.
     */
    public int positionAtOrBelow(final int maxPosition)
    {
        int lo = 0;
        int hi = entries() - 1;
        int found = -1;
        while (lo <= hi)
        {
            final int mid = (lo + hi) >>> 1;
            final int position = position(mid);
            if (position <= maxPosition)
            {
                found = position;
                lo = mid + 1;
            }
            else
            {
                hi = mid - 1;
            }
        }
        return found;
    }

    /** Removes the entries whose offset is {@code offset} or more (the log is being truncated there). */
    public void truncateTo(final long offset)
    {
        final int i = search(offset - baseOffset - 1, entries());
        truncateToEntries(i + 1);
    }

    public int relativeOffset(final int i)
    {
        return buffer().getInt(i * ENTRY_SIZE, BIG_ENDIAN);
    }

    public int position(final int i)
    {
        return buffer().getInt(i * ENTRY_SIZE + POSITION_OFFSET, BIG_ENDIAN);
    }

    @Override
    protected long key(final int i)
    {
        return relativeOffset(i);
    }
}
