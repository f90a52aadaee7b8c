package io.ferrite.index;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;

/**
 * The mapping of a {@link MappedIndex}'s entries, made on first use and given back on demand: the buffer every
 * entry is read and written through, and the {@link MappedByteBuffer} under it that a flush forces.
 *
 * <p>Its {@link #map}, {@link #mapEmpty} and {@link #unmap} run under the owning index's monitor (the index
 * decides whether and how to map: its deletion, closing and size); {@link #ready}, {@link #buffer} and
 * {@link #mapped} are read without it.
 */
final class IndexMapping
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(0, 0);
    /** {@link #buffer} wraps the mapping (release after the wrap; readers acquire it before reading). */
    private volatile boolean ready;
    /** Written under the index's monitor; read by its flush without it. */
    private volatile MappedByteBuffer mapped;

    /** Whether {@link #buffer} may be read: mapped, or an index of no bytes. One volatile read. */
    boolean ready()
    {
        return ready;
    }

    /** The entries' bytes: only after {@link #ready} answered true. */
    UnsafeBuffer buffer()
    {
        return buffer;
    }

    /** The mapping a flush forces, or null when there is none (not mapped yet, given back, or no bytes). */
    MappedByteBuffer mapped()
    {
        return mapped;
    }

    /** Maps the first {@code bytes} of {@code channel}, for writes or read-only, and makes the buffer ready. */
    void map(final FileChannel channel, final boolean forWrites, final long bytes) throws IOException
    {
        mapped = channel.map(forWrites ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY, 0, bytes);
        buffer.wrap(mapped);
        ready = true;
    }

    /** An index of no bytes: nothing to map, and nothing is read through the buffer. */
    void mapEmpty()
    {
        ready = true;
    }

    /** Gives the mapping back now; the next use of an entry maps it again. */
    void unmap()
    {
        ready = false;
        if (mapped != null)
        {
            final MappedByteBuffer m = mapped;
            mapped = null;
            buffer.wrap(0, 0);
            IoUtil.unmap(m);
        }
    }
}
