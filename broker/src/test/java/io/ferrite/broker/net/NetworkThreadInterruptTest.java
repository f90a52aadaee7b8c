package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import io.ferrite.testing.Await;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Agrona's AgentRunner ends its run when its thread is found interrupted after an idle pass; a
 * network thread ended so would leave every connection the acceptor still deals it unanswered.
 */
class NetworkThreadInterruptTest
{
    @Test
    void aStrayInterruptCostsNotTheThreadNorItsConnections() throws Exception
    {
        final Apis apis = new Apis().register(io.ferrite.wire.message.ApiKeys.FETCH,
            (api, version, in, offset, limit, out, outOffset, connection) -> outOffset);
        final NetworkThread network = new NetworkThread(0, apis, 1 << 20);
        network.start();
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network});
        acceptor.start();
        try
        {
            exchange(acceptor);
            Thread thread = null;
            for (final Thread t : Thread.getAllStackTraces().keySet())
            {
                if (t.getName().equals("ferrite-network-0"))
                {
                    thread = t;
                }
            }
            assertNotNull(thread, "the network thread, by its role name");
            final Thread networkThread = thread;
            networkThread.interrupt();
            Await.await(() -> network.errors().count() > 0 || !networkThread.isAlive(), Duration.ofSeconds(10),
                "the interrupt seen: counted, or the thread ended");
            assertTrue(networkThread.isAlive(), "the interrupt ended the network thread");
            exchange(acceptor); // a connection made after the interrupt is still answered
        }
        finally
        {
            acceptor.close();
            network.close();
        }
    }

    private static void exchange(final Acceptor acceptor) throws Exception
    {
        try (Socket socket = new Socket(acceptor.address().getAddress(), acceptor.address().getPort()))
        {
            socket.setSoTimeout(10_000);
            final ByteBuffer frame = NetworkLayerTest.fetchV12();
            socket.getOutputStream().write(ByteBuffer.allocate(4 + frame.remaining()).putInt(frame.remaining()).put(frame).array());
            final DataInputStream in = new DataInputStream(socket.getInputStream());
            in.readInt();
            assertEquals(7, in.readInt(), "answered, with its correlation id");
        }
    }
}
