package io.ferrite.broker.net;

import io.ferrite.testing.Await;
import org.agrona.concurrent.AgentInvoker;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The acceptor as an Agrona agent: stepped with an AgentInvoker, and on its own runner as in production. */
class AcceptorTest
{
    private static final RequestHandler NONE = (api, version, in, offset, limit, out, outOffset, connection) -> outOffset;

    /**
     * A connection waits in the listener's backlog until a pass of the acceptor takes it; each pass
     * deals what it takes round-robin over the network threads, and the invoker's close closes the listener.
     */
    @Test
    void aPassDealsThePendingConnectionsRoundRobinAndTheOwnerClosesTheListener() throws Exception
    {
        final List<Throwable> escaped = new ArrayList<>();
        final NetworkThread[] threads = {new NetworkThread(0, NONE, 1 << 20), new NetworkThread(1, NONE, 1 << 20)};
        final AgentInvoker[] network = {new AgentInvoker(escaped::add, null, threads[0]), new AgentInvoker(escaped::add, null, threads[1])};
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), threads);
        final AgentInvoker invoker = new AgentInvoker(escaped::add, null, acceptor);
        final InetSocketAddress address = acceptor.address();
        final List<SocketChannel> clients = new ArrayList<>();
        try
        {
            for (final AgentInvoker n : network)
            {
                n.start();
            }
            invoker.start();
            for (int i = 0; i < 3; i++)
            {
                clients.add(SocketChannel.open(address)); // connected: in the listener's backlog
            }
            network[0].invoke();
            network[1].invoke();
            assertEquals(0, threads[0].connections() + threads[1].connections(), "handed over before the acceptor's pass");

            final int[] accepted = {0};
            Await.await(() -> (accepted[0] += invoker.invoke()) == 3, Duration.ofSeconds(10), "the acceptor took the 3 connections");
            network[0].invoke();
            network[1].invoke();
            assertEquals(2, threads[0].connections(), "the first and the third");
            assertEquals(1, threads[1].connections(), "the second");

            invoker.close();
            assertThrows(ConnectException.class, () -> new Socket(address.getAddress(), address.getPort()).close(),
                "the listener is closed once its owner stopped");
        }
        finally
        {
            for (final SocketChannel c : clients)
            {
                c.close();
            }
            invoker.close();
            for (final AgentInvoker n : network)
            {
                n.close();
            }
        }
        assertEquals(List.of(), escaped, "errors that escaped a pass");
        assertEquals(0, acceptor.failures());
    }

    /**
     * Before, the acceptor blocked in accept: an interrupt of its thread closed the listener
     * (ClosedByInterruptException) and ended the thread. Now it selects while idle and clears the
     * interrupt: it goes on accepting.
     */
    @Test
    void aStrayInterruptStopsNeitherTheAcceptorNorItsListener() throws Exception
    {
        final NetworkThread network = new NetworkThread(0, NONE, 1 << 20);
        network.start();
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network});
        final InetSocketAddress address = acceptor.address();
        final List<Socket> clients = new ArrayList<>();
        acceptor.start();
        try
        {
            clients.add(connectAndAwait(address, network, 1));
            Thread thread = null;
            for (final Thread t : Thread.getAllStackTraces().keySet())
            {
                if (t.getName().equals("ferrite-acceptor-PLAINTEXT"))
                {
                    thread = t;
                }
            }
            assertNotNull(thread, "the acceptor's thread, by its role name");
            final Thread acceptorThread = thread;
            acceptorThread.interrupt();
            Await.await(() -> acceptor.failures() > 0 || !acceptorThread.isAlive(), Duration.ofSeconds(10),
                "the interrupt seen: counted, or the thread ended");
            assertTrue(acceptorThread.isAlive(), "the interrupt ended the acceptor's thread");
            clients.add(connectAndAwait(address, network, 2)); // a connection made after the interrupt is still taken

            acceptor.close();
            Await.await(() -> !acceptorThread.isAlive(), Duration.ofSeconds(10), "the acceptor's thread ended on close");
            assertThrows(ConnectException.class, () -> new Socket(address.getAddress(), address.getPort()).close(),
                "the listener is closed");
        }
        finally
        {
            for (final Socket c : clients)
            {
                c.close();
            }
            acceptor.close();
            network.close();
        }
    }

    private static Socket connectAndAwait(final InetSocketAddress address, final NetworkThread network, final int connections)
        throws IOException
    {
        final Socket socket = new Socket(address.getAddress(), address.getPort());
        Await.await(() -> network.connections() == connections, Duration.ofSeconds(10), "the connection handed to the network thread");
        return socket;
    }
}
