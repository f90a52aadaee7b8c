package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MemoryRecordsBuilder;
import org.apache.kafka.common.record.internal.RecordBatch;
import org.apache.kafka.common.requests.AbstractResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every API the broker advertises, at every version from Kafka's oldest to the highest advertised,
 * with a request that does real work, answered with a response kafka-clients parses whole and
 * without an error. A field a version lacks written by a handler would fail here.
 */
class VersionSweepTest
{
    @TempDir
    Path dir;

    @Test
    void everyAdvertisedVersionOfEveryApiIsAnswered() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final Uuid id;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("sweep", 1, (short)1), new NewTopic("grow", 1, (short)1)))
                    .all().get(20, TimeUnit.SECONDS);
                id = admin.describeTopics(List.of("sweep")).allTopicNames().get(20, TimeUnit.SECONDS).get("sweep").topicId();
            }
            final ApiVersionsResponseData versions = new ApiVersionsResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData()
                    .setClientSoftwareName("sweep").setClientSoftwareVersion("1"))), (short)3);
            final Map<ApiKeys, Short> advertised = new java.util.TreeMap<>(java.util.Comparator.comparingInt(a -> a.id));
            // Kafka 4's librdkafka workaround (KAFKA-18659): Produce advertised from v0 though v0-2 are gone
            assertEquals(0, versions.apiKeys().find(ApiKeys.PRODUCE.id).minVersion());
            for (final ApiVersionsResponseData.ApiVersion v : versions.apiKeys())
            {
                advertised.put(ApiKeys.forId(v.apiKey()), v.maxVersion());
            }
            final List<String> answered = new ArrayList<>();
            final int[] partitions = {1};
            for (final Map.Entry<ApiKeys, Short> e : advertised.entrySet())
            {
                final ApiKeys api = e.getKey();
                for (short v = api.oldestVersion(); v <= e.getValue(); v++)
                {
                    final ApiMessage request = request(api, v, id, partitions);
                    if (request == null)
                    {
                        continue;
                    }
                    final ByteBuffer body = raw.exchange(api, v, request);
                    final AbstractResponse response = AbstractResponse.parseResponse(api, new ByteBufferAccessor(body), v);
                    assertEquals(0, body.remaining(), api + " v" + v + " response has trailing bytes");
                    final Set<Errors> errors = response.errorCounts().keySet();
                    assertTrue(errors.isEmpty() || errors.equals(Set.of(Errors.NONE)), api + " v" + v + ": " + response.errorCounts());
                    answered.add(api.name + " v" + v);
                }
            }
            System.out.println("answered: " + answered);
            assertTrue(answered.size() > 60, "versions answered: " + answered.size());
        }
    }

    /** A request for {@code api} at {@code v} that succeeds on this broker, or null for an API not swept here. */
    private static ApiMessage request(final ApiKeys api, final short v, final Uuid id, final int[] partitions)
    {
        switch (api)
        {
            case API_VERSIONS:
                return new ApiVersionsRequestData().setClientSoftwareName("sweep").setClientSoftwareVersion("1");
            case METADATA:
                return new MetadataRequestData().setTopics(List.of(new MetadataRequestData.MetadataRequestTopic()
                    .setName("sweep"))).setAllowAutoTopicCreation(true);
            case PRODUCE:
            {
                final ProduceRequestData.TopicProduceData topic = new ProduceRequestData.TopicProduceData()
                    .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(records())));
                if (v >= 13)
                {
                    topic.setTopicId(id);
                }
                else
                {
                    topic.setName("sweep");
                }
                final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
                topics.add(topic);
                return new ProduceRequestData().setAcks((short)1).setTimeoutMs(5_000).setTopicData(topics);
            }
            case FETCH:
            {
                final FetchRequestData.FetchTopic topic = new FetchRequestData.FetchTopic().setPartitions(List.of(
                    new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 20)));
                if (v >= 13)
                {
                    topic.setTopicId(id);
                }
                else
                {
                    topic.setTopic("sweep");
                }
                return new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                    .setSessionId(0).setSessionEpoch(-1).setTopics(List.of(topic));
            }
            case LIST_OFFSETS:
                return new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(new ListOffsetsRequestData.ListOffsetsTopic()
                    .setName("sweep").setPartitions(List.of(new ListOffsetsRequestData.ListOffsetsPartition()
                        .setPartitionIndex(0).setTimestamp(v == 0 ? -1 : -2)))));
            case CREATE_TOPICS:
            {
                final CreateTopicsRequestData.CreatableTopicCollection topics = new CreateTopicsRequestData.CreatableTopicCollection();
                topics.add(new CreateTopicsRequestData.CreatableTopic().setName("made-" + v).setNumPartitions(1)
                    .setReplicationFactor((short)1));
                return new CreateTopicsRequestData().setTopics(topics).setTimeoutMs(5_000);
            }
            case DELETE_TOPICS:
                return v >= 6 ?
                    new DeleteTopicsRequestData().setTopics(List.of(new DeleteTopicsRequestData.DeleteTopicState().setName("made-" + (v + 1))))
                        .setTimeoutMs(5_000) :
                    new DeleteTopicsRequestData().setTopicNames(List.of("made-" + (v + 1))).setTimeoutMs(5_000);
            case CREATE_PARTITIONS:
            {
                partitions[0]++;
                final CreatePartitionsRequestData.CreatePartitionsTopicCollection topics =
                    new CreatePartitionsRequestData.CreatePartitionsTopicCollection();
                topics.add(new CreatePartitionsRequestData.CreatePartitionsTopic().setName("grow").setCount(partitions[0])
                    .setAssignments(null));
                return new CreatePartitionsRequestData().setTopics(topics).setTimeoutMs(5_000);
            }
            case DELETE_RECORDS:
                return new DeleteRecordsRequestData().setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic()
                    .setName("sweep").setPartitions(List.of(new DeleteRecordsRequestData.DeleteRecordsPartition()
                        .setPartitionIndex(0).setOffset(0))))).setTimeoutMs(5_000);
            case OFFSET_FOR_LEADER_EPOCH:
            {
                final OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
                topics.add(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("sweep").setPartitions(List.of(
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setLeaderEpoch(0)
                        .setCurrentLeaderEpoch(0))));
                return new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(topics);
            }
            case INIT_PRODUCER_ID:
                return new InitProducerIdRequestData().setTransactionalId(null).setTransactionTimeoutMs(60_000);
            case DESCRIBE_CLUSTER:
                return new DescribeClusterRequestData();
            case DESCRIBE_LOG_DIRS:
                return new DescribeLogDirsRequestData().setTopics(null);
            case ELECT_LEADERS: // every partition: none elected on one node, so no result and no error
                return new ElectLeadersRequestData().setTopicPartitions(null);
            case FIND_COORDINATOR:
                return v >= 4 ? new FindCoordinatorRequestData().setKeyType((byte)0).setCoordinatorKeys(List.of("sweep-group")) :
                    new FindCoordinatorRequestData().setKey("sweep-group");
            case OFFSET_COMMIT:
            {
                final OffsetCommitRequestData.OffsetCommitRequestTopic topic = new OffsetCommitRequestData.OffsetCommitRequestTopic()
                    .setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition().setPartitionIndex(0)
                        .setCommittedOffset(0).setCommittedMetadata("m")));
                if (v >= 10)
                {
                    topic.setTopicId(id);
                }
                else
                {
                    topic.setName("sweep");
                }
                return new OffsetCommitRequestData().setGroupId("sweep-group").setGenerationIdOrMemberEpoch(-1).setMemberId("")
                    .setTopics(List.of(topic));
            }
            case OFFSET_FETCH:
            {
                if (v < 8)
                {
                    return new OffsetFetchRequestData().setGroupId("sweep-group").setTopics(List.of(
                        new OffsetFetchRequestData.OffsetFetchRequestTopic().setName("sweep").setPartitionIndexes(List.of(0))));
                }
                final OffsetFetchRequestData.OffsetFetchRequestTopics topic = new OffsetFetchRequestData.OffsetFetchRequestTopics()
                    .setPartitionIndexes(List.of(0));
                if (v >= 10)
                {
                    topic.setTopicId(id);
                }
                else
                {
                    topic.setName("sweep");
                }
                return new OffsetFetchRequestData().setGroups(List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup()
                    .setGroupId("sweep-group").setTopics(List.of(topic))));
            }
            case LIST_GROUPS:
                return new ListGroupsRequestData();
            case DESCRIBE_GROUPS:
                return new DescribeGroupsRequestData().setGroups(List.of("sweep-group"));
            default:
                return null;
        }
    }

    private static MemoryRecords records()
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1024), RecordBatch.CURRENT_MAGIC_VALUE,
            Compression.NONE, TimestampType.CREATE_TIME, 0L);
        builder.append(System.currentTimeMillis(), "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8));
        return builder.build();
    }
}
