package io.ferrite.wire.compress;

import io.ferrite.wire.BufferView;
import io.ferrite.wire.record.CorruptRecordException;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;

/** Buffer plumbing the codecs share: ByteBuffer views, direct copies for native codecs, bounded growth. */
final class CodecSupport
{
    final BufferView in = new BufferView();
    final BufferView out = new BufferView();
    private final ExpandableDirectByteBuffer directIn = new ExpandableDirectByteBuffer(0);
    private final ExpandableDirectByteBuffer directOut = new ExpandableDirectByteBuffer(0);

    /** A direct view of the input, copying it off-heap first when it is on the heap (native codecs need direct). */
    ByteBuffer directInput(final DirectBuffer src, final int offset, final int length)
    {
        if (BufferView.isDirect(src))
        {
            return in.of(src, offset, length);
        }
        directIn.checkLimit(length);
        directIn.putBytes(0, src, offset, length);
        return in.of(directIn, 0, length);
    }

    /** An off-heap scratch of at least {@code capacity} bytes for native codecs to write into. */
    ExpandableDirectByteBuffer directScratch(final int capacity)
    {
        directOut.checkLimit(capacity);
        return directOut;
    }

    /** Copies {@code length} bytes written to the scratch to the caller's buffer. */
    void copyOut(final int length, final MutableDirectBuffer dst, final int dstOffset)
    {
        dst.putBytes(dstOffset, directOut, 0, length);
    }

    /**
     * Grows {@code dst} so that at least {@code wanted} bytes fit after {@code position}, keeping the
     * decompressed size within {@code limit} (an absolute offset); returns the room available.
     */
    static int room(final ExpandableDirectByteBuffer dst, final int position, final int wanted, final int limit)
    {
        final int target = (int)Math.min((long)position + Math.max(wanted, 1), limit);
        if (target <= position)
        {
            throw CorruptRecordException.of("decompressed data exceeds the limit of ", limit, " bytes");
        }
        if (dst.capacity() < target)
        {
            dst.checkLimit(target);
        }
        return Math.min(dst.capacity(), limit) - position;
    }

    static int limit(final int dstOffset, final int maxLength)
    {
        return (int)Math.min(Integer.MAX_VALUE - 8L, (long)dstOffset + maxLength);
    }
}
