package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A single node's partition and a fetch naming {@code last_fetched_epoch} (review L4 of rtrunc): Kafka 4.4's leader
 * assigns (0, 0) to a new partition's epoch cache (makeLeader), so a consumer's fetch at offset 0 with last fetched
 * epoch 0 reads (nothing yet) with NONE, and one naming epoch 1, newer than the leader knows, is OFFSET_OUT_OF_RANGE.
 * Raw Fetch v12 with replica id -1 (a consumer; kafka-clients itself sends -1 as the epoch) over a real socket.
 */
class SingleNodeFetchEpochTest
{
    private static final String TOPIC = "fresh";

    @TempDir
    Path dir;
    private RunningBroker broker;
    private Uuid topicId;

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of());
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            topicId = admin.describeTopics(List.of(TOPIC)).allTopicNames().get().get(TOPIC).topicId();
        }
    }

    @AfterEach
    void stop() throws Exception
    {
        broker.close();
    }

    @Test
    void anEmptyPartitionIsConsistentWithEpochZeroAndKnowsNoNewerOne() throws Exception
    {
        try (RawFollower consumer = new RawFollower(broker.broker.address().getPort(), -1, RawFollower.OLD_VERSION, TOPIC, topicId))
        {
            final FetchResponseData.PartitionData empty = consumer.fetch(0, 0, 0);
            assertEquals(Errors.NONE, Errors.forCode(empty.errorCode()), "an empty partition, epoch 0 at offset 0");
            assertEquals(-1, empty.divergingEpoch().epoch(), "no diverging epoch");
            assertEquals(0, empty.records().sizeInBytes());
            assertEquals(0, empty.highWatermark());

            assertEquals(Errors.OFFSET_OUT_OF_RANGE, Errors.forCode(consumer.fetch(0, 0, 1).errorCode()), "epoch 1, newer than 0");
            final FetchResponseData.PartitionData ahead = consumer.fetch(0, 3, 0);
            assertEquals(Errors.NONE, Errors.forCode(ahead.errorCode()));
            assertEquals(0, ahead.divergingEpoch().epoch(), "epoch 0 ends at the log end 0, below the fetch offset 3");
            assertEquals(0L, ahead.divergingEpoch().endOffset());

            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
            {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, "one".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
            final FetchResponseData.PartitionData one = consumer.fetch(0, 0, 0);
            assertEquals(Errors.NONE, Errors.forCode(one.errorCode()), "the same once epoch 0 is in the cache");
            assertEquals(-1, one.divergingEpoch().epoch());
            assertEquals(1, one.highWatermark());
        }
    }
}
