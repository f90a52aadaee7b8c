package io.ferrite.broker.e2e;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AlterConfigsRequestData;
import org.apache.kafka.common.message.CreateAclsRequestData;
import org.apache.kafka.common.message.CreatePartitionsRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.DeleteAclsRequestData;
import org.apache.kafka.common.message.DeleteGroupsRequestData;
import org.apache.kafka.common.message.DeleteRecordsRequestData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DescribeAclsRequestData;
import org.apache.kafka.common.message.DescribeClusterRequestData;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeLogDirsRequestData;
import org.apache.kafka.common.message.DescribeProducersRequestData;
import org.apache.kafka.common.message.DescribeTransactionsRequestData;
import org.apache.kafka.common.message.DescribeTransactionsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.IncrementalAlterConfigsRequestData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListTransactionsRequestData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetDeleteRequestData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.requests.AbstractResponse;
import org.apache.kafka.common.utils.internals.ImplicitLinkedHashCollection;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The rows of {@link AclMatrixTest}: per API (and form) the request each principal sends, built from its own resources and
 * state (its producer id), and what its answer leaves for later rows. In the order they are sent: a transaction's rows
 * follow its InitProducerId, destructive ones come last.
 */
final class AclMatrixRequests
{
    private static final byte TOPIC_CONFIG = 2;
    private static final byte BROKER_CONFIG = 4;
    private static final int TIMEOUT_MS = 30_000;

    private AclMatrixRequests()
    {
    }

    /** A producer id and epoch InitProducerId gave a principal. */
    record Producer(long id, short epoch)
    {
    }

    /** One API (and form) of the matrix: the request each principal sends and what is kept of its answer. */
    record Row(String title, ApiKeys api, short version, Function<String, ApiMessage> request, BiConsumer<String, AbstractResponse> after)
    {
        Row(final String title, final ApiKeys api, final int version, final Function<String, ApiMessage> request)
        {
            this(title, api, (short)version, request, (user, response) -> { });
        }
    }

