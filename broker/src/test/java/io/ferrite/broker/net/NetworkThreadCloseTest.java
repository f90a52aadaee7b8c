package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A network thread on its own {@link org.agrona.concurrent.AgentRunner}, as in production: close()
 * lets the response under way be written, then the agent ends itself and closes its connections.
 */
class NetworkThreadCloseTest
{
    @Test
    void closeWritesTheResponseUnderWayThenClosesTheConnections() throws Exception
    {
        final CountDownLatch deferred = new CountDownLatch(1);
        final AtomicBoolean release = new AtomicBoolean();
        final Apis apis = new Apis().register(io.ferrite.wire.message.ApiKeys.FETCH,
            (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                connection.defer(new PendingResponse()
                {
                    @Override
                    public int poll(final Connection c, final int o, final long nowMs)
                    {
                        return release.get() ? o : NOT_READY; // the answer: the response header alone
                    }

                    @Override
                    public long deadlineMs()
                    {
                        return Long.MAX_VALUE;
                    }
                });
                deferred.countDown();
                return RequestHandler.DEFERRED;
            });
        final NetworkThread network = new NetworkThread(0, apis, 1 << 20);
        network.start();
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network});
        acceptor.start();
        try (Socket socket = new Socket(acceptor.address().getAddress(), acceptor.address().getPort()))
        {
            socket.setSoTimeout(10_000);
            final ByteBuffer frame = NetworkLayerTest.fetchV12();
            socket.getOutputStream().write(ByteBuffer.allocate(4 + frame.remaining()).putInt(frame.remaining()).put(frame).array());
            assertTrue(deferred.await(10, TimeUnit.SECONDS), "the request is waiting");
            acceptor.close();

            final Thread closer = new Thread(network::close, "closer");
            closer.start();
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (closer.getState() != Thread.State.TIMED_WAITING && System.nanoTime() < deadline)
            {
                Thread.onSpinWait(); // until close() waits for the thread to finish its drain
            }
            assertEquals(Thread.State.TIMED_WAITING, closer.getState(), "close() waits for the drain");
            release.set(true);
            network.wakeup();

            final DataInputStream in = new DataInputStream(socket.getInputStream());
            final int size = in.readInt();
            assertEquals(7, in.readInt(), "the response under way is written, with its correlation id");
            in.readFully(new byte[size - 4]);
            assertThrows(EOFException.class, in::readInt, "then the connection is closed");
            closer.join(10_000);
            assertFalse(closer.isAlive(), "close() returned");
            assertEquals(0, network.connections());
            assertEquals(0, network.errors().count(), "the agent's end is not an error");
        }
    }
}
