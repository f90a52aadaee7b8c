package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A request sent right behind another on the same connection (pipelined) is timed as Kafka times it: Kafka reads one
 * request of a connection at a time (the channel is muted until the answer is sent), so the second one's clock starts
 * when the first one's answer is sent, and it is not charged the first one's wait. Here the first is a long-poll fetch
 * deferred for its whole max wait (1 s: nothing to read), the second an ApiVersions, both in one write. Likewise a
 * request read with a produce that its quota throttles: Kafka's muted channel reads it after the throttle, so its
 * clock starts then.
 */
class PipelinedRequestTimesTest
{
    private static final String METRICS = "kafka.network:type=RequestMetrics,name=";

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void aRequestBehindADeferredFetchIsNotChargedItsWait() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("empty", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            final short fetchVersion = 12;
            final FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(1_000).setMinBytes(1 << 20)
                .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1)
                .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("empty").setPartitions(List.of(
                    new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)))));
            final ByteBuffer a = RawClient.frame(ApiKeys.FETCH, fetchVersion, fetch, 1);
            final ByteBuffer b = RawClient.frame(ApiKeys.API_VERSIONS, (short)3,
                new ApiVersionsRequestData().setClientSoftwareName("pipelined").setClientSoftwareVersion("1"), 2);
            final ByteBuffer both = ByteBuffer.allocate(a.remaining() + b.remaining()).put(a).put(b).flip();
            try (RawClient client = new RawClient(broker.broker.address().getPort()))
            {
                client.sendFrame(both); // one write: the ApiVersions is read while the fetch waits (or just after)
                client.receive(ApiKeys.FETCH, fetchVersion, 1);
                client.receive(ApiKeys.API_VERSIONS, (short)3, 2);
            }
            // the times are recorded once the answer is written: the client may read it a moment before
            await(() -> count("TotalTimeMs", "ApiVersions") == count("RequestsPerSec", "ApiVersions")
                && count("TotalTimeMs", "FetchConsumer") == 1, Duration.ofSeconds(30),
                () -> "every ApiVersions and the fetch timed: " + count("TotalTimeMs", "ApiVersions") + " of "
                    + count("RequestsPerSec", "ApiVersions") + ", fetch " + count("TotalTimeMs", "FetchConsumer"));
            final double fetchWait = max("RemoteTimeMs", "FetchConsumer");
            assertTrue(fetchWait >= 900, "the fetch waited its max wait (1 s, within the buckets' 6%): " + fetchWait);
            // before its answer, the ApiVersions's clock had the whole wait: its total and queue times were >= it
            final double queue = max("RequestQueueTimeMs", "ApiVersions");
            final double total = max("TotalTimeMs", "ApiVersions");
            assertTrue(queue < fetchWait / 2 && total < fetchWait / 2, "the ApiVersions is not charged the fetch's wait ("
                + fetchWait + " ms): RequestQueueTimeMs Max " + queue + ", TotalTimeMs Max " + total);
        }
    }

    @Test
    void aRequestBehindAThrottledProduceIsNotChargedTheThrottle() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("q", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                ClientQuotasTest.alter(admin, ClientQuotasTest.set(ClientQuotasTest.entity(ClientQuotaEntity.CLIENT_ID,
                    "raw-test"), "producer_byte_rate", 1000.0));
            }
            // a 12 000-byte produce at 1 000 B/s: throttled about 2 s, its connection muted meanwhile (as Kafka's)
            final ByteBuffer a = RawClient.frame(ApiKeys.PRODUCE, QuotaThrottleTest.PRODUCE_VERSION,
                QuotaThrottleTest.produce(11_900), 1);
            final ByteBuffer b = RawClient.frame(ApiKeys.API_VERSIONS, (short)3,
                new ApiVersionsRequestData().setClientSoftwareName("pipelined").setClientSoftwareVersion("1"), 2);
            final ByteBuffer both = ByteBuffer.allocate(a.remaining() + b.remaining()).put(a).put(b).flip();
            final int throttleMs;
            try (RawClient client = new RawClient(broker.broker.address().getPort()))
            {
                client.sendFrame(both); // one write: the ApiVersions is in the input when the quota mutes the connection
                throttleMs = new ProduceResponseData(new ByteBufferAccessor(client.receive(ApiKeys.PRODUCE,
                    QuotaThrottleTest.PRODUCE_VERSION, 1)), QuotaThrottleTest.PRODUCE_VERSION).throttleTimeMs();
                client.receive(ApiKeys.API_VERSIONS, (short)3, 2);
            }
            assertTrue(throttleMs >= 1_000, "the produce was throttled: " + throttleMs + " ms");
            await(() -> count("TotalTimeMs", "ApiVersions") == count("RequestsPerSec", "ApiVersions"), Duration.ofSeconds(30),
                () -> "every ApiVersions timed: " + count("TotalTimeMs", "ApiVersions") + " of "
                    + count("RequestsPerSec", "ApiVersions"));
            // Kafka reads the next request once the muted channel reads again: the throttle is before its clock starts
            final double queue = max("RequestQueueTimeMs", "ApiVersions");
            final double total = max("TotalTimeMs", "ApiVersions");
            assertTrue(queue < throttleMs / 2.0 && total < throttleMs / 2.0, "the ApiVersions is not charged the throttle ("
                + throttleMs + " ms): RequestQueueTimeMs Max " + queue + ", TotalTimeMs Max " + total);
        }
    }

    private long count(final String name, final String request)
    {
        return ((Number)attribute(name, request, "Count")).longValue();
    }

    private double max(final String name, final String request)
    {
        return (double)attribute(name, request, "Max");
    }

    private Object attribute(final String name, final String request, final String attribute)
    {
        try
        {
            return server.getAttribute(new ObjectName(METRICS + name + ",request=" + request), attribute);
        }
        catch (final JMException ex)
        {
            throw new AssertionError(name + "," + request + " " + attribute, ex);
        }
    }
}
