package io.ferrite.replication;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
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
            final long offset = quorum.append(List.of(new ApiMessageAndVersion(new UnfenceBrokerRecord().setId(2), (short)0)))
                .get(DEADLINE.toSeconds(), TimeUnit.SECONDS);
            assertTrue(offset >= 0, "committed at " + offset);
        }
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
