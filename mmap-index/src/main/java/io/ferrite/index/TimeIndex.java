package io.ferrite.index;

import java.io.IOException;
import java.nio.file.Path;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * The time index of a segment ({@code .timeindex}): entries of
 * <pre>
 *   timestamp: int64         the largest timestamp in the segment up to this point
 *   relative offset: int32   the last offset of the batch holding that timestamp, minus the base offset
 * </pre>
 * with strictly increasing timestamps, big-endian, as Kafka writes them. {@link #lookup} narrows a
 * search by timestamp to an offset from which to scan the log.
 */
public final class TimeIndex extends MappedIndex
{
    public static final int ENTRY_SIZE = 12;
    private static final int OFFSET_OFFSET = 8;
    public static final long NO_TIMESTAMP = -1L;

    private long lastTimestamp;
    private long lastOffset;

    public TimeIndex(final Path file, final long baseOffset, final int maxIndexSize, final boolean writable) throws IOException
    {
        super(file, baseOffset, ENTRY_SIZE, maxIndexSize, writable);
        onTruncated();
    }

    /**
     * Checks what Kafka checks (whole entries, last timestamp not below the first, last offset not
     * below the base) and that timestamps increase and offsets do not decrease.
     *
     * @throws CorruptIndexException describing the first problem
     */
    public void sanityCheck()
    {
        final int n = entries();
        if (n == 0)
        {
            return;
        }
        if (lastTimestamp < timestamp(0))
        {
            throw new CorruptIndexException("time index " + file + " last timestamp " + lastTimestamp + " is below its first");
        }
        if (lastOffset < baseOffset)
        {
            throw new CorruptIndexException("time index " + file + " last offset " + lastOffset + " is below its base " + baseOffset);
        }
        for (int i = 1; i < n; i++)
        {
            if (timestamp(i) <= timestamp(i - 1) || relativeOffset(i) < relativeOffset(i - 1))
            {
                throw new CorruptIndexException("time index " + file + " entry " + i + " is out of order");
            }
        }
    }

    @Override
    protected void onTruncated()
    {
        final int n = entries();
        lastTimestamp = n == 0 ? NO_TIMESTAMP : timestamp(n - 1);
        lastOffset = n == 0 ? baseOffset : baseOffset + relativeOffset(n - 1);
    }

    /** The largest timestamp indexed, or {@link #NO_TIMESTAMP}. */
    public long lastTimestamp()
    {
        return lastTimestamp;
    }

    public long lastOffset()
    {
        return lastOffset;
    }

    /**
     * Adds an entry when {@code timestamp} is larger than the last one (single writer), as Kafka's
     * {@code maybeAppend}. {@code evenIfFull} lets the final entry of a segment in beyond the
     * preallocated size (the index grows by one entry) when the segment stops being active.
     */
    public void maybeAppend(final long timestamp, final long offset, final boolean evenIfFull)
    {
        requireWritable();
        final int n = entries();
        if (n > 0 && timestamp <= lastTimestamp)
        {
            return;
        }
        if (n > 0 && offset < lastOffset)
        {
            throw argumentError("offset ", offset, " is below the last indexed ", lastOffset, " in ", file);
        }
        if (offset - baseOffset > Integer.MAX_VALUE || offset < baseOffset)
        {
            throw argumentError("offset ", offset, " out of range for base ", baseOffset, "", "");
        }
        if (n >= maxEntries())
        {
            if (!evenIfFull)
            {
                throw stateError("time index ", file, " is full");
            }
            return; // the segment is closing and its index is full: the last entry stays as it is
        }
        final int at = n * ENTRY_SIZE;
        buffer().putLong(at, timestamp, BIG_ENDIAN);
        buffer().putInt(at + OFFSET_OFFSET, (int)(offset - baseOffset), BIG_ENDIAN);
        lastTimestamp = timestamp;
        lastOffset = offset;
        publishEntries(n + 1);
    }

    /**
     * The offset of the last entry whose timestamp is at most {@code timestamp}, or the base offset
     * when there is none: the log holds no timestamp of {@code timestamp} or more before it.
     */
    public long lookup(final long timestamp)
    {
        final int i = search(timestamp, entries());
        return i < 0 ? baseOffset : baseOffset + relativeOffset(i);
    }

    /** Removes the entries for offsets of {@code offset} or more (the log is being truncated there). */
    public void truncateTo(final long offset)
    {
        int n = entries();
        while (n > 0 && baseOffset + relativeOffset(n - 1) >= offset)
        {
            n--;
        }
        truncateToEntries(n);
    }

    public long timestamp(final int i)
    {
        return buffer().getLong(i * ENTRY_SIZE, BIG_ENDIAN);
    }

    public int relativeOffset(final int i)
    {
        return buffer().getInt(i * ENTRY_SIZE + OFFSET_OFFSET, BIG_ENDIAN);
    }

    @Override
    protected long key(final int i)
    {
        return timestamp(i);
    }
}
