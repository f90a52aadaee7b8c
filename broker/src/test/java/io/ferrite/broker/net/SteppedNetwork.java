package io.ferrite.broker.net;

import org.agrona.concurrent.AgentInvoker;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Network threads and the acceptor stepped by the test's own thread through {@link AgentInvoker}s,
 * over real sockets. Clients are non-blocking channels: whenever a client waits for the
 * broker, the network threads take a pass, so what the broker does between a request and its answer
 * happens on this thread, in order, and an error escaping a pass fails the test at {@link #close}.
 */
final class SteppedNetwork implements AutoCloseable
{
    private static final long DEADLINE_NS = 10_000_000_000L;

    final NetworkThread[] threads;
    private final AgentInvoker[] invokers;
    private final Acceptor acceptor;
    private final AgentInvoker acceptorInvoker;
    private final List<Throwable> escaped = new ArrayList<>();

    SteppedNetwork(final RequestHandler handler, final int count) throws IOException
    {
        threads = new NetworkThread[count];
        invokers = new AgentInvoker[count];
        for (int i = 0; i < count; i++)
        {
            threads[i] = new NetworkThread(i, handler, 1 << 20);
            invokers[i] = new AgentInvoker(escaped::add, null, threads[i]);
            invokers[i].start();
        }
        acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), threads);
        acceptorInvoker = new AgentInvoker(escaped::add, null, acceptor);
        acceptorInvoker.start();
    }

    /** One pass of the acceptor and of every network thread. */
    void step()
    {
        int work = acceptorInvoker.invoke();
        for (final AgentInvoker invoker : invokers)
        {
            work += invoker.invoke();
        }
        if (work == 0)
        {
            Thread.yield(); // the kernel may have what the next pass needs
        }
    }

    SocketChannel connect() throws IOException
    {
        final SocketChannel channel = SocketChannel.open(acceptor.address());
        channel.configureBlocking(false);
        return channel;
    }

    void send(final SocketChannel channel, final ByteBuffer frame) throws IOException
    {
        final ByteBuffer framed = ByteBuffer.allocate(4 + frame.remaining()).putInt(frame.remaining()).put(frame.duplicate());
        write(channel, framed.flip());
    }

    void write(final SocketChannel channel, final ByteBuffer bytes) throws IOException
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (bytes.hasRemaining())
        {
            if (channel.write(bytes) == 0)
            {
                step();
                assertTrue(System.nanoTime() < deadline, "the broker takes the request");
            }
        }
    }

    /** The next response frame (without its size); EOFException if the broker closed the connection. */
    ByteBuffer receive(final SocketChannel channel) throws IOException
    {
        final ByteBuffer size = ByteBuffer.allocate(4);
        fill(channel, size);
        final ByteBuffer response = ByteBuffer.allocate(size.flip().getInt());
        fill(channel, response);
        return response.flip();
    }

    private void fill(final SocketChannel channel, final ByteBuffer into) throws IOException
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (into.hasRemaining())
        {
            final int n = channel.read(into);
            if (n < 0)
            {
                throw new EOFException("closed by the broker");
            }
            if (n == 0)
            {
                step();
                if (System.nanoTime() > deadline)
                {
                    fail("no answer from the broker (and the connection is open)");
                }
            }
        }
    }

    void assertClosedByBroker(final SocketChannel channel)
    {
        try
        {
            final ByteBuffer one = ByteBuffer.allocate(1);
            fill(channel, one);
            fail("the broker answered instead of closing the connection");
        }
        catch (final EOFException closed)
        {
            // closed
        }
        catch (final IOException reset)
        {
            // a reset: closed too
        }
    }

    /** Steps until every network thread has {@code open} connections. */
    void awaitConnections(final int open)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        int n;
        while ((n = connections()) != open)
        {
            step();
            assertTrue(System.nanoTime() < deadline, "connections open: " + n + ", expected " + open);
        }
    }

    int connections()
    {
        int n = 0;
        for (final NetworkThread t : threads)
        {
            n += t.connections();
        }
        return n;
    }

    /** The errors that escaped a pass so far (handed to the test, which expected them; not reported at close). */
    List<Throwable> takeEscaped()
    {
        final List<Throwable> taken = List.copyOf(escaped);
        escaped.clear();
        return taken;
    }

    @Override
    public void close() throws IOException
    {
        acceptorInvoker.close(); // onClose: the listener
        for (final AgentInvoker invoker : invokers)
        {
            invoker.close(); // onClose: the connections and the selector
        }
        assertEquals(List.of(), escaped, "errors that escaped a pass");
    }
}
