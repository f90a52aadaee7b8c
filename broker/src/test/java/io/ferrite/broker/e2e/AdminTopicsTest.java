package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.OffsetOutOfRangeException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicIdException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.TopicCollection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Topic administration through kafka-clients' Admin against a running broker, and what survives a restart. */
class AdminTopicsTest
{
    @TempDir
    Path dir;

    private RunningBroker broker;
    private Admin admin;

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of());
        admin = broker.admin();
    }

    @AfterEach
    void stop() throws Exception
    {
        admin.close();
        broker.close();
    }

    private static <T> T get(final org.apache.kafka.common.KafkaFuture<T> future) throws Exception
    {
        return future.get(20, TimeUnit.SECONDS);
    }

    private static Throwable cause(final org.apache.kafka.common.KafkaFuture<?> future)
    {
        return assertThrows(ExecutionException.class, () -> future.get(20, TimeUnit.SECONDS)).getCause();
    }

    @Test
    void createDescribeListDeleteAndTheirErrors() throws Exception
    {
        get(admin.createTopics(List.of(new NewTopic("orders", 4, (short)1).configs(Map.of("retention.ms", "3600000")),
            new NewTopic("audit", 1, (short)1))).all());
        assertInstanceOf(TopicExistsException.class,
            cause(admin.createTopics(List.of(new NewTopic("orders", 1, (short)1))).all()));
        assertEquals(Set.of("orders", "audit"), get(admin.listTopics().names()));

        final TopicDescription orders = get(admin.describeTopics(List.of("orders")).allTopicNames()).get("orders");
        assertEquals(4, orders.partitions().size());

        // DescribeCluster (not Metadata) answers describeCluster now
        final DescribeClusterResult cluster = admin.describeCluster();
        assertEquals(broker.broker.clusterId(), get(cluster.clusterId()));
        assertEquals(1, get(cluster.nodes()).size());

        get(admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(6))).all());
        assertEquals(6, get(admin.describeTopics(List.of("orders")).allTopicNames()).get("orders").partitions().size());
        assertInstanceOf(InvalidPartitionsException.class,
            cause(admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(6))).all()));
        assertInstanceOf(InvalidPartitionsException.class,
            cause(admin.createPartitions(Map.of("orders", NewPartitions.increaseTo(2))).all()));
        assertInstanceOf(UnknownTopicOrPartitionException.class,
            cause(admin.createPartitions(Map.of("nothing", NewPartitions.increaseTo(2))).all()));

        get(admin.deleteTopics(List.of("audit")).all());
        assertEquals(Set.of("orders"), get(admin.listTopics().names()));
        assertInstanceOf(UnknownTopicOrPartitionException.class, cause(admin.deleteTopics(List.of("audit")).all()));
        assertInstanceOf(UnknownTopicIdException.class,
            cause(admin.deleteTopics(TopicCollection.ofTopicIds(List.of(Uuid.randomUuid()))).all()));
        get(admin.deleteTopics(TopicCollection.ofTopicIds(List.of(orders.topicId()))).all());
        assertEquals(Set.of(), get(admin.listTopics().names()));

        // the logs go shortly after (once requests holding them are done), and a new topic may take the name
        await(() -> !Files.exists(dir.resolve("orders-0")), Duration.ofSeconds(20), "log directory of a deleted topic removed");
        get(admin.createTopics(List.of(new NewTopic("orders", 1, (short)1))).all());
        assertEquals(0L, get(admin.listOffsets(Map.of(new TopicPartition("orders", 0), OffsetSpec.latest())).all())
            .get(new TopicPartition("orders", 0)).offset());
    }

    @Test
    void topicsAndRecordsSurviveARestartAndDeleteRecordsMovesTheLogStart() throws Exception
    {
        get(admin.createTopics(List.of(new NewTopic("kept", 2, (short)1))).all());
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            for (int i = 0; i < 50; i++)
            {
                producer.send(new ProducerRecord<>("kept", i % 2, null, ("v" + i).getBytes(StandardCharsets.UTF_8))).get();
            }
        }
        final TopicDescription before = get(admin.describeTopics(List.of("kept")).allTopicNames()).get("kept");
        admin.close();
        broker.restart();
        admin = broker.admin();
        final TopicDescription after = get(admin.describeTopics(List.of("kept")).allTopicNames()).get("kept");
        assertEquals(before.topicId(), after.topicId(), "the topic id survives");
        assertEquals(2, after.partitions().size());
        final TopicPartition p0 = new TopicPartition("kept", 0);
        assertEquals(25L, get(admin.listOffsets(Map.of(p0, OffsetSpec.latest())).all()).get(p0).offset());

        assertEquals(10L, get(admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(10))).lowWatermarks().get(p0)).lowWatermark());
        assertEquals(10L, get(admin.listOffsets(Map.of(p0, OffsetSpec.earliest())).all()).get(p0).offset());
        assertInstanceOf(OffsetOutOfRangeException.class,
            cause(admin.deleteRecords(Map.of(p0, RecordsToDelete.beforeOffset(26))).all()));
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            consumer.assign(List.of(p0));
            consumer.seekToBeginning(List.of(p0));
            final ConsumerRecord<byte[], byte[]> first = Polling.pollUntil(consumer, got -> !got.isEmpty(), Duration.ofSeconds(20),
                "records after the new log start").get(0);
            assertEquals(10L, first.offset());
            assertEquals("v20", new String(first.value(), StandardCharsets.UTF_8));
        }
    }

    @Test
    void producingToAnUnknownTopicCreatesItWithTheDefaultPartitions() throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            assertEquals(0L, producer.send(new ProducerRecord<>("made-by-metadata", "x".getBytes(StandardCharsets.UTF_8))).get(20,
                TimeUnit.SECONDS).offset());
        }
        assertEquals(1, get(admin.describeTopics(List.of("made-by-metadata")).allTopicNames()).get("made-by-metadata")
            .partitions().size());
    }
}
