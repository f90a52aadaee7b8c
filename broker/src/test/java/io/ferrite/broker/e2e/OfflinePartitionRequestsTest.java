package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.EligibleLeadersNotAvailableException;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.PreferredLeaderNotAvailableException;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteRecordsResponseData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeProducersResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/**
 * The requests the offline review (M3, M5) listed for a partition whose files failed ({@code Topic.isOffline}: a regular
 * file where a partition directory goes, a real filesystem fault), each answered as a real Kafka 4.4 answered it for a
 * single-replica partition whose log directory failed (one node, two log directories, the partition's made to fail while
 * the broker ran; kafka-clients 4.4 on the wire). What asks the partition's log — DeleteRecords, DescribeProducers,
 * OffsetForLeaderEpoch — is KAFKA_STORAGE_ERROR; what asks the controller — ElectLeaders — has no replica to elect;
 * what is checked against the metadata — OffsetCommit, TxnOffsetCommit, AddPartitionsToTxn — accepts it.
 */
class OfflinePartitionRequestsTest
{
    @TempDir
    Path dir;

    /**
     * ElectLeaders of an offline partition: PREFERRED_LEADER_NOT_AVAILABLE to a preferred election and
     * ELIGIBLE_LEADERS_NOT_AVAILABLE to an unclean one, with the errors' own messages (as Kafka 4.4's controller answers),
     * where a partition that serves is still ELECTION_NOT_NEEDED; the Admin's electLeaders throws their exceptions.
     * Before: ELECTION_NOT_NEEDED for the offline partition too.
     */
    @Test
    void electLeadersOfAnOfflinePartitionFindsNoLeader() throws Exception
    {
        try (RunningBroker broker = offline(); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final Map<String, ElectLeadersResponseData.PartitionResult> preferred = electLeaders(raw, (byte)0);
            assertEquals(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code(), preferred.get("broken-0").errorCode());
            assertEquals("The preferred leader was not available.", preferred.get("broken-0").errorMessage());
            assertEquals(Errors.PREFERRED_LEADER_NOT_AVAILABLE.code(), preferred.get("broken-1").errorCode());
            assertEquals(Errors.ELECTION_NOT_NEEDED.code(), preferred.get("fine-0").errorCode(), "a partition that serves");
            assertEquals("Leader election not needed for topic partition.", preferred.get("fine-0").errorMessage(), "as Kafka 4.4 sends it");
            final Map<String, ElectLeadersResponseData.PartitionResult> unclean = electLeaders(raw, (byte)1);
            assertEquals(Errors.ELIGIBLE_LEADERS_NOT_AVAILABLE.code(), unclean.get("broken-0").errorCode());
            assertEquals("Eligible topic partition leaders are not available.", unclean.get("broken-0").errorMessage());
            assertEquals(Errors.ELECTION_NOT_NEEDED.code(), unclean.get("fine-0").errorCode(), "a partition that serves");

            final TopicPartition broken = new TopicPartition("broken", 0);
            final TopicPartition fine = new TopicPartition("fine", 0);
            final Map<TopicPartition, Optional<Throwable>> byAdmin = admin.electLeaders(ElectionType.PREFERRED, Set.of(broken, fine))
                .partitions().get(30, TimeUnit.SECONDS);
            assertInstanceOf(PreferredLeaderNotAvailableException.class, byAdmin.get(broken).orElseThrow());
            assertInstanceOf(ElectionNotNeededException.class, byAdmin.get(fine).orElseThrow());
            assertInstanceOf(EligibleLeadersNotAvailableException.class, admin.electLeaders(ElectionType.UNCLEAN, Set.of(broken))
                .partitions().get(30, TimeUnit.SECONDS).get(broken).orElseThrow());
        }
    }

