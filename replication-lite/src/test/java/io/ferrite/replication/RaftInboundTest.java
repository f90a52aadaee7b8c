package io.ferrite.replication;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.ferrite.testing.Await;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.DescribeQuorumRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The quorum listener against peers that misbehave: a single voter with a raw client on its port. */
class RaftInboundTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @TempDir
    Path dir;

    @Test
    void aClientThatDoesNotReadDoesNotStopTheQuorum() throws Exception
    {
        try (MetadataQuorum quorum = leadingSingleVoter(); SocketChannel client = SocketChannel.open())
        {
            client.setOption(StandardSocketOptions.SO_RCVBUF, 4096);
            client.connect(new InetSocketAddress("127.0.0.1", quorum.boundAddress().getPort()));
            // ~30 MB of answers to pipelined requests, never read: far more than the sockets' buffers hold
            pipelineWithoutReading(client, 300_000);
            final long offset = unfence(quorum).get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertTrue(offset >= 0, "committed at " + offset);
        }
    }

    @Test
    void aFrameOverTheRequestLimitClosesItsConnectionAndNothingElse() throws Exception
    {
        try (MetadataQuorum quorum = leadingSingleVoter(); Socket http = connect(quorum); Socket tooLarge = connect(quorum))
        {
            // an HTTP probe: "GET " read as a frame size is 1.2 GB
            http.getOutputStream().write("GET / HTTP/1.1\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            // one byte over socket.request.max.bytes, which before the limit was allocated and waited for
            tooLarge.getOutputStream().write(ByteBuffer.allocate(4).putInt(0, QuorumSettings.DEFAULT_SOCKET_REQUEST_MAX_BYTES + 1).array());
            assertClosedByPeer(http, "the HTTP probe's connection");
            assertClosedByPeer(tooLarge, "the too large frame's connection");
            assertTrue(unfence(quorum).get(DEADLINE.toSeconds(), TimeUnit.SECONDS) >= 0);
        }
    }

    @Test
    void closeEndsEveryConnectionAndThread() throws Exception
    {
        final MetadataQuorum quorum = leadingSingleVoter();
        try (Socket idle = connect(quorum))
        {
            Await.await(() -> quorum.inbound().connections().size() == 1, DEADLINE, "the idle connection accepted");
            for (final SocketChannel accepted : quorum.inbound().connections())
            {
                // Kafka's SocketServer sets it on every accepted socket: no Nagle delay on a Fetch answer's records
                assertTrue(accepted.getOption(StandardSocketOptions.TCP_NODELAY), "TCP_NODELAY on " + accepted);
            }
            quorum.close();
            assertEquals(-1, idle.getInputStream().read(), "the peer reads EOF at close");
            Await.await(() -> quorumThreads().isEmpty(), DEADLINE, () -> "no thread of the quorum after close: " + quorumThreads());
        }
    }

    /** EOF, or a reset when the node closed with bytes of ours unread; a read timeout fails. */
    private static void assertClosedByPeer(final Socket socket, final String what) throws IOException
    {
        try
        {
            assertEquals(-1, socket.getInputStream().read(), what + " is closed");
        }
        catch (final SocketException ex)
        {
            assertTrue(String.valueOf(ex.getMessage()).contains("reset"), what + ": " + ex);
        }
    }

    private static List<String> quorumThreads()
    {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
            .filter(name -> name.startsWith("raft-") || name.startsWith("quorum-1-") || name.contains("raft-outbound"))
            .sorted().toList();
    }

    private static Socket connect(final MetadataQuorum quorum) throws IOException
    {
        final Socket socket = new Socket("127.0.0.1", quorum.boundAddress().getPort());
        socket.setSoTimeout((int)DEADLINE.toMillis()); // a read that never ends fails the test instead
        return socket;
    }

    private static CompletableFuture<Long> unfence(final MetadataQuorum quorum)
    {
        return quorum.append(List.of(new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(2), (short)0)));
    }

    private MetadataQuorum leadingSingleVoter() throws IOException
    {
        final MetadataQuorum quorum = MetadataQuorum.start(QuorumSettings.from(Map.of()), dir, (offset, record) -> { });
        Await.await(quorum::isLeader, DEADLINE, () -> "the single voter to lead; leader " + quorum.leaderId());
        return quorum;
    }

    /**
     * Writes DescribeQuorum requests without reading an answer, until {@code count} are sent or the node
     * stops reading them (the socket stays unwritable for a second: the load generator gives up there; the
     * test asserts nothing about it).
     */
    private static void pipelineWithoutReading(final SocketChannel client, final int count) throws IOException
    {
        final short version = ApiKeys.DESCRIBE_QUORUM.latestVersion();
        client.configureBlocking(false);
        try (Selector selector = Selector.open())
        {
            client.register(selector, SelectionKey.OP_WRITE);
            for (int i = 0; i < count; i++)
            {
                final ByteBuffer body = new DescribeQuorumRequest.Builder(DescribeQuorumRequest.singletonRequest(
                    new TopicPartition("__cluster_metadata", 0))).build(version)
                    .serializeWithHeader(new RequestHeader(ApiKeys.DESCRIBE_QUORUM, version, "flood", i));
                final ByteBuffer frame = ByteBuffer.allocate(4 + body.remaining()).putInt(body.remaining()).put(body).flip();
                while (frame.hasRemaining())
                {
                    if (client.write(frame) == 0 && selector.select(1000) == 0)
                    {
                        return;
                    }
                    selector.selectedKeys().clear();
                }
            }
        }
    }
}
