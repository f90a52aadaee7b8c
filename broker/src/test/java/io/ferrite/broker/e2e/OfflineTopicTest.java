package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import javax.management.ObjectName;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A topic answered as created whose files then fail (a regular file where a partition directory goes: a real
 * filesystem fault, no mock) is listed as Kafka 4.4 lists a partition whose log directory failed — checked against a
 * real Kafka 4.4 with two log directories, one failed under a single-replica topic: Metadata LEADER_NOT_AVAILABLE,
 * leader -1, replicas [node], ISR empty, offline replicas [node]; Produce, Fetch and ListOffsets KAFKA_STORAGE_ERROR;
 * a kafka-clients producer sends nothing to it and its record expires with a TimeoutException (retriable) — instead
 * of being unknown to every client until a restart. The rest of the broker is unaffected; the next start makes it.
 */
class OfflineTopicTest
{
    @TempDir
    Path dir;

    /**
     * A small topic whose files failed: listed with its id and every partition offline (Metadata v12, the Admin's
     * describeTopics); Produce, Fetch and ListOffsets of it KAFKA_STORAGE_ERROR; a producer's record to it expires with
     * the retriable TimeoutException, as against Kafka; the topic created with it serves. After a restart (the
     * obstacle gone) it is made with its answered id, listed with a leader, and a producer's send to it succeeds.
     */
    @Test
    void aTopicWhoseFilesFailedIsListedWithItsPartitionsOfflineUntilTheNextStartMakesIt() throws Exception
    {
        final Path obstacle = dir.resolve("broken-1");
        Files.writeString(obstacle, "a file where the partition directory would go");
        final Uuid answered;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final CreateTopicsResult created = admin.createTopics(List.of(new NewTopic("broken", 2, (short)1),
                new NewTopic("after", 1, (short)1)));
            created.all().get(30, TimeUnit.SECONDS);
            answered = created.topicId("broken").get();
            Await.await(() -> broker.broker.topics().topic("after") != null, Duration.ofSeconds(30), "after made (broken tried first)");
            final int node = broker.broker.config().nodeId();

            final MetadataResponseData.MetadataResponseTopic listed = CreationWindowTest.metadata(raw, "broken", false).topics()
                .iterator().next();
            assertEquals(Errors.NONE.code(), listed.errorCode(), "listed, not unknown");
            assertEquals(answered, listed.topicId(), "with its answered id");
            assertEquals(2, listed.partitions().size());
            for (final MetadataResponseData.MetadataResponsePartition p : listed.partitions())
            {
                assertEquals(Errors.LEADER_NOT_AVAILABLE.code(), p.errorCode(), "partition " + p.partitionIndex());
                assertEquals(-1, p.leaderId(), "partition " + p.partitionIndex());
                assertEquals(List.of(node), p.replicaNodes(), "partition " + p.partitionIndex());
                assertEquals(List.of(), p.isrNodes(), "partition " + p.partitionIndex());
                assertEquals(List.of(node), p.offlineReplicas(), "partition " + p.partitionIndex());
            }
            final TopicDescription described = admin.describeTopics(List.of("broken")).allTopicNames().get(30, TimeUnit.SECONDS)
                .get("broken");
            assertEquals(answered, described.topicId());
            assertEquals(2, described.partitions().size());
            for (final TopicPartitionInfo p : described.partitions())
            {
                assertNull(p.leader(), "partition " + p.partition() + " has no leader");
                assertEquals(List.of(), p.isr(), "partition " + p.partition());
                assertEquals(1, p.replicas().size(), "partition " + p.partition());
            }
            assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("broken"), "listed by ListTopics");
            assertEquals(2, ManagementFactory.getPlatformMBeanServer().getAttribute(
                new ObjectName("kafka.controller:type=KafkaController,name=OfflinePartitionsCount"), "Value"),
                "the controller's OfflinePartitionsCount: both partitions of the topic");

