package io.ferrite.wire;

import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;

/**
 * A reusable {@link ByteBuffer} view of a region of an Agrona buffer, for the JDK and native
 * libraries that take ByteBuffers (CRC32C, Deflater, LZ4, Snappy, Zstd). The view is made once per
 * underlying array or ByteBuffer and then only repositioned, so steady use allocates nothing.
 * Not thread-safe.
 */
public final class BufferView
{
    private Object source;
    private ByteBuffer view;

    /**
     * A view whose position and limit bound {@code [offset, offset + length)} of {@code buffer}.
     *
     * @throws IllegalArgumentException when the buffer wraps a raw address rather than an array or ByteBuffer
     */
    public ByteBuffer of(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] array = buffer.byteArray();
        final Object backing = array != null ? array : buffer.byteBuffer();
        if (backing == null)
        {
            throw new IllegalArgumentException("buffer wraps a raw address; no ByteBuffer view is possible");
        }
        if (backing != source)
        {
            source = backing;
            view = array != null ? ByteBuffer.wrap(array) : ((ByteBuffer)backing).duplicate();
        }
        final int at = buffer.wrapAdjustment() + offset;
        view.limit(view.capacity()).position(at).limit(at + length);
        return view;
    }

    /** True when {@link #of} would give a direct (off-heap) view of {@code buffer}. */
    public static boolean isDirect(final DirectBuffer buffer)
    {
        return buffer.byteArray() == null && buffer.byteBuffer() != null && buffer.byteBuffer().isDirect();
    }
}
