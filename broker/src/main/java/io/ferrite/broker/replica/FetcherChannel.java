package io.ferrite.broker.replica;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * A {@link ReplicaFetcher}'s blocking connection to its leader: one request out, its size-prefixed
 * answer in, each in a reused direct buffer (the answer's grows, rarely: a fetch answer is at most
 * {@code replica.fetch.response.max.bytes} but for one first batch larger than that, as Kafka's KIP-74
 * allows). Fetcher thread only.
 */
final class FetcherChannel implements AutoCloseable
{
    /** The frame's size prefix. */
    static final int SIZE_LENGTH = 4;

    private final InetSocketAddress leader;
    private final int connectTimeoutMs;
    private volatile SocketChannel channel;
    private ByteBuffer in;
    final UnsafeBuffer inBuffer = new UnsafeBuffer(0, 0);

    FetcherChannel(final InetSocketAddress leader, final int connectTimeoutMs, final int initialResponseBytes)
    {
        this.leader = leader;
        this.connectTimeoutMs = connectTimeoutMs;
        this.in = ByteBuffer.allocateDirect(initialResponseBytes);
        inBuffer.wrap(in);
    }

    boolean connected()
    {
        return channel != null;
    }

    void connect() throws IOException
    {
        final SocketChannel c = SocketChannel.open();
        try
        {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            c.socket().connect(leader, connectTimeoutMs);
        }
        catch (final IOException | RuntimeException ex)
        {
            c.close();
            throw ex;
        }
        channel = c;
    }

    /** Writes {@code out}'s remaining bytes (a whole frame). */
    void send(final ByteBuffer out) throws IOException
    {
        while (out.hasRemaining())
        {
            channel.write(out);
        }
    }

    /** Reads one answer; returns its length: its bytes are {@link #inBuffer} [0, length), after the size prefix. */
    int receive() throws IOException
    {
        in.clear().limit(SIZE_LENGTH);
        readFully();
        final int size = in.getInt(0);
        if (size < 0)
        {
            throw new IOException("a fetch answer of " + size + " bytes from " + leader);
        }
        if (size > in.capacity())
        {
            in = ByteBuffer.allocateDirect(size);
            inBuffer.wrap(in);
        }
        in.clear().limit(size);
        readFully();
        return size;
    }

    private void readFully() throws IOException
    {
        while (in.hasRemaining())
        {
            if (channel.read(in) < 0)
            {
                throw new EOFException("the leader " + leader + " closed the connection");
            }
        }
    }

    /** Closes the connection (any thread: a read blocked in it ends with an exception). */
    @Override
    public void close()
    {
        final SocketChannel c = channel;
        channel = null;
        if (c != null)
        {
            try
            {
                c.close();
            }
            catch (final IOException ignored)
            {
                // closing: nothing more is read from it
            }
        }
    }

    @Override
    public String toString()
    {
        return leader.toString();
    }
}
