package io.ferrite.broker.net;

import org.agrona.BufferUtil;
import org.agrona.ExpandableDirectByteBuffer;

import java.nio.ByteBuffer;

/**
 * The direct buffers a connection makes as it needs them and frees when it is done with them (TLS's): made through
 * here so that direct memory used up costs only that connection ({@link DirectMemoryShortage}), freed at once rather
 * than when a collection finds them.
 */
final class DirectBuffers
{
    /**
     * A buffer not made yet (or given back): no room, nothing in it. Shared by every connection and thread: each
     * operation on a buffer of capacity 0 (flip, compact, clear) leaves it as it was, so it is never changed.
     */
    static final ByteBuffer NONE = ByteBuffer.allocate(0);

    private DirectBuffers()
    {
    }

    /** A direct buffer of {@code size} bytes. */
    static ByteBuffer allocate(final int size) throws DirectMemoryShortage
    {
        try
        {
            return ByteBuffer.allocateDirect(size);
        }
        catch (final OutOfMemoryError ex) // Bits.reserveMemory's "Cannot reserve N bytes of direct buffer memory"
        {
            throw DirectMemoryShortage.orRethrow(ex);
        }
    }

    /** A growable direct buffer of {@code size} bytes, or null if direct memory is used up (a heap OutOfMemoryError goes on). */
    static ExpandableDirectByteBuffer expandableOrNull(final int size)
    {
        try
        {
            return new ExpandableDirectByteBuffer(size);
        }
        catch (final OutOfMemoryError ex)
        {
            DirectMemoryShortage.orRethrow(ex);
            return null;
        }
    }

    /** A buffer with {@code buffer}'s content (write mode) and room for at least {@code size}; {@code buffer} is freed. */
    static ByteBuffer grow(final ByteBuffer buffer, final int size) throws DirectMemoryShortage
    {
        final ByteBuffer bigger = allocate(Math.max(size, buffer.capacity() * 2));
        buffer.flip();
        bigger.put(buffer);
        free(buffer);
        return bigger;
    }

    /** Frees {@code buffer}'s memory now if it is direct (nothing may use it after this); returns {@link #NONE} for its place. */
    static ByteBuffer free(final ByteBuffer buffer)
    {
        if (buffer.isDirect())
        {
            BufferUtil.free(buffer);
        }
        return NONE;
    }
}
