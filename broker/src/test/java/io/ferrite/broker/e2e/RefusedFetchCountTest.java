package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Kafka counts every Fetch by the replica id its body carries: a follower's fetch refused for its session is a
 * FetchFollower, and a Fetch the broker cannot read (malformed) is counted too (here as a consumer's: its replica id
 * was never read).
 */
class RefusedFetchCountTest
{
    private static final String REQUESTS = "kafka.network:type=RequestMetrics,name=RequestsPerSec,request=";
    private static final short VERSION = 12;

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void refusedFetchesAreCounted() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final int port = broker.broker.address().getPort();
            try (RawClient client = new RawClient(port))
            {
                // a follower's (replica 2) fetch in a session the broker does not know
                final FetchRequestData fetch = fetch(2).setSessionId(77).setSessionEpoch(1);
                final FetchResponseData response = new FetchResponseData(
                    new ByteBufferAccessor(client.exchange(ApiKeys.FETCH, VERSION, fetch)), VERSION);
                assertEquals(Errors.FETCH_SESSION_ID_NOT_FOUND.code(), response.errorCode());
            }
            await(() -> count("FetchFollower") == 1, Duration.ofSeconds(30), () -> "the follower's refused fetch counted "
                + count("FetchFollower"));
            assertEquals(0, count("FetchConsumer"), "as a follower's, not a consumer's");
            try (RawClient client = new RawClient(port))
            {
                // a Fetch cut short after its header and 6 bytes of body: the broker closes the connection
                final ByteBuffer whole = RawClient.frame(ApiKeys.FETCH, VERSION, fetch(-1), 1);
                final int headerAndSome = whole.remaining() - 4 - 20;
                final ByteBuffer cut = ByteBuffer.allocate(4 + headerAndSome).putInt(headerAndSome);
                cut.put(whole.array(), 4, headerAndSome).flip();
                client.sendFrame(cut);
                await(() -> closed(client), Duration.ofSeconds(30), () -> "the malformed fetch's connection closed");
            }
            await(() -> count("FetchConsumer") == 1, Duration.ofSeconds(30), () -> "the malformed fetch counted "
                + count("FetchConsumer"));
            assertEquals(2, count("Fetch"), "both under Fetch");
        }
    }

    private static FetchRequestData fetch(final int replicaId)
    {
        return new FetchRequestData().setReplicaId(replicaId).setMaxWaitMs(0).setMinBytes(1).setMaxBytes(1 << 20)
            .setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic()
                .setTopic("none").setPartitions(List.of(new FetchRequestData.FetchPartition().setPartition(0)
                    .setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
    }

    private static boolean closed(final RawClient client)
    {
        try
        {
            client.receive(ApiKeys.FETCH, VERSION, 1);
            return false;
        }
        catch (final IOException ex)
        {
            return true; // end of stream (or reset): closed
        }
    }

    private long count(final String request)
    {
        try
        {
            return ((Number)server.getAttribute(new ObjectName(REQUESTS + request), "Count")).longValue();
        }
        catch (final JMException ex)
        {
            throw new AssertionError(request, ex);
        }
    }
}
