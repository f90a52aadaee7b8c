package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A coordinator's own topic created by a client (Kafka 4.4 lets CreateTopics make {@code __consumer_offsets} and
 * {@code __transaction_state}) whose files failed: published offline, with no partition made. A write of the
 * coordinator answers COORDINATOR_NOT_AVAILABLE (retriable), as before the topic was published offline and as
 * Kafka answers while a coordinator partition has no leader, and the same connection answers the next request.
 */
class OfflineCoordinatorTopicTest
{
    @TempDir
    Path dir;

    @Test
    void anOffsetCommitToAnOfflineOffsetsTopicAnswersCoordinatorNotAvailable() throws Exception
    {
        Files.writeString(dir.resolve("__consumer_offsets-0"), "a file where the partition directory would go");
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            createOffline(broker, admin, "__consumer_offsets");
            for (int i = 0; i < 2; i++)
            {
                final short error = RawGroups.commitError(raw, RawGroups.COMMIT_V,
                    RawGroups.commitRequest("g", "", null, -1, "t", 0, 1, ""));
                assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, Errors.forCode(error), "commit " + i + ", same connection");
            }
        }
    }

    @Test
    void anInitProducerIdOfAnOfflineTransactionStateTopicAnswersCoordinatorNotAvailable() throws Exception
    {
        Files.writeString(dir.resolve("__transaction_state-0"), "a file where the partition directory would go");
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            createOffline(broker, admin, "__transaction_state");
            final short version = 5;
            for (int i = 0; i < 2; i++)
            {
                final InitProducerIdResponseData r = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(
                    ApiKeys.INIT_PRODUCER_ID, version, new InitProducerIdRequestData().setTransactionalId("tx")
                        .setTransactionTimeoutMs(10_000).setProducerId(-1).setProducerEpoch((short)-1))), version);
                assertEquals(Errors.COORDINATOR_NOT_AVAILABLE, Errors.forCode(r.errorCode()), "InitProducerId " + i + ", same connection");
            }
        }
    }

    /** Creates {@code name} with one partition (and "t", which serves) and waits until it is published offline. */
    private static void createOffline(final RunningBroker broker, final Admin admin, final String name) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(name, 1, (short)1), new NewTopic("t", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
        Await.await(() -> broker.broker.topics().topic("t") != null
            && broker.broker.topics().topic(name) != null, Duration.ofSeconds(30), "t made, " + name + " published");
        assertTrue(broker.broker.topics().topic(name).hasOfflinePartitions(), name + " offline");
        assertEquals(0, broker.broker.topics().topic(name).partitions.length, name + ": no partition made");
    }
}
