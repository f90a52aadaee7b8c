package io.ferrite.broker.replica;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A {@link ReplicaFetcher}'s connection to its leader (and the transaction coordinator's to a partition's leader, for
 * its markers: {@code io.ferrite.broker.txn.RemoteMarkers}): one request out, its size-prefixed answer in, each
 * in a reused direct buffer (the answer's grows, rarely: a fetch answer is at most
 * {@code replica.fetch.response.max.bytes} but for one first batch larger than that, as Kafka's KIP-74
 * allows). Its owner's thread only, but for {@link #close}.
 *
 * <p>Non-blocking under a selector of its own, so that nothing waits without a bound: a connect gives up
 * after {@code socket.connection.setup.timeout.ms}, a request whose answer has not fully come within
 * {@code replica.socket.timeout.ms} ends in a {@link SocketTimeoutException} (Kafka's request timeout for
 * the replica fetcher), and {@link #close} from another thread ends a connect or a wait at once, even to
 * a leader that is stopped (SIGSTOP) and answers nothing. In steady state nothing is allocated: the key
 * is registered once per connection and selected through a reused action, never the selected-key set.
 */
public final class FetcherChannel implements AutoCloseable
{
    /** The frame's size prefix. */
    public static final int SIZE_LENGTH = 4;
    private static final Consumer<SelectionKey> NOTHING = key -> { };
    private static final int CONNECTING = 0;
    private static final int SENDING = 1;
    private static final int ANSWERING = 2;

    private final InetSocketAddress leader;
    private final int connectTimeoutMs;
    private final int requestTimeoutMs;
    private final int receiveBufferBytes;
    private final Selector selector;
    private volatile boolean closed;
    private volatile SocketChannel channel; // read by close, on another thread
    private SelectionKey key;
    private ByteBuffer in;
    public final UnsafeBuffer inBuffer = new UnsafeBuffer(0, 0);
    /** When the request in flight times out ({@link System#nanoTime}). */
    private long deadlineNs;
    /** Connections made (tests: a connection re-made after a timeout counts again). */
    private volatile long connects;

    public FetcherChannel(final InetSocketAddress leader, final FetcherSettings settings, final int initialResponseBytes)
        throws IOException
    {
        this.leader = leader;
        this.connectTimeoutMs = settings.connectTimeoutMs();
        this.requestTimeoutMs = settings.socketTimeoutMs();
        this.receiveBufferBytes = settings.receiveBufferBytes();
        this.selector = Selector.open();
        this.in = ByteBuffer.allocateDirect(initialResponseBytes);
        inBuffer.wrap(in);
    }

    public boolean connected()
    {
        return channel != null;
    }

    long connects()
    {
        return connects;
    }

    /** Connects, within {@code socket.connection.setup.timeout.ms}; a {@link #close} meanwhile ends it. */
    public void connect() throws IOException
    {
        final SocketChannel c = SocketChannel.open();
        try
        {
            c.configureBlocking(false);
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            if (receiveBufferBytes > 0)
            {
                c.setOption(StandardSocketOptions.SO_RCVBUF, receiveBufferBytes);
            }
            channel = c;
            key = c.register(selector, SelectionKey.OP_CONNECT);
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMs);
            if (!c.connect(leader))
            {
                while (!c.finishConnect())
                {
                    await(deadline, CONNECTING);
                }
            }
            key.interestOps(SelectionKey.OP_READ);
            connects++;
        }
        catch (final IOException | RuntimeException ex)
        {
            disconnect();
            throw ex;
        }
    }

    /** Writes {@code out}'s remaining bytes (a whole frame); the request's timeout starts here. */
    public void send(final ByteBuffer out) throws IOException
    {
        deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(requestTimeoutMs);
        while (out.hasRemaining())
        {
            if (channel.write(out) == 0)
            {
                key.interestOps(SelectionKey.OP_WRITE); // the socket's buffer is full: rare, a request is small
                await(deadlineNs, SENDING);
                key.interestOps(SelectionKey.OP_READ);
            }
        }
    }

    /** Reads one answer; returns its length: its bytes are {@link #inBuffer} [0, length), after the size prefix. */
    public int receive() throws IOException
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
            final int n = channel.read(in);
            if (n < 0)
            {
                throw new EOFException("the leader " + leader + " closed the connection");
            }
            if (n == 0)
            {
                await(deadlineNs, ANSWERING);
            }
        }
    }

    /** The message of a timeout: which bound, and from when it counts (a request's: from its send, progress or not). */
    private String timedOut(final int phase)
    {
        return switch (phase)
        {
            case CONNECTING -> "connect to " + leader + " not completed within socket.connection.setup.timeout.ms ("
                + connectTimeoutMs + " ms)";
            case SENDING -> "request to " + leader + " not fully sent within replica.socket.timeout.ms (" + requestTimeoutMs
                + " ms)";
            default -> "no complete answer from " + leader + " within replica.socket.timeout.ms (" + requestTimeoutMs
                + " ms) of the request";
        };
    }

    /** Waits for the key's readiness until {@code deadline}; a {@link #close} ends the wait with an exception. */
    private void await(final long deadline, final int phase) throws IOException
    {
        if (closed)
        {
            throw new IOException("the connection to " + leader + " was closed");
        }
        final long leftNs = deadline - System.nanoTime();
        if (leftNs <= 0)
        {
            throw new SocketTimeoutException(timedOut(phase));
        }
        try
        {
            selector.select(NOTHING, Math.max(1, TimeUnit.NANOSECONDS.toMillis(leftNs)));
        }
        catch (final ClosedSelectorException ex)
        {
            throw new IOException("the connection to " + leader + " was closed");
        }
        if (closed)
        {
            throw new IOException("the connection to " + leader + " was closed");
        }
    }

    /** Drops the connection, keeping the selector for the next one (fetcher thread). */
    public void disconnect()
    {
        final SocketChannel c = channel;
        channel = null;
        key = null;
        if (c != null)
        {
            closeQuietly(c);
            if (!closed)
            {
                try
                {
                    selector.selectNow(); // deregisters the cancelled key: the socket's descriptor is released now
                }
                catch (final IOException | ClosedSelectorException ignored)
                {
                    // closing meanwhile: the selector goes with it
                }
            }
        }
    }

    /**
     * Closes it for good (any thread): a connect or a wait for an answer in progress ends at once with an
     * exception, and nothing connects again.
     */
    @Override
    public void close()
    {
        closed = true;
        selector.wakeup();
        closeQuietly(selector); // waits only for a select in progress to return, which the wakeup makes it do
        final SocketChannel c = channel;
        if (c != null)
        {
            closeQuietly(c);
        }
    }

    private static void closeQuietly(final AutoCloseable c)
    {
        try
        {
            c.close();
        }
        catch (final Exception ignored)
        {
            // closing: nothing more is read from it
        }
    }

    @Override
    public String toString()
    {
        return leader.toString();
    }
}
