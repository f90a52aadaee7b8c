package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

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
    private static final Map<String, String> ONE_NETWORK_THREAD = Map.of(BrokerConfig.NUM_NETWORK_THREADS, "1");
    /** CoordinatorAgent.QUEUE_CAPACITY: group requests the agent's queue holds. */
    private static final int QUEUE_CAPACITY = 4096;

    @TempDir
    Path dir;

    @Test
    void aNetworkThreadAnswersItsOtherConnectionsWhileAJoinGroupWaitsForTheAgent() throws Exception
    {
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        try (RunningBroker broker = new RunningBroker(dir, ONE_NETWORK_THREAD))
        {
            final int port = broker.broker.address().getPort();
            broker.broker.admin().createTopic("existing", 1, Map.of()).get(20, TimeUnit.SECONDS);
            broker.broker.groups().agent().execute(() -> hold(held, release));
            assertTrue(held.await(20, TimeUnit.SECONDS), "the group coordinator's agent never ran the holding task");
            try (RawClient member = new RawClient(port); RawClient other = new RawClient(port);
                 KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                final int join = member.send(ApiKeys.JOIN_GROUP, JOIN_V,
                    RawGroups.joinRequest("held", "", null, 30_000, 30_000, "existing"));

                // the same network thread answers another connection's requests, and a produce, meanwhile
                assertEquals(0, other.apiVersions().errorCode());
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
        finally
        {
            release.countDown();
        }
    }

    /**
     * The agent's queue (a ManyToOneConcurrentArrayQueue of 4096) full while the agent is held: a
     * group request is answered COORDINATOR_NOT_AVAILABLE at once by its network thread (the client
     * retries), in each API's own response; once the agent runs again it takes every queued call and
     * answers the next request itself.
     */
    @Test
    void aGroupRequestMeetingTheAgentsQueueFullIsAnsweredCoordinatorNotAvailableAtOnce() throws Exception
    {
        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        try (RunningBroker broker = new RunningBroker(dir, ONE_NETWORK_THREAD))
        {
            final int port = broker.broker.address().getPort();
            final CoordinatorAgent agent = broker.broker.groups().agent();
            agent.execute(() -> hold(held, release));
            assertTrue(held.await(20, TimeUnit.SECONDS), "the group coordinator's agent never ran the holding task");
            final AtomicInteger ran = new AtomicInteger();
            int queued = 0;
            while (queued <= QUEUE_CAPACITY && agent.execute(ran::incrementAndGet))
            {
                queued++;
            }
            assertEquals(QUEUE_CAPACITY, queued, "calls the held agent's queue took before it refused one");
            try (RawClient member = new RawClient(port))
            {
                assertEquals(Errors.COORDINATOR_NOT_AVAILABLE.code(), RawGroups.heartbeat(member, "full", "m-1", null, 1),
                    "a Heartbeat while the queue is full");
                assertEquals(Errors.COORDINATOR_NOT_AVAILABLE.code(), RawGroups.join(member, JOIN_V,
                    RawGroups.joinRequest("full", "", null, 30_000, 30_000, "existing")).errorCode(),
                    "a JoinGroup while the queue is full");
                assertEquals(0, ran.get(), "the held agent ran a queued call");

                release.countDown();
                Await.await(() -> ran.get() == QUEUE_CAPACITY, Duration.ofSeconds(20), "the agent ran every queued call");
                assertEquals(Errors.UNKNOWN_MEMBER_ID.code(), RawGroups.heartbeat(member, "full", "m-1", null, 1),
                    "the agent caught up and answers the group request itself");
            }
        }
        finally
        {
            release.countDown();
        }
    }

    @Test
    void noNetworkThreadTakesTheCoordinatorsMonitor() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, ONE_NETWORK_THREAD);
             RawClient member = new RawClient(broker.broker.address().getPort());
             RawClient other = new RawClient(broker.broker.address().getPort()))
        {
            // before the coordinator's agent, a Heartbeat ran on the network thread inside the
            // coordinator's monitor: holding it stopped that thread, and neither answer below came
            synchronized (broker.broker.groups())
            {
                assertEquals(Errors.UNKNOWN_MEMBER_ID.code(), RawGroups.heartbeat(member, "nobody", "m-1", null, 1),
                    "a heartbeat of a group that does not exist");
                assertEquals(0, other.apiVersions().errorCode());
            }
        }
    }

    private static void hold(final CountDownLatch held, final CountDownLatch release)
    {
        held.countDown();
        try
        {
            release.await(60, TimeUnit.SECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
