package io.ferrite.client;

import io.ferrite.testing.Await;
import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.reflect.Field;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An answer already in the socket when the client's thread comes back later than {@code request.timeout.ms} is read
 * and used, not thrown away with a REQUEST_TIMED_OUT close: kafka-clients' {@code NetworkClient.poll} handles the
 * received answers before it times out requests. The answer (to the connection's ApiVersions) is passed by hand from a
 * Ferrite broker through a socket the test holds, so the test knows it is in the client's socket buffer; the client's
 * lateness is its {@code nowNs}, past the request's deadline.
 */
class NodeConnectionLateReadTest
{
    @TempDir
    Path dir;

    @Test
    void anAnswerReceivedBeforeTheLatePollIsReadNotTimedOut() throws Exception
    {
        final short[] failure = {0};
        final ResponseListener listener = new ResponseListener()
        {
            @Override
            public void onResponse(final NodeConnection connection, final short apiKey, final short version,
                final Object context, final DirectBuffer buffer, final int offset, final int limit)
            {
            }

            @Override
            public void onFailure(final NodeConnection connection, final short apiKey, final Object context,
                final short errorCode)
            {
                failure[0] = errorCode;
            }

            @Override
            public void onWritten(final NodeConnection connection, final Object context)
            {
            }

            @Override
            public void onReady(final NodeConnection connection)
            {
            }
        };
        final long timeoutMs = 1_000;
        try (FerriteFixture ferrite = new FerriteFixture(dir);
            ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            final String[] hostPort = ferrite.bootstrap().split(":");
            final NodeConnection connection = new NodeConnection(1, server.getInetAddress().getHostAddress(),
                server.getLocalPort(), listener, new ProducerConfig().requestTimeoutMs((int)timeoutMs).transport());
            connection.connect(System.nanoTime());
            try (Socket client = server.accept(); Socket broker = new Socket(hostPort[0], Integer.parseInt(hostPort[1])))
            {
                Await.await(() ->
                {
                    connection.poll(System.nanoTime());
                    return connection.state() == NodeConnection.State.NEGOTIATING && connection.unsent() == 0;
                }, Duration.ofSeconds(30), "the ApiVersions request written");
                final long sentNs = System.nanoTime();
                final byte[] answer = passOneFrame(new DataInputStream(client.getInputStream()),
                    new DataOutputStream(broker.getOutputStream()), new DataInputStream(broker.getInputStream()));
                client.getOutputStream().write(answer);
                client.getOutputStream().flush();
                final SocketChannel channel = channelOf(connection);
                Await.await(() -> channel.socket().getInputStream().available() >= answer.length, Duration.ofSeconds(30),
                    "the answer in the client's socket buffer");

                connection.poll(sentNs + TimeUnit.MILLISECONDS.toNanos(timeoutMs * 10));
                assertEquals(0, failure[0], "no request failed");
                assertEquals(NodeConnection.State.READY, connection.state(), "the answer read, the versions negotiated");
            }
            finally
            {
                connection.shutdown(System.nanoTime(), ClientErrors.NETWORK_EXCEPTION);
            }
        }
    }

    /** The client's request passed to the broker, and the broker's whole answer (with its size) returned. */
    private static byte[] passOneFrame(final DataInputStream fromClient, final DataOutputStream toBroker,
        final DataInputStream fromBroker) throws Exception
    {
        final byte[] request = new byte[fromClient.readInt()];
        fromClient.readFully(request);
        toBroker.writeInt(request.length);
        toBroker.write(request);
        toBroker.flush();
        final int size = fromBroker.readInt();
        final byte[] answer = new byte[4 + size];
        java.nio.ByteBuffer.wrap(answer).putInt(size);
        fromBroker.readFully(answer, 4, size);
        return answer;
    }

    private static SocketChannel channelOf(final NodeConnection connection) throws Exception
    {
        final Field f = NodeConnection.class.getDeclaredField("channel");
        f.setAccessible(true);
        return (SocketChannel)f.get(connection);
    }
}
