package io.ferrite.log;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

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
    private static final byte[] NONE = new byte[0];

    public FileChannel channel;
    /** The region's bytes in the segment's mapping: see {@link #bytes()}. */
    final UnsafeBuffer bytes = new UnsafeBuffer(NONE);
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
        bytes.wrap(NONE);
        position = 0;
        length = 0;
        firstBatchOffset = -1;
        nextOffset = next;
    }

    /**
     * The region's bytes, exactly {@code length} of them from index 0 (the segment's mapping at {@code position}), for
     * a reader that copies a small region at once instead of sending it with {@code transferTo}. To read only: the
     * view is typed {@link DirectBuffer} and bounded to the region, so neither the bytes above the segment's published
     * size nor the rest of the log are in reach (it is the log's own memory: a cast to write into it corrupts the log).
     * Read it right after the read that set it, on the reading thread: the mapping stays valid while it is referenced
     * (a close leaves it to the GC), but a deleted segment is unmapped {@code file.delete.delay.ms} after its
     * deletion — so with {@code file.delete.delay.ms=0} a deletion between the read and the copy can unmap it under
     * the copy (an {@code IndexOutOfBoundsException}, or with Agrona's bounds checks off a crash of the JVM); the
     * delay's default (60 s) leaves ample room. A read error of a mapped page (EIO) surfaces as
     * {@link InternalError} from the copy.
     */
    public DirectBuffer bytes()
    {
        return bytes;
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