            for (final int p : new int[] {0, 1})
            {
                assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), produce(raw, "broken", p), "Produce, partition " + p);
                assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), CreationWindowTest.listOffsets(raw, "broken", p), "ListOffsets, partition " + p);
                assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), CreationWindowTest.fetch(raw, answered, p), "Fetch, partition " + p);
            }
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), produce(raw, "broken", 2), "a partition past its count");

            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all", "delivery.timeout.ms", 3_000,
                "request.timeout.ms", 2_000, "linger.ms", 0)))
            {
                final ExecutionException expired = assertThrows(ExecutionException.class, () -> producer.send(
                    new ProducerRecord<>("broken", 0, null, value("lost"))).get(30, TimeUnit.SECONDS));
                assertInstanceOf(TimeoutException.class, expired.getCause(), "Kafka's producer: the batch expires unsent");
                assertInstanceOf(RetriableException.class, expired.getCause());
                final RecordMetadata fine = producer.send(new ProducerRecord<>("after", 0, null, value("kept"))).get(30, TimeUnit.SECONDS);
                assertEquals(0, fine.offset(), "the topic created with it serves");
            }
        }
        Files.delete(obstacle);
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final TopicDescription d = admin.describeTopics(List.of("broken")).allTopicNames().get(30, TimeUnit.SECONDS).get("broken");
            assertEquals(answered, d.topicId(), "made at the start with its answered id");
            assertEquals(0, ManagementFactory.getPlatformMBeanServer().getAttribute(
                new ObjectName("kafka.controller:type=KafkaController,name=OfflinePartitionsCount"), "Value"), "made: none offline");
            for (final TopicPartitionInfo p : d.partitions())
            {
                assertEquals(broker.broker.config().nodeId(), p.leader().id(), "partition " + p.partition() + " led again");
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
            {
                assertEquals(0, producer.send(new ProducerRecord<>("broken", 1, null, value("made"))).get(30, TimeUnit.SECONDS).offset());
            }
        }
    }

    /**
     * A topic whose files failed, with a partition directory its failed creation left (laid out by hand: the cleanup
     * is best effort), deleted by DeleteTopics: gone from the listing at once, the leftover renamed for deletion, its
     * name free (created again, the obstacle gone, under a new id), and not back after a restart.
     */
    @Test
    void aTopicWhoseFilesFailedIsDeletedByDeleteTopics() throws Exception
    {
        final Path obstacle = dir.resolve("gone-1");
        Files.writeString(obstacle, "a file where the partition directory would go");
        final Uuid first;
        final Uuid second;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final CreateTopicsResult created = admin.createTopics(List.of(new NewTopic("gone", 2, (short)1),
                new NewTopic("fine", 1, (short)1)));
            created.all().get(30, TimeUnit.SECONDS);
            first = created.topicId("gone").get();
            Await.await(() -> broker.broker.topics().topic("fine") != null, Duration.ofSeconds(30), "fine made");
            assertTrue(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("gone"), "listed while offline");
            Files.createDirectory(dir.resolve("gone-0")); // what a failed cleanup leaves
            admin.deleteTopics(List.of("gone")).all().get(30, TimeUnit.SECONDS);
            assertFalse(Files.exists(dir.resolve("gone-0")), "the leftover renamed for deletion");
            assertFalse(admin.listTopics().names().get(30, TimeUnit.SECONDS).contains("gone"), "deleted");
            Files.delete(obstacle);
            final CreateTopicsResult again = admin.createTopics(List.of(new NewTopic("gone", 2, (short)1)));
            again.all().get(30, TimeUnit.SECONDS);
            second = again.topicId("gone").get();
            assertFalse(first.equals(second), "a new topic of the name");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            final Set<String> names = admin.listTopics().names().get(30, TimeUnit.SECONDS);
            assertTrue(names.contains("fine"), names.toString());
            assertEquals(second, admin.describeTopics(List.of("gone")).allTopicNames().get(30, TimeUnit.SECONDS).get("gone").topicId(),
                "the deleted one not made again, the new one kept");
        }
    }

    /** A Produce (v12, by name, acks=-1) of one record to one partition: its error. */
    static short produce(final RawClient raw, final String topic, final int partition) throws Exception
    {
        final short version = 12;
        final ProduceRequestData request = new ProduceRequestData().setAcks((short)-1).setTimeoutMs(10_000);
        request.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(new ArrayList<>(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(partition)
                .setRecords(MemoryRecords.withRecords(Compression.NONE, new SimpleRecord(value("raw"))))))));
        final ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.PRODUCE, version,
            request)), version);
        return response.responses().iterator().next().partitionResponses().get(0).errorCode();
    }

    private static byte[] value(final String text)
    {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
