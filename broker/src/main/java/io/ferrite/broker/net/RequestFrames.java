package io.ferrite.broker.net;

import io.ferrite.wire.BufferView;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * A {@link Connection}'s input: what its socket (or its TLS) brought, read into the connection's {@code in} buffer and
 * cut into size-prefixed request frames. The buffer grows only as bytes arrive (a client declaring a huge frame and
 * sending little costs little) and keeps its size for the next requests; nothing is allocated per request. It starts
 * small ({@link #SMALL_READ}), so an idle connection costs little (Kafka allocates a request's buffer only once the
 * frame's size is read). Network thread only.
 */
final class RequestFrames
{
    /** Bytes read per system call at most: the input grows by this much at a time. */
    static final int READ_CHUNK = 64 * 1024;
    /** Room for a frame's size and a small request: what a connection that sent nothing holds. */
    static final int SMALL_READ = 256;

    private final ExpandableDirectByteBuffer in;
    private final BufferView view = new BufferView();
    private int end;
    private int frameStart;
    /** The last read filled all the room it had: the client sends faster than small reads take it. */
    private boolean readFilled;

    RequestFrames(final ExpandableDirectByteBuffer in)
    {
        this.in = in;
    }

    /** Reads what {@code channel} (through {@code tls} when not null) has; returns -1 at end of stream. */
    int read(final SocketChannel channel, final TlsChannel tls) throws IOException
    {
        final int want = readRoom();
        if (in.capacity() - end < want)
        {
            grow(end + want);
        }
        final int room = in.capacity() - end;
        final ByteBuffer into = view.of(in, end, room);
        final int n = tls == null ? channel.read(into) : tls.read(into);
        if (n > 0)
        {
            end += n;
        }
        readFilled = n == room;
        return n;
    }

    /** The input grown to {@code limit} bytes; direct memory used up costs only this connection (tls review M4). */
    private void grow(final int limit) throws DirectMemoryShortage
    {
        try
        {
            in.checkLimit(limit);
        }
        catch (final OutOfMemoryError ex) // Bits.reserveMemory's: the input is direct
        {
            throw DirectMemoryShortage.orRethrow(ex);
        }
    }

    /**
     * The room the next read needs: the rest of the current frame when its size is known (at most
     * {@link #READ_CHUNK}, so a declared size costs nothing until its bytes come), half a chunk for
     * a client that filled the last read (pipelined requests: one system call takes many), else a
     * small request's worth.
     */
    private int readRoom()
    {
        if (readFilled)
        {
            return READ_CHUNK / 2;
        }
        final int pending = end - frameStart;
        if (pending >= 4)
        {
            final long frameLeft = 4L + in.getInt(frameStart, BIG_ENDIAN) - pending;
            return (int)Math.max(SMALL_READ, Math.min(READ_CHUNK, frameLeft));
        }
        return SMALL_READ;
    }

    /**
     * The size of the complete frame at the read position, or -1 while it is incomplete.
     *
     * @param unauthenticated the connection has still to authenticate (for the message)
     * @throws FrameException for a negative size or one over {@code maxRequestBytes}
     */
    int completeFrame(final int maxRequestBytes, final boolean unauthenticated)
    {
        if (end - frameStart < 4)
        {
            return -1;
        }
        final int size = in.getInt(frameStart, BIG_ENDIAN);
        if (size < 0 || size > maxRequestBytes)
        {
            throw new FrameException(NetMessages.frameTooLarge(size, maxRequestBytes, unauthenticated));
        }
        return end - frameStart - 4 >= size ? size : -1;
    }

    /** Where the current frame's bytes (after its size) start in the input. */
    int frameOffset()
    {
        return frameStart + 4;
    }

    /** Moves past the current frame; compacts the input when no request holds it. */
    void consumeFrame(final int size)
    {
        frameStart += 4 + size;
        if (frameStart == end)
        {
            frameStart = 0;
            end = 0;
        }
    }

    /** Moves a partial frame to the start of the input (only between requests). */
    void compact()
    {
        if (frameStart > 0)
        {
            in.putBytes(0, in, frameStart, end - frameStart);
            end -= frameStart;
            frameStart = 0;
        }
    }
}