    /**
     * What asks an offline partition's log answers KAFKA_STORAGE_ERROR, as Kafka 4.4's replica manager answers for a
     * partition of a failed log directory: DeleteRecords (low watermark -1), DescribeProducers, OffsetForLeaderEpoch
     * (epoch and end offset -1, whatever current leader epoch the request carries).
     */
    @Test
    void whatAsksTheLogOfAnOfflinePartitionIsAStorageError() throws Exception
    {
        try (RunningBroker broker = offline(); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final DeleteRecordsResponseData.DeleteRecordsPartitionResult deleted = deleteRecords(raw);
            assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), deleted.errorCode(), "DeleteRecords");
            assertEquals(-1, deleted.lowWatermark());
            final DescribeProducersResponseData.PartitionResponse producers = describeProducers(raw);
            assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), producers.errorCode(), "DescribeProducers");
            assertEquals(null, producers.errorMessage(), "no message, as Kafka 4.4's");
            for (final int current : new int[] {-1, 0})
            {
                final OffsetForLeaderEpochResponseData.EpochEndOffset end = offsetForLeaderEpoch(raw, current);
                assertEquals(Errors.KAFKA_STORAGE_ERROR.code(), end.errorCode(), "OffsetForLeaderEpoch, current epoch " + current);
                assertEquals(-1, end.leaderEpoch());
                assertEquals(-1, end.endOffset());
            }
        }
    }

    /**
     * What Kafka 4.4 checks against its metadata accepts an offline partition: an OffsetCommit (the Admin's
     * alterConsumerGroupOffsets) and a TxnOffsetCommit (a transactional producer's sendOffsetsToTransaction) are stored
     * and listed; AddPartitionsToTxn adds it (the client's v3 and the broker's v4 verification), and the transaction that
     * holds it commits: complete (a live Kafka 4.4's was CompleteCommit within seconds; here the marker to a partition
     * with no log is dropped, nothing of the transaction can be in it) and its record on the partition that serves stable.
     */
    @Test
    void whatIsCheckedAgainstTheMetadataAcceptsAnOfflinePartition() throws Exception
    {
        try (RunningBroker broker = offline(); Admin admin = broker.plainAdmin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final TopicPartition broken = new TopicPartition("broken", 1);
            committedBothWays(broker, admin, broken, "t-offsets", "an offline partition");

            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("t-add");
            assertEquals(Map.of(0, Errors.NONE), LargeTopicSlicesTest.addPartitions(raw, (short)3, false,
                "t-add", p.id(), p.epoch(), "broken", List.of(0)), "AddPartitionsToTxn v3");
            assertEquals(Map.of(0, Errors.NONE), LargeTopicSlicesTest.addPartitions(raw, (short)3, false,
                "t-add", p.id(), p.epoch(), "fine", List.of(0)));
            assertEquals(Map.of(0, Errors.NONE), LargeTopicSlicesTest.addPartitions(raw, (short)4, true,
                "t-add", p.id(), p.epoch(), "broken", List.of(0)), "the broker's verification: in the transaction");
            assertEquals("NONE", ProduceVerificationTest.produceError(raw.exchange(ApiKeys.PRODUCE, (short)11,
                ProduceVerificationTest.produceRequest("t-add", "fine", 0, p.id(), p.epoch(), 0)), (short)11));
            assertEquals(Errors.NONE, txn.endTxn("t-add", p, true));
            final TopicPartition fine = new TopicPartition("fine", 0);
            Await.await(() -> admin.describeTransactions(List.of("t-add")).all().get(30, TimeUnit.SECONDS).get("t-add").state()
                == TransactionState.COMPLETE_COMMIT, Duration.ofSeconds(30), "the transaction complete, as Kafka 4.4's was");
            assertEquals(2, admin.listOffsets(Map.of(fine, OffsetSpec.latest()), new ListOffsetsOptions(IsolationLevel.READ_COMMITTED))
                .all().get(30, TimeUnit.SECONDS).get(fine).offset(), "its record and marker on the partition that serves: stable");
        }
    }

    /**
     * An OffsetCommit of offset 5 of {@code tp} by group "g" (the Admin's alterConsumerGroupOffsets) and a TxnOffsetCommit
     * of 7 by group "g2" (a transactional producer {@code transactionalId}'s sendOffsetsToTransaction, committed), each
     * asserted accepted and listed.
     */
    static void committedBothWays(final RunningBroker broker, final Admin admin, final TopicPartition tp, final String transactionalId,
        final String what) throws Exception
    {
        admin.alterConsumerGroupOffsets("g", Map.of(tp, new OffsetAndMetadata(5))).all().get(30, TimeUnit.SECONDS);
        assertEquals(5, admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
            .get(tp).offset(), "OffsetCommit of " + what + " accepted");
        try (KafkaProducer<byte[], byte[]> txn = broker.producer(Map.of("transactional.id", transactionalId, "max.block.ms", 30_000)))
        {
            txn.initTransactions();
            txn.beginTransaction();
            txn.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(7)), new ConsumerGroupMetadata("g2"));
            txn.commitTransaction();
        }
        assertEquals(7, admin.listConsumerGroupOffsets("g2").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS)
            .get(tp).offset(), "TxnOffsetCommit of " + what + " accepted");
    }

    /** A broker with "broken" (2 partitions, both offline: a file where partition 1's directory goes) and "fine" (1, made). */
    private RunningBroker offline() throws Exception
    {
        Files.writeString(dir.resolve("broken-1"), "a file where the partition directory would go", StandardCharsets.UTF_8);
        final RunningBroker broker = new RunningBroker(dir, Map.of());
        try (Admin admin = broker.plainAdmin())
        {
            admin.createTopics(List.of(new NewTopic("broken", 2, (short)1), new NewTopic("fine", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            Await.await(() -> broker.broker.topics().topic("fine") != null, Duration.ofSeconds(30), "fine made (broken tried first)");
            Await.await(() -> broker.broker.topics().topic("broken") != null && broker.broker.topics().topic("broken").isOffline(0),
                Duration.ofSeconds(30), "broken published offline");
            return broker;
        }
        catch (final Exception | Error ex)
        {
            broker.close();
            throw ex;
        }
    }

    /** ElectLeaders v2 of broken-0, broken-1 and fine-0: each partition's result by "topic-partition". */
    private static Map<String, ElectLeadersResponseData.PartitionResult> electLeaders(final RawClient raw, final byte type) throws Exception
    {
        final short version = 2;
        final ElectLeadersRequestData.TopicPartitionsCollection asked = new ElectLeadersRequestData.TopicPartitionsCollection();
        asked.add(new ElectLeadersRequestData.TopicPartitions().setTopic("broken").setPartitions(List.of(0, 1)));
        asked.add(new ElectLeadersRequestData.TopicPartitions().setTopic("fine").setPartitions(List.of(0)));
        final ElectLeadersResponseData response = new ElectLeadersResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.ELECT_LEADERS,
            version, new ElectLeadersRequestData().setElectionType(type).setTopicPartitions(asked).setTimeoutMs(10_000))), version);
        assertEquals(Errors.NONE.code(), response.errorCode());
        final Map<String, ElectLeadersResponseData.PartitionResult> results = new java.util.HashMap<>();
        response.replicaElectionResults().forEach(t -> t.partitionResult().forEach(p -> results.put(t.topic() + "-" + p.partitionId(), p)));
        return results;
    }

    private static DeleteRecordsResponseData.DeleteRecordsPartitionResult deleteRecords(final RawClient raw) throws Exception
    {
        final short version = 2;
        final DeleteRecordsRequestData request = new DeleteRecordsRequestData().setTimeoutMs(10_000);
        request.topics().add(new DeleteRecordsRequestData.DeleteRecordsTopic().setName("broken").setPartitions(List.of(
            new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(1))));
        return new DeleteRecordsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.DELETE_RECORDS, version, request)), version)
            .topics().iterator().next().partitions().iterator().next();
    }

    private static DescribeProducersResponseData.PartitionResponse describeProducers(final RawClient raw) throws Exception
    {
        final short version = 0;
        final DescribeProducersRequestData request = new DescribeProducersRequestData().setTopics(
            new DescribeProducersRequestData.TopicRequestCollection(List.of(
                new DescribeProducersRequestData.TopicRequest().setName("broken").setPartitionIndexes(List.of(0)))));
        return new DescribeProducersResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.DESCRIBE_PRODUCERS, version, request)),
            version).topics().get(0).partitions().get(0);
    }

    /** OffsetForLeaderEpoch v4 as a consumer sends it (replica -1) for epoch 0 of broken-0. */
    private static OffsetForLeaderEpochResponseData.EpochEndOffset offsetForLeaderEpoch(final RawClient raw, final int currentLeaderEpoch)
        throws Exception
    {
        final short version = 4;
        final OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics = new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
        topics.add(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("broken").setPartitions(List.of(
            new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setCurrentLeaderEpoch(currentLeaderEpoch)
                .setLeaderEpoch(0))));
        return new OffsetForLeaderEpochResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FOR_LEADER_EPOCH, version,
            new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(topics))), version).topics().iterator().next()
            .partitions().get(0);
    }
}
