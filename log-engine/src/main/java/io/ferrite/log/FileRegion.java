package io.ferrite.log;

import org.agrona.DirectBuffer;

import java.nio.channels.FileChannel;

/**
 * A read's answer: {@code length} bytes of whole batches at {@code position} of a segment's
 * channel, ready for {@code FileChannel.transferTo}. Reused by its reader (no allocation per read).
 * The channel stays open for at least {@code file.delete.delay.ms} after its segment is deleted;
 * a clean close of the log shuts it, and a transfer from it then fails with
 * {@code ClosedChannelException} (the bytes are the channel's, not a mapping's: nothing can crash).
 */
public final class FileRegion
{
    public FileChannel channel;
    /**
     * The segment's mapping, for a reader that copies a small region at once instead of sending it
     * with {@code transferTo} (bytes {@code position} to {@code position + length}). Read it right after
     * the read that set it, on the reading thread: the mapping stays valid while it is referenced
     * (a close leaves it to the GC), but a deleted segment is unmapped after {@code file.delete.delay.ms}.
     */
    public DirectBuffer buffer;
    public long position;
    public int length;
    /** The base offset of the first batch in the region (at or below the requested offset), or -1. */
    public long firstBatchOffset;
    /**
     * The offset after the last batch in the region: for a region that is not empty, a read_committed
     * fetch's upper bound for {@link LogTransactions#collectAbortedTransactions}.
     */
    public long nextOffset;

    void empty(final long next)
    {
        channel = null;
        buffer = null;
        position = 0;
        length = 0;
        firstBatchOffset = -1;
        nextOffset = next;
    }

    public boolean isEmpty()
    {
        return length == 0;
    }

    @Override
    public String toString()
    {
        return "FileRegion(position " + position + ", length " + length + ", first batch " + firstBatchOffset + ")";
    }
}
