package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.RawGroups.HEARTBEAT_V;
import static io.ferrite.broker.e2e.RawGroups.JOIN_V;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Group requests off the network threads (issue 17): a network thread hands a group request to the
 * coordinator's agent and serves its other connections while the agent works or is busy; it never
 * takes the coordinator's monitor. One network thread, so every connection shares it. The agent is
 * held still by a task that waits on a latch: what did not happen yet is certain, not a matter of
 * timing.
 */
class GroupOffNetworkThreadTest
{
    private static final short API_VERSIONS_V = 3;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of(BrokerConfig.NUM_NETWORK_THREADS, "1"));
    }

    @AfterEach
    void stop() throws Exception
    {
        release.countDown();
        broker.close();
    }

    @Test
    void aNetworkThreadAnswersItsOtherConnectionsWhileAJoinGroupWaitsForTheAgent() throws Exception
    {
        broker.broker.admin().createTopic("existing", 1, Map.of()).get(20, TimeUnit.SECONDS);
        final CountDownLatch held = new CountDownLatch(1);
        broker.broker.groups().agent().execute(() ->
        {
            held.countDown();
            awaitRelease();
        });
        assertTrue(held.await(20, TimeUnit.SECONDS), "the group coordinator's agent never ran the holding task");
        try (RawClient member = new RawClient(port()); RawClient other = new RawClient(port());
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            final int join = member.send(ApiKeys.JOIN_GROUP, JOIN_V,
                RawGroups.joinRequest("held", "", null, 30_000, 30_000, "existing"));

            // the same network thread answers another connection's requests, and a produce, meanwhile
            assertEquals(0, apiVersions(other).errorCode());
            assertEquals(0L, producer.send(new ProducerRecord<>("existing", new byte[10])).get(20, TimeUnit.SECONDS).offset());

            // the agent is held: it has not run the JoinGroup, so nothing can have answered it
            assertFalse(member.answered(), "JoinGroup answered before the agent ran it");

            release.countDown();
            final JoinGroupResponseData response = new JoinGroupResponseData(new ByteBufferAccessor(
                member.receive(ApiKeys.JOIN_GROUP, JOIN_V, join)), JOIN_V);
            // a first join without a member id: the agent hands out one (Kafka 4.4's answer since v4)
            assertEquals(Errors.MEMBER_ID_REQUIRED.code(), response.errorCode());
            assertFalse(response.memberId().isEmpty(), "the member id the coordinator gave out");
        }
    }

    @Test
    void noNetworkThreadTakesTheCoordinatorsMonitor() throws Exception
    {
        try (RawClient member = new RawClient(port()); RawClient other = new RawClient(port()))
        {
            // before the coordinator's agent, a Heartbeat ran on the network thread inside the
            // coordinator's monitor: holding it stopped that thread, and the ApiVersions was never answered
            synchronized (broker.broker.groups())
            {
                assertEquals(Errors.UNKNOWN_MEMBER_ID.code(), RawGroups.heartbeat(member, "nobody", "m-1", null, 1),
                    "a heartbeat of a group that does not exist (Heartbeat v" + HEARTBEAT_V + ")");
                assertEquals(0, apiVersions(other).errorCode());
            }
        }
    }

    private void awaitRelease()
    {
        try
        {
            release.await(60, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private int port()
    {
        return broker.broker.address().getPort();
    }

    private static ApiVersionsResponseData apiVersions(final RawClient client) throws Exception
    {
        return new ApiVersionsResponseData(new ByteBufferAccessor(client.exchange(ApiKeys.API_VERSIONS, API_VERSIONS_V,
            new ApiVersionsRequestData().setClientSoftwareName("raw-test").setClientSoftwareVersion("1"))), API_VERSIONS_V);
    }
}
