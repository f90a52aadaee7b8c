package io.ferrite.broker.net;

import org.agrona.BufferUtil;
import org.agrona.ExpandableDirectByteBuffer;

import java.nio.ByteBuffer;

/**
 * The direct buffers a connection makes as it needs them and frees when it is done with them (TLS's): made through
 * here so that direct memory used up costs only that connection ({@link DirectMemoryShortage}), counted against its
 * network thread's {@link DirectBudget} (refused without asking the JDK when it has no room), freed at once rather
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

    /** A direct buffer of {@code size} bytes, taken from {@code budget} (given back by {@link #free}). */
    static ByteBuffer allocate(final DirectBudget budget, final int size) throws DirectMemoryShortage
    {
        if (!budget.take(size))
        {
            throw budget.refusal(size); // before the JDK's refusal, which would cost this thread its wait and a full GC
        }
        try
        {
            return ByteBuffer.allocateDirect(size);
        }
        catch (final OutOfMemoryError ex) // Bits.reserveMemory's "Cannot reserve N bytes of direct buffer memory"
        {
            budget.giveBack(size);
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
    static ByteBuffer grow(final DirectBudget budget, final ByteBuffer buffer, final int size) throws DirectMemoryShortage
    {
        final ByteBuffer bigger = allocate(budget, Math.max(size, buffer.capacity() * 2));
        buffer.flip();
        bigger.put(buffer);
        free(budget, buffer);
        return bigger;
    }

    /**
     * Frees {@code buffer}'s memory now if it is direct (nothing may use it after this), giving it back to
     * {@code budget}; returns {@link #NONE} for its place.
     */
    static ByteBuffer free(final DirectBudget budget, final ByteBuffer buffer)
    {
        if (buffer.isDirect())
        {
            budget.giveBack(buffer.capacity());
            BufferUtil.free(buffer);
        }
        return NONE;
    }
}