    /** An authenticated raw connection. */
    record Connection(RawClient raw) implements AutoCloseable
    {
        /** Whether a Metadata v12 shows {@code topic} with every partition led. */
        boolean visible(final String topic) throws IOException
        {
            final short v = 12;
            final MetadataResponseData answer = new MetadataResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.METADATA, v,
                new MetadataRequestData().setAllowAutoTopicCreation(false).setTopics(List.of(
                    new MetadataRequestData.MetadataRequestTopic().setName(topic))))), v);
            final MetadataResponseData.MetadataResponseTopic t = answer.topics().iterator().next();
            return t.errorCode() == Errors.NONE.code() && !t.partitions().isEmpty()
                && t.partitions().stream().allMatch(p -> p.errorCode() == Errors.NONE.code() && p.leaderId() >= 0);
        }

        /** Whether DescribeTransactions v0 shows {@code id} with no transaction in progress (none, or one complete). */
        boolean settled(final String id) throws IOException
        {
            final short v = 0;
            final DescribeTransactionsResponseData answer = new DescribeTransactionsResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.DESCRIBE_TRANSACTIONS, v, new DescribeTransactionsRequestData().setTransactionalIds(List.of(id)))), v);
            final String state = answer.transactionStates().get(0).transactionState();
            return answer.transactionStates().get(0).errorCode() != Errors.NONE.code() || !state.startsWith("Prepare");
        }

        /** Whether FindCoordinator v4 of {@code group} is answered NONE (the principal may describe it). */
        boolean groupAllowed(final String group) throws IOException
        {
            final short v = 4;
            final FindCoordinatorResponseData answer = new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.FIND_COORDINATOR, v, new FindCoordinatorRequestData().setKeyType((byte)0).setCoordinatorKeys(List.of(group)))), v);
            return answer.coordinators().get(0).errorCode() == Errors.NONE.code();
        }

        @Override
        public void close() throws IOException
        {
            raw.close();
        }
    }

    @SafeVarargs
    private static <E extends ImplicitLinkedHashCollection.Element, C extends ImplicitLinkedHashCollection<E>> C of(final C collection,
        final E... elements)
    {
        for (final E e : elements)
        {
            collection.add(e);
        }
        return collection;
    }

    private static MemoryRecords record()
    {
        return MemoryRecords.withRecords(Compression.NONE, new SimpleRecord("v".getBytes(StandardCharsets.UTF_8)));
    }

    static List<Row> rows(final AclMatrixTest t)
    {
        final List<Row> rows = new ArrayList<>();
        metadataAndData(t, rows);
        groups(t, rows);
        transactions(t, rows);
        admin(t, rows);
        return rows;
    }

    private static void metadataAndData(final AclMatrixTest t, final List<Row> rows)
    {
        rows.add(new Row("Metadata v12 named, topic operations", ApiKeys.METADATA, 12, u -> new MetadataRequestData()
            .setAllowAutoTopicCreation(false).setIncludeTopicAuthorizedOperations(true).setTopics(List.of(
                new MetadataRequestData.MetadataRequestTopic().setName(t.name("topic", u)),
                new MetadataRequestData.MetadataRequestTopic().setName(t.name("absent", u))))));
        rows.add(new Row("Metadata v12 all topics, topic operations", ApiKeys.METADATA, 12, u -> new MetadataRequestData()
            .setAllowAutoTopicCreation(false).setIncludeTopicAuthorizedOperations(true).setTopics(null)));
        rows.add(new Row("Metadata v12 auto-creation", ApiKeys.METADATA, 12, u -> new MetadataRequestData()
            .setAllowAutoTopicCreation(true).setTopics(List.of(new MetadataRequestData.MetadataRequestTopic().setName(t.name("auto", u))))));
        rows.add(new Row("Metadata v10 cluster operations", ApiKeys.METADATA, 10, u -> new MetadataRequestData()
            .setAllowAutoTopicCreation(false).setIncludeClusterAuthorizedOperations(true).setTopics(List.of())));
        rows.add(new Row("Produce v9", ApiKeys.PRODUCE, 9, u -> new ProduceRequestData().setAcks((short)1).setTimeoutMs(TIMEOUT_MS)
            .setTopicData(of(new ProduceRequestData.TopicProduceDataCollection(), new ProduceRequestData.TopicProduceData()
                .setName(t.name("topic", u)).setPartitionData(List.of(new ProduceRequestData.PartitionProduceData().setIndex(0)
                    .setRecords(record())))))));
        rows.add(new Row("Fetch v12", ApiKeys.FETCH, 12, u -> new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0)
            .setMaxBytes(1 << 20).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1).setTopics(List.of(
                new FetchRequestData.FetchTopic().setTopic(t.name("topic", u)).setPartitions(List.of(new FetchRequestData.FetchPartition()
                    .setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 16)))))));
        rows.add(new Row("ListOffsets v7", ApiKeys.LIST_OFFSETS, 7, u -> new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName(t.name("topic", u)).setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1)))))));
        rows.add(new Row("OffsetForLeaderEpoch v4", ApiKeys.OFFSET_FOR_LEADER_EPOCH, 4, u -> new OffsetForLeaderEpochRequestData()
            .setReplicaId(-1).setTopics(of(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection(),
                new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic(t.name("topic", u)).setPartitions(List.of(
                    new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setLeaderEpoch(0)))))));
        rows.add(new Row("FindCoordinator v4 group", ApiKeys.FIND_COORDINATOR, 4, u -> new FindCoordinatorRequestData()
            .setKeyType((byte)0).setCoordinatorKeys(List.of(t.name("group", u)))));
        rows.add(new Row("FindCoordinator v4 transaction", ApiKeys.FIND_COORDINATOR, 4, u -> new FindCoordinatorRequestData()
            .setKeyType((byte)1).setCoordinatorKeys(List.of(t.name("tx", u)))));
    }

    private static void groups(final AclMatrixTest t, final List<Row> rows)
    {
        rows.add(new Row("JoinGroup v9", ApiKeys.JOIN_GROUP, 9, u -> new JoinGroupRequestData().setGroupId(t.name("jgroup", u))
            .setSessionTimeoutMs(10_000).setRebalanceTimeoutMs(10_000).setMemberId("").setProtocolType("consumer").setProtocols(of(
                new JoinGroupRequestData.JoinGroupRequestProtocolCollection(), new JoinGroupRequestData.JoinGroupRequestProtocol()
                    .setName("range").setMetadata(new byte[0])))));
        rows.add(new Row("SyncGroup v5", ApiKeys.SYNC_GROUP, 5, u -> new SyncGroupRequestData().setGroupId(t.name("jgroup", u))
            .setGenerationId(1).setMemberId("unknown").setProtocolType("consumer").setProtocolName("range").setAssignments(List.of())));
        rows.add(new Row("Heartbeat v4", ApiKeys.HEARTBEAT, 4, u -> new HeartbeatRequestData().setGroupId(t.name("jgroup", u))
            .setGenerationId(1).setMemberId("unknown")));
        rows.add(new Row("LeaveGroup v5", ApiKeys.LEAVE_GROUP, 5, u -> new LeaveGroupRequestData().setGroupId(t.name("jgroup", u))
            .setMembers(List.of(new LeaveGroupRequestData.MemberIdentity().setMemberId("unknown")))));
        rows.add(new Row("OffsetCommit v8", ApiKeys.OFFSET_COMMIT, 8, u -> new OffsetCommitRequestData().setGroupId(t.name("group", u))
            .setGenerationIdOrMemberEpoch(-1).setMemberId("").setTopics(List.of(new OffsetCommitRequestData.OffsetCommitRequestTopic()
                .setName(t.name("topic", u)).setPartitions(List.of(new OffsetCommitRequestData.OffsetCommitRequestPartition()
                    .setPartitionIndex(0).setCommittedOffset(1).setCommittedMetadata("")))))));
        rows.add(new Row("OffsetFetch v8 named", ApiKeys.OFFSET_FETCH, 8, u -> new OffsetFetchRequestData().setGroups(List.of(
            new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(t.name("group", u)).setTopics(List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopics().setName(t.name("topic", u)).setPartitionIndexes(List.of(0))))))));
        rows.add(new Row("OffsetFetch v8 all topics, two groups", ApiKeys.OFFSET_FETCH, 8, u -> new OffsetFetchRequestData().setGroups(
            List.of(new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(t.name("group", u)).setTopics(null),
                new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId(t.foreignGroup()).setTopics(null)))));
        rows.add(new Row("DescribeGroups v5 with operations", ApiKeys.DESCRIBE_GROUPS, 5, u -> new DescribeGroupsRequestData()
            .setGroups(List.of(t.name("group", u))).setIncludeAuthorizedOperations(true)));
        rows.add(new Row("DescribeGroups v5 two groups", ApiKeys.DESCRIBE_GROUPS, 5, u -> new DescribeGroupsRequestData()
            .setGroups(List.of(t.name("group", u), t.foreignGroup()))));
        rows.add(new Row("ListGroups v4", ApiKeys.LIST_GROUPS, 4, u -> new ListGroupsRequestData()));
    }

    private static void transactions(final AclMatrixTest t, final List<Row> rows)
    {
        rows.add(new Row("InitProducerId v4 idempotent", ApiKeys.INIT_PRODUCER_ID, 4, u -> new InitProducerIdRequestData()
            .setTransactionalId(null).setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short)-1)));
        rows.add(new Row("InitProducerId v4 transactional", ApiKeys.INIT_PRODUCER_ID, (short)4, u -> new InitProducerIdRequestData()
            .setTransactionalId(t.name("tx", u)).setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short)-1),
            (u, response) ->
            {
                final InitProducerIdResponseData data = (InitProducerIdResponseData)response.data();
                if (data.errorCode() == Errors.NONE.code())
                {
                    t.producer(u, new Producer(data.producerId(), data.producerEpoch()));
                }
            }));
        rows.add(new Row("AddPartitionsToTxn v3", ApiKeys.ADD_PARTITIONS_TO_TXN, 3, u -> addPartitions(t, u, t.name("topic", u))));
        rows.add(new Row("AddPartitionsToTxn v3 __consumer_offsets", ApiKeys.ADD_PARTITIONS_TO_TXN, 3,
            u -> addPartitions(t, u, "__consumer_offsets")));
        rows.add(new Row("Produce v9 transactional", ApiKeys.PRODUCE, 9, u -> new ProduceRequestData().setAcks((short)-1)
            .setTimeoutMs(TIMEOUT_MS).setTransactionalId(t.name("tx", u)).setTopicData(of(new ProduceRequestData.TopicProduceDataCollection(),
                new ProduceRequestData.TopicProduceData().setName(t.name("topic", u)).setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withTransactionalRecords(
                        Compression.NONE, t.producer(u).id(), t.producer(u).epoch(), 0,
                        new SimpleRecord("t".getBytes(StandardCharsets.UTF_8))))))))));
        rows.add(new Row("AddOffsetsToTxn v3", ApiKeys.ADD_OFFSETS_TO_TXN, 3, u -> new AddOffsetsToTxnRequestData()
            .setTransactionalId(t.name("tx", u)).setProducerId(t.producer(u).id()).setProducerEpoch(t.producer(u).epoch())
            .setGroupId(t.name("group", u))));
        rows.add(new Row("TxnOffsetCommit v3", ApiKeys.TXN_OFFSET_COMMIT, 3, u -> txnOffsetCommit(t, u, t.name("group", u))));
        rows.add(new Row("TxnOffsetCommit v3 foreign group", ApiKeys.TXN_OFFSET_COMMIT, 3, u -> txnOffsetCommit(t, u, t.foreignGroup())));
        rows.add(new Row("DescribeTransactions v0", ApiKeys.DESCRIBE_TRANSACTIONS, 0, u -> new DescribeTransactionsRequestData()
            .setTransactionalIds(List.of(t.name("tx", u)))));
        rows.add(new Row("ListTransactions v1", ApiKeys.LIST_TRANSACTIONS, 1, u -> new ListTransactionsRequestData()));
        rows.add(new Row("DescribeProducers v0", ApiKeys.DESCRIBE_PRODUCERS, 0, u -> new DescribeProducersRequestData().setTopics(of(
            new DescribeProducersRequestData.TopicRequestCollection(), new DescribeProducersRequestData.TopicRequest()
                .setName(t.name("topic", u)).setPartitionIndexes(List.of(0))))));
        // the commit's markers written before the next row (else Kafka answers its verification CONCURRENT_TRANSACTIONS or not, by timing)
        rows.add(new Row("EndTxn v3 commit", ApiKeys.END_TXN, (short)3, u -> new EndTxnRequestData().setTransactionalId(t.name("tx", u))
            .setProducerId(t.producer(u).id()).setProducerEpoch(t.producer(u).epoch()).setCommitted(true), (u, response) -> t.settled(u)));
        rows.add(new Row("AddPartitionsToTxn v4 verify", ApiKeys.ADD_PARTITIONS_TO_TXN, 4, u -> new AddPartitionsToTxnRequestData()
            .setTransactions(of(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection(),
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId(t.name("tx", u))
                    .setProducerId(t.producer(u).id()).setProducerEpoch(t.producer(u).epoch()).setVerifyOnly(true).setTopics(of(
                        new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection(),
                        new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(t.name("topic", u)).setPartitions(List.of(0))))))));
        rows.add(new Row("WriteTxnMarkers v1", ApiKeys.WRITE_TXN_MARKERS, 1, u -> new WriteTxnMarkersRequestData().setMarkers(List.of(
            new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(987_654_321L).setProducerEpoch((short)0)
                .setTransactionResult(false).setCoordinatorEpoch(0).setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic()
                    .setName(t.name("topic", u)).setPartitionIndexes(List.of(0))))))));
    }

    private static AddPartitionsToTxnRequestData addPartitions(final AclMatrixTest t, final String u, final String topic)
    {
        return new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(t.name("tx", u)).setV3AndBelowProducerId(t.producer(u).id())
            .setV3AndBelowProducerEpoch(t.producer(u).epoch()).setV3AndBelowTopics(of(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection(),
                new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(topic).setPartitions(List.of(0))));
    }

    private static TxnOffsetCommitRequestData txnOffsetCommit(final AclMatrixTest t, final String u, final String group)
    {
        return new TxnOffsetCommitRequestData().setTransactionalId(t.name("tx", u)).setGroupId(group)
            .setProducerId(t.producer(u).id()).setProducerEpoch(t.producer(u).epoch()).setGenerationIdOrMemberEpoch(-1).setMemberId("")
            .setTopics(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(t.name("topic", u)).setPartitions(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0).setCommittedOffset(1)
                    .setCommittedMetadata(""))), new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setName(t.name("absent", u))
                .setPartitions(List.of(new TxnOffsetCommitRequestData.TxnOffsetCommitRequestPartition().setPartitionIndex(0)
                    .setCommittedOffset(1).setCommittedMetadata("")))));
    }

    private static void admin(final AclMatrixTest t, final List<Row> rows)
    {
        rows.add(new Row("OffsetDelete v0", ApiKeys.OFFSET_DELETE, 0, u -> new OffsetDeleteRequestData().setGroupId(t.name("group", u))
            .setTopics(of(new OffsetDeleteRequestData.OffsetDeleteRequestTopicCollection(), new OffsetDeleteRequestData.OffsetDeleteRequestTopic()
                .setName(t.name("topic", u)).setPartitions(List.of(new OffsetDeleteRequestData.OffsetDeleteRequestPartition().setPartitionIndex(0)))))));
        rows.add(new Row("DeleteGroups v2", ApiKeys.DELETE_GROUPS, 2, u -> new DeleteGroupsRequestData()
            .setGroupsNames(List.of(t.name("delgroup", u)))));
        rows.add(new Row("CreateTopics v7", ApiKeys.CREATE_TOPICS, 7, u -> new CreateTopicsRequestData().setTimeoutMs(TIMEOUT_MS).setTopics(of(
            new CreateTopicsRequestData.CreatableTopicCollection(), new CreateTopicsRequestData.CreatableTopic().setName(t.name("new", u))
                .setNumPartitions(1).setReplicationFactor((short)1)))));
        rows.add(new Row("DeleteTopics v6", ApiKeys.DELETE_TOPICS, 6, u -> new DeleteTopicsRequestData().setTimeoutMs(TIMEOUT_MS).setTopics(
            List.of(new DeleteTopicsRequestData.DeleteTopicState().setName(t.name("del", u))))));
        rows.add(new Row("CreatePartitions v3", ApiKeys.CREATE_PARTITIONS, 3, u -> new CreatePartitionsRequestData().setTimeoutMs(TIMEOUT_MS)
            .setTopics(of(new CreatePartitionsRequestData.CreatePartitionsTopicCollection(), new CreatePartitionsRequestData.CreatePartitionsTopic()
                .setName(t.name("grow", u)).setCount(2).setAssignments(null)))));
        rows.add(new Row("DeleteRecords v2", ApiKeys.DELETE_RECORDS, 2, u -> new DeleteRecordsRequestData().setTimeoutMs(TIMEOUT_MS)
            .setTopics(List.of(new DeleteRecordsRequestData.DeleteRecordsTopic().setName(t.name("topic", u)).setPartitions(List.of(
                new DeleteRecordsRequestData.DeleteRecordsPartition().setPartitionIndex(0).setOffset(0)))))));
        for (final boolean broker : new boolean[] {false, true})
        {
            final String what = broker ? "broker" : "topic";
            final byte type = broker ? BROKER_CONFIG : TOPIC_CONFIG;
            final String key = broker ? "log.retention.ms" : "retention.ms";
            final Function<String, String> resource = u -> broker ? t.nodeId() : t.name("topic", u);
            rows.add(new Row("DescribeConfigs v4 " + what, ApiKeys.DESCRIBE_CONFIGS, 4, u -> new DescribeConfigsRequestData().setResources(
                List.of(new DescribeConfigsRequestData.DescribeConfigsResource().setResourceType(type).setResourceName(resource.apply(u))
                    .setConfigurationKeys(List.of(key))))));
            rows.add(new Row("AlterConfigs v2 " + what + " validateOnly", ApiKeys.ALTER_CONFIGS, 2, u -> new AlterConfigsRequestData()
                .setValidateOnly(true).setResources(of(new AlterConfigsRequestData.AlterConfigsResourceCollection(),
                    new AlterConfigsRequestData.AlterConfigsResource().setResourceType(type).setResourceName(resource.apply(u)).setConfigs(of(
                        new AlterConfigsRequestData.AlterableConfigCollection(), new AlterConfigsRequestData.AlterableConfig().setName(key)
                            .setValue("3600000")))))));
            rows.add(new Row("IncrementalAlterConfigs v1 " + what + " validateOnly", ApiKeys.INCREMENTAL_ALTER_CONFIGS, 1,
                u -> new IncrementalAlterConfigsRequestData().setValidateOnly(true).setResources(of(
                    new IncrementalAlterConfigsRequestData.AlterConfigsResourceCollection(), new IncrementalAlterConfigsRequestData.AlterConfigsResource()
                        .setResourceType(type).setResourceName(resource.apply(u)).setConfigs(of(
                            new IncrementalAlterConfigsRequestData.AlterableConfigCollection(), new IncrementalAlterConfigsRequestData.AlterableConfig()
                                .setName(key).setConfigOperation((byte)0).setValue("3600000")))))));
        }
        rows.add(new Row("DescribeLogDirs v4", ApiKeys.DESCRIBE_LOG_DIRS, 4, u -> new DescribeLogDirsRequestData().setTopics(of(
            new DescribeLogDirsRequestData.DescribableLogDirTopicCollection(), new DescribeLogDirsRequestData.DescribableLogDirTopic()
                .setTopic(t.name("topic", u)).setPartitions(List.of(0))))));
        rows.add(new Row("ElectLeaders v2 preferred", ApiKeys.ELECT_LEADERS, 2, u -> new ElectLeadersRequestData().setElectionType((byte)0)
            .setTimeoutMs(TIMEOUT_MS).setTopicPartitions(of(new ElectLeadersRequestData.TopicPartitionsCollection(),
                new ElectLeadersRequestData.TopicPartitions().setTopic(t.name("topic", u)).setPartitions(List.of(0))))));
        rows.add(new Row("CreateAcls v3", ApiKeys.CREATE_ACLS, 3, u -> new CreateAclsRequestData().setCreations(List.of(
            new CreateAclsRequestData.AclCreation().setResourceType((byte)2).setResourceName(t.name("acl", u)).setResourcePatternType((byte)3)
                .setPrincipal("User:nobody").setHost("*").setOperation((byte)3).setPermissionType((byte)3)))));
        rows.add(new Row("DescribeAcls v3", ApiKeys.DESCRIBE_ACLS, 3, u -> new DescribeAclsRequestData().setResourceTypeFilter((byte)2)
            .setResourceNameFilter(t.name("acl", u)).setPatternTypeFilter((byte)3).setOperation((byte)1).setPermissionType((byte)1)));
        rows.add(new Row("DeleteAcls v3", ApiKeys.DELETE_ACLS, 3, u -> new DeleteAclsRequestData().setFilters(List.of(
            new DeleteAclsRequestData.DeleteAclsFilter().setResourceTypeFilter((byte)2).setResourceNameFilter(t.name("acl", u))
                .setPatternTypeFilter((byte)3).setOperation((byte)1).setPermissionType((byte)1)))));
        rows.add(new Row("DescribeCluster v1 with operations", ApiKeys.DESCRIBE_CLUSTER, 1, u -> new DescribeClusterRequestData()
            .setIncludeClusterAuthorizedOperations(true).setEndpointType((byte)1)));
        rows.add(new Row("DescribeUserScramCredentials v0", ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, 0,
            u -> new DescribeUserScramCredentialsRequestData().setUsers(List.of(new DescribeUserScramCredentialsRequestData.UserName()
                .setName(u)))));
    }
}
