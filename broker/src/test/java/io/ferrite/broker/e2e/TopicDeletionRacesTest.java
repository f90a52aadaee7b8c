package io.ferrite.broker.e2e;

import io.ferrite.broker.topic.Topic;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A topic's name after its deletion, and requests whose timeoutMs is 0, against what Kafka 4.4.0 (one
 * KRaft node, ../shared/kafka-ref) answers: a DeleteTopics answered NONE is final (the topic does not
 * come back after a restart), a name is free again as soon as its topic is deleted (CreateTopics
 * right after is NONE with a new topic id), DeleteRecords with timeoutMs 0 on one node is NONE with
 * the low watermark, and a request that timed out carries no error message.
 *
 * <p>Since the creation journal (issue 11) a CreateTopics is answered before its partitions' files are made (they
 * follow on the admin agent, as Kafka's broker makes a topic's logs after its controller answered): the Admin of
 * {@link RunningBroker#admin} returns from createTopics once the topic is published, so the tests that read the
 * broker's internals or hold a log thread of a topic right after creating it see it as before; a deletion or a
 * creation of a name whose files are still being made is {@code CreationJournalTest}'s.
 */
class TopicDeletionRacesTest
{
    private static final short CREATE_V = 7;
    private static final short RECORDS_V = 2;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private Admin admin;
    private final CountDownLatch release = new CountDownLatch(1);

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of());
        admin = broker.admin();
    }

    @AfterEach
    void stop() throws Exception
    {
        release.countDown();
        admin.close();
        broker.close();
    }

    @Test
    void aDeletedTopicStaysDeletedAcrossARestart() throws Exception
    {
        admin.createTopics(List.of(new NewTopic("gone", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            producer.send(new ProducerRecord<>("gone", 0, null, "v".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
        }
        admin.deleteTopics(List.of("gone")).all().get(20, TimeUnit.SECONDS); // answered NONE: deleted, as Kafka promises
        admin.close();
        broker.restart();
        admin = broker.admin();
        assertFalse(admin.listTopics().names().get(20, TimeUnit.SECONDS).contains("gone"),
            "a topic whose DeleteTopics was answered NONE came back after a clean restart");
    }

    @Test
    void aNameIsFreeAgainRightAfterItsTopicIsDeleted() throws Exception
    {
        admin.createTopics(List.of(new NewTopic("again", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
        admin.deleteTopics(List.of("again")).all().get(20, TimeUnit.SECONDS);
        try (RawClient client = new RawClient(port()))
        {
            final CreateTopicsResponseData.CreatableTopicResult result = create(client, "again", 2, 30_000);
            assertEquals(Errors.NONE.code(), result.errorCode(), "Kafka 4.4 creates a name again right after its delete: "
                + result.errorMessage());
        }
    }

    /**
     * The deletion does not wait for the topic's log threads (the logs are closed and renamed on the
     * admin agent): with the thread that owns partition 1 held, the name is free at once, and once
     * the thread runs again nothing of the old topic lands in the new topic's directories.
     */
    @Test
    void aNameIsFreeAtOnceEvenWithALogThreadOfTheOldTopicHeld() throws Exception
    {
        // two log threads: partitions 0 and 1 of a topic have different owners
        admin.createTopics(List.of(new NewTopic("half", 2, (short)1))).all().get(20, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            for (int p = 0; p < 2; p++)
            {
                producer.send(new ProducerRecord<>("half", p, null, "old".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
        }
        final Topic old = broker.broker.topics().topic("half");
        assertTrue(old.partitions[0].owner != old.partitions[1].owner, "partitions 0 and 1 on one log thread");
        broker.holdLogThread(old.partitions[1].owner, release);

        admin.deleteTopics(List.of("half")).all().get(20, TimeUnit.SECONDS);
        try (RawClient client = new RawClient(port()))
        {
            final CreateTopicsResponseData.CreatableTopicResult result = create(client, "half", 2, 30_000);
            assertEquals(Errors.NONE.code(), result.errorCode(), "with a log thread of the old topic held: " + result.errorMessage());
        }
        // answered once journaled: published by the agent right after the answer, once its files are made
        final Topic recreated = io.ferrite.testing.Await.awaitValue(() -> broker.broker.topics().topic("half"), java.util.Objects::nonNull,
            java.time.Duration.ofSeconds(20), () -> "half created again and published");
        assertTrue(recreated.idMostSignificantBits != old.idMostSignificantBits || recreated.idLeastSignificantBits != old.idLeastSignificantBits,
            "a new topic id");
        release.countDown();
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            // a produce queued behind the released thread's task: it has run everything before it
            producer.send(new ProducerRecord<>("half", 1, null, "new".getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
        }
        for (int p = 0; p < 2; p++)
        {
            assertEquals(p == 1 ? 1 : 0, recreated.partitions[p].log.logEndOffset(), "partition " + p + " holds the new records only");
            try (java.util.stream.Stream<Path> files = Files.list(dir.resolve("half-" + p)))
            {
                // a new partition's indexes are made at their first entry (one small record makes none)
                assertEquals(List.of("00000000000000000000.log", "partition.metadata"), files.map(f -> f.getFileName().toString()).sorted().toList(), "half-" + p);
            }
        }
    }

    /**
     * A produce already queued on its log thread when the topic is deleted meets the closed log and is
     * answered as Kafka 4.4 answers a produce for a partition its metadata no longer has:
     * UNKNOWN_TOPIC_OR_PARTITION (NOT_LEADER_OR_FOLLOWER is for a partition that still exists), and
     * nothing of it lands anywhere.
     */
    @Test
    void aProduceQueuedWhenItsTopicIsDeletedIsAnsweredUnknownTopicOrPartition() throws Exception
    {
        admin.createTopics(List.of(new NewTopic("doomed", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
        final Topic old = broker.broker.topics().topic("doomed");
        broker.holdLogThread(old.partitions[0].owner, release);
        try (RawClient client = new RawClient(port()))
        {
            final int id = client.send(ApiKeys.PRODUCE, PRODUCE_V, produce("doomed"));
            io.ferrite.testing.Await.await(() -> broker.broker.commandsWaitingOn(old.partitions[0].owner) > 0,
                java.time.Duration.ofSeconds(20), "the produce queued on its held log thread");
            admin.deleteTopics(List.of("doomed")).all().get(20, TimeUnit.SECONDS);
            release.countDown();
            final ProduceResponseData response = new ProduceResponseData();
            response.read(new ByteBufferAccessor(client.receive(ApiKeys.PRODUCE, PRODUCE_V, id)), PRODUCE_V);
            final ProduceResponseData.PartitionProduceResponse answer =
                response.responses().iterator().next().partitionResponses().get(0);
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), answer.errorCode(), "as Kafka answers for a deleted topic");
            assertEquals(-1, answer.baseOffset());
            assertEquals(0, old.partitions[0].log.logEndOffset(), "nothing appended to the deleted log");
        }
    }

    private static final short PRODUCE_V = 9;

    private static ProduceRequestData produce(final String topic)
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(java.nio.ByteBuffer.allocate(1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.append(System.currentTimeMillis(), null, "late".getBytes(StandardCharsets.UTF_8));
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(builder.build()))));
        return new ProduceRequestData().setAcks((short)-1).setTimeoutMs(30_000).setTopicData(topics);
    }

    @Test
    void deleteRecordsWithTimeoutZeroIsAnsweredWithTheLowWatermarkOnOneNode() throws Exception
    {
        admin.createTopics(List.of(new NewTopic("trim", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of("acks", "all")))
        {
            for (int i = 0; i < 5; i++)
            {
                producer.send(new ProducerRecord<>("trim", 0, null, ("v" + i).getBytes(StandardCharsets.UTF_8))).get(20, TimeUnit.SECONDS);
            }
        }
        // its log thread held: the deletion cannot have run when the network thread first looks at the answer
        broker.holdLogThread(broker.broker.topics().topic("trim").partitions[0].owner, release);
        try (RawClient client = new RawClient(port()))
        {
            final DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(0).setTopics(List.of(
                new DeleteRecordsRequestData.DeleteRecordsTopic().setName("trim").setPartitions(List.of(
                    new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(3)))));
            final int sent = client.send(ApiKeys.DELETE_RECORDS, RECORDS_V, request);
            release.countDown();
            final DeleteRecordsResponseData.DeleteRecordsPartitionResult result = new DeleteRecordsResponseData(new ByteBufferAccessor(
                client.receive(ApiKeys.DELETE_RECORDS, RECORDS_V, sent)), RECORDS_V).topics().find("trim").partitions().find(0);
            assertEquals(Errors.NONE.code(), result.errorCode(), "Kafka 4.4 on one node answers a DeleteRecords of timeoutMs 0 NONE");
            assertEquals(3, result.lowWatermark());
        }
    }

    /**
     * With no deadline of its own, a DeleteRecords must not wait for a log thread that will never run
     * it: one that died of a fault it could not survive answers KAFKA_STORAGE_ERROR (Kafka's answer
     * for a log directory gone offline), within the client's socket timeout here (20 s).
     */
    @Test
    void deleteRecordsOnAPartitionWhoseLogThreadDiedIsAStorageError() throws Exception
    {
        admin.createTopics(List.of(new NewTopic("orphan", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
        final int owner = broker.broker.topics().topic("orphan").partitions[0].owner;
        final CountDownLatch dying = new CountDownLatch(1);
        broker.broker.executeOnOwner(owner, () ->
        {
            dying.countDown();
            throw new StackOverflowError("injected: a fault the log thread cannot survive");
        });
        assertTrue(dying.await(20, TimeUnit.SECONDS), "the log thread ran the test's task");
        try (RawClient client = new RawClient(port()))
        {
            final DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(30_000).setTopics(List.of(
                new DeleteRecordsRequestData.DeleteRecordsTopic().setName("orphan").setPartitions(List.of(
                    new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(0)))));
            final int sent = client.send(ApiKeys.DELETE_RECORDS, RECORDS_V, request);
            final DeleteRecordsResponseData.DeleteRecordsPartitionResult result = new DeleteRecordsResponseData(new ByteBufferAccessor(
                client.receive(ApiKeys.DELETE_RECORDS, RECORDS_V, sent)), RECORDS_V).topics().find("orphan").partitions().find(0);
            assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), result.errorCode());
            assertEquals(-1, result.lowWatermark());
        }
    }

    @Test
    void aCreateTopicsThatTimedOutCarriesNoErrorMessage() throws Exception
    {
        try (RawClient client = new RawClient(port()))
        {
            final CreateTopicsResponseData.CreatableTopicResult result = create(client, "never", 1, 0);
            assertEquals(Errors.REQUEST_TIMED_OUT.code(), result.errorCode());
            assertNull(result.errorMessage(), "Kafka 4.4 answers REQUEST_TIMED_OUT with a null message");
        }
        assertNull(broker.broker.topics().topic("never"));
    }

    private CreateTopicsResponseData.CreatableTopicResult create(final RawClient client, final String name, final int partitions,
        final int timeoutMs) throws Exception
    {
        final CreateTopicsRequestData.CreatableTopicCollection topics = new CreateTopicsRequestData.CreatableTopicCollection();
        topics.add(new CreateTopicsRequestData.CreatableTopic().setName(name).setNumPartitions(partitions).setReplicationFactor((short)1));
        return new CreateTopicsResponseData(new ByteBufferAccessor(client.exchange(ApiKeys.CREATE_TOPICS, CREATE_V,
            new CreateTopicsRequestData().setTimeoutMs(timeoutMs).setTopics(topics))), CREATE_V).topics().find(name);
    }

    private int port()
    {
        return broker.broker.address().getPort();
    }
}
