package io.ferrite.broker.api;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.net.Acceptor;
import io.ferrite.broker.net.NetworkThread;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.CreateTopicsOptions;
import org.apache.kafka.clients.admin.CreateTopicsResult;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ResponseHeader;
import java.nio.ByteBuffer;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidPartitionsException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Metadata and CreateTopics as kafka-clients' Admin sees them: cluster, topic list, descriptions, creation and its errors. */
class AdminMetadataTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry registry;
    private AdminAgent agent;
    private NetworkThread network;
    private Acceptor acceptor;
    private Admin admin;
    private int port;

    @BeforeEach
    void start() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        registry = new TopicRegistry(logs, 1);
        registry.load();
        agent = new AdminAgent(registry);
        agent.start();
        final MetadataHandler metadata = new MetadataHandler(registry, 3, "ferrite-test-cluster");
        final NetworkThread[] thread = new NetworkThread[1];
        final Apis apis = new Apis().register(ApiKeys.METADATA, metadata)
            .register(ApiKeys.CREATE_TOPICS, new CreateTopicsHandler(registry, agent, () -> thread[0].wakeup(),
                BrokerConfig.of(Map.of(BrokerConfig.NODE_ID, "3"))))
            .register(ApiKeys.LIST_OFFSETS, new ListOffsetsHandler(registry));
        network = new NetworkThread(0, apis, 1 << 20);
        thread[0] = network;
        network.start();
        acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {network});
        port = acceptor.address().getPort();
        metadata.advertise("127.0.0.1", port);
        acceptor.start();
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port,
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000"));
    }

    @AfterEach
    void stop() throws Exception
    {
        if (admin != null)
        {
            admin.close();
        }
        acceptor.close();
        network.close();
        agent.close();
        logs.close();
    }

    /** A topic created through the admin agent, the registry's writer. */
    private Topic create(final String name, final int partitions, final Map<String, String> overrides) throws Exception
    {
        return agent.createTopic(name, partitions, overrides).get(20, TimeUnit.SECONDS);
    }

    @Test
    void adminSeesTheNodeAndTheTopics() throws Exception
    {
        final Topic orders = create("orders", 3, Map.of());
        create("prices", 1, Map.of());

        final DescribeClusterResult cluster = admin.describeCluster();
        assertEquals("ferrite-test-cluster", cluster.clusterId().get(20, TimeUnit.SECONDS));
        final List<Node> nodes = List.copyOf(cluster.nodes().get(20, TimeUnit.SECONDS));
        assertEquals(1, nodes.size());
        assertEquals(3, nodes.get(0).id());
        assertEquals(port, nodes.get(0).port());
        assertEquals(3, cluster.controller().get(20, TimeUnit.SECONDS).id());

        assertEquals(Set.of("orders", "prices"), admin.listTopics().names().get(20, TimeUnit.SECONDS));

        final TopicDescription description = admin.describeTopics(List.of("orders")).allTopicNames().get(20, TimeUnit.SECONDS)
            .get("orders");
        assertEquals(new Uuid(orders.idMostSignificantBits, orders.idLeastSignificantBits), description.topicId());
        assertEquals(3, description.partitions().size());
        for (int p = 0; p < 3; p++)
        {
            assertEquals(p, description.partitions().get(p).partition());
            assertEquals(3, description.partitions().get(p).leader().id());
            assertEquals(List.of(3), description.partitions().get(p).isr().stream().map(Node::id).toList());
        }
    }

    @Test
    void anUnknownTopicIsUnknownTopicOrPartition()
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> admin.describeTopics(List.of("missing")).allTopicNames().get(20, TimeUnit.SECONDS));
        assertInstanceOf(UnknownTopicOrPartitionException.class, ex.getCause());
    }

    private Throwable createFails(final NewTopic topic)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> admin.createTopics(List.of(topic)).all().get(20, TimeUnit.SECONDS));
        return ex.getCause();
    }

    @Test
    void adminCreatesTopicsAndSeesThemWithTheirConfigs() throws Exception
    {
        final CreateTopicsResult result = admin.createTopics(List.of(
            new NewTopic("fills", 4, (short)1).configs(Map.of("retention.ms", "60000")),
            new NewTopic("quotes", Optional.empty(), Optional.empty())));
        result.all().get(20, TimeUnit.SECONDS);
        assertEquals(4, result.numPartitions("fills").get());
        assertEquals(1, result.replicationFactor("fills").get());
        final Config config = result.config("fills").get();
        assertEquals("60000", config.get("retention.ms").value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("retention.ms").source());
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, config.get("segment.bytes").source());
        assertEquals(new Uuid(registry.topic("fills").idMostSignificantBits, registry.topic("fills").idLeastSignificantBits),
            result.topicId("fills").get());

        final Map<String, TopicDescription> described = admin.describeTopics(List.of("fills", "quotes")).allTopicNames()
            .get(20, TimeUnit.SECONDS);
        assertEquals(4, described.get("fills").partitions().size());
        assertEquals(1, described.get("quotes").partitions().size(), "num.partitions when none is given");
        assertEquals("60000", registry.topic("fills").overrides.get("retention.ms"));

        assertInstanceOf(TopicExistsException.class, createFails(new NewTopic("fills", 1, (short)1)));
    }

    @Test
    void badCreationsGetKafkasErrorsAndCreateNothing() throws Exception
    {
        assertInstanceOf(InvalidReplicationFactorException.class, createFails(new NewTopic("replicated", 1, (short)3)));
        assertInstanceOf(InvalidTopicException.class, createFails(new NewTopic("bad name", 1, (short)1)));
        assertInstanceOf(InvalidPartitionsException.class, createFails(new NewTopic("empty", 0, (short)1)));
        assertInstanceOf(InvalidConfigurationException.class,
            createFails(new NewTopic("misconfigured", 1, (short)1).configs(Map.of("retention.ms", "soon"))));
        assertInstanceOf(InvalidConfigurationException.class,
            createFails(new NewTopic("unknown-config", 1, (short)1).configs(Map.of("no.such.config", "1"))));
        assertInstanceOf(InvalidReplicaAssignmentException.class,
            createFails(new NewTopic("elsewhere", Map.of(0, List.of(4)))));

        admin.createTopics(List.of(new NewTopic("checked", 2, (short)1)), new CreateTopicsOptions().validateOnly(true))
            .all().get(20, TimeUnit.SECONDS);
        admin.createTopics(List.of(new NewTopic("assigned", Map.of(0, List.of(3), 1, List.of(3)))))
            .all().get(20, TimeUnit.SECONDS);
        assertEquals(Set.of("assigned"), admin.listTopics().names().get(20, TimeUnit.SECONDS));
        assertEquals(2, registry.topic("assigned").partitions.length);
    }

    private long listOffset(final TopicPartition partition, final OffsetSpec spec, final long expectedTimestamp) throws Exception
    {
        final ListOffsetsResult.ListOffsetsResultInfo info = admin.listOffsets(Map.of(partition, spec)).partitionResult(partition)
            .get(20, TimeUnit.SECONDS);
        assertEquals(expectedTimestamp, info.timestamp(), spec.toString());
        return info.offset();
    }

    @Test
    void listOffsetsAnswersEarliestLatestByTimestampAndMaxTimestampBelowTheHighWatermark() throws Exception
    {
        final PartitionLog log = create("ticks", 1, Map.of()).partitions[0].log;
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(1024);
        final AppendResult appended = new AppendResult();
        final UnsafeBuffer value = new UnsafeBuffer(new byte[10]);
        for (final long t : new long[] {1000, 2000, 3000})
        {
            final int length = new RecordBatchBuilder().wrap(buffer, 0).appendRecord(t, null, 0, -1, value, 0, 10)
                .appendRecord(t + 1, null, 0, -1, value, 0, 10).build();
            log.append(buffer, 0, length, appended);
            assertEquals(AppendResult.OK, appended.status, appended.message);
        }
        log.highWatermark(6);
        final TopicPartition tp = new TopicPartition("ticks", 0);
        assertEquals(0, listOffset(tp, OffsetSpec.earliest(), -1));
        assertEquals(6, listOffset(tp, OffsetSpec.latest(), -1));
        assertEquals(2, listOffset(tp, OffsetSpec.forTimestamp(2000), 2000));
        assertEquals(4, listOffset(tp, OffsetSpec.forTimestamp(2500), 3000));
        assertEquals(-1, listOffset(tp, OffsetSpec.forTimestamp(9999), -1));
        assertEquals(5, listOffset(tp, OffsetSpec.maxTimestamp(), 3001));

        // a record above the high watermark is not found by timestamp, and latest stays at the watermark
        final int length = new RecordBatchBuilder().wrap(buffer, 0).appendRecord(5000, null, 0, -1, value, 0, 10).build();
        log.append(buffer, 0, length, appended);
        assertEquals(-1, listOffset(tp, OffsetSpec.forTimestamp(4000), -1));
        assertEquals(6, listOffset(tp, OffsetSpec.latest(), -1));
        // as in Kafka, the log's max timestamp is looked up first and then hidden while above the watermark
        assertEquals(-1, listOffset(tp, OffsetSpec.maxTimestamp(), -1));
        log.highWatermark(7);
        assertEquals(6, listOffset(tp, OffsetSpec.forTimestamp(4000), 5000));
        assertEquals(6, listOffset(tp, OffsetSpec.maxTimestamp(), 5000));
    }

    @Test
    void listOffsetsForAnUnknownPartitionOrANewerLeaderEpochIsATypedErrorOnTheWire() throws Exception
    {
        create("ticks", 2, Map.of());
        final ListOffsetsResponseData parsed = listOffsets(new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName("ticks").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(5).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setCurrentLeaderEpoch(3).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(1).setCurrentLeaderEpoch(0).setTimestamp(-2))),
            new ListOffsetsRequestData.ListOffsetsTopic().setName("nope").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1))))));
        final List<ListOffsetsResponseData.ListOffsetsPartitionResponse> ticks = parsed.topics().get(0).partitions();
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), ticks.get(0).errorCode());
        assertEquals(-1, ticks.get(0).offset());
        assertEquals(Errors.UNKNOWN_LEADER_EPOCH.code(), ticks.get(1).errorCode());
        assertEquals(Errors.NONE.code(), ticks.get(2).errorCode());
        assertEquals(0, ticks.get(2).offset());
        assertEquals("nope", parsed.topics().get(1).name());
        assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION.code(), parsed.topics().get(1).partitions().get(0).errorCode());
    }

    /**
     * A ListOffsets that names a partition twice, or a topic in two entries, is answered as Kafka 4.4
     * answers it (checked against a Kafka 4.4 node): each topic once, each of its partitions once, a
     * partition named twice INVALID_REQUEST (offset, timestamp, leader epoch -1) whatever its entries
     * asked, a topic that does not exist or a partition out of range included. Kafka's order is its hash
     * map's, so the answers are compared by name and index. Before, each entry was answered as it came.
     */
    @Test
    void aPartitionNamedTwiceIsOneInvalidRequestAndATopicNamedTwiceIsOneTopic() throws Exception
    {
        create("ticks", 3, Map.of());
        create("other", 1, Map.of());
        final ListOffsetsResponseData parsed = listOffsets(new ListOffsetsRequestData().setReplicaId(-1).setTopics(List.of(
            new ListOffsetsRequestData.ListOffsetsTopic().setName("ticks").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(1).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-2),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(7).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(7).setTimestamp(-1))),
            new ListOffsetsRequestData.ListOffsetsTopic().setName("other").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1))),
            new ListOffsetsRequestData.ListOffsetsTopic().setName("ticks").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(2).setTimestamp(-2))),
            new ListOffsetsRequestData.ListOffsetsTopic().setName("nope").setPartitions(List.of(
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1),
                new ListOffsetsRequestData.ListOffsetsPartition().setPartitionIndex(0).setTimestamp(-1))))));
        final Map<String, Map<Integer, String>> answered = new java.util.HashMap<>();
        for (final ListOffsetsResponseData.ListOffsetsTopicResponse t : parsed.topics())
        {
            final Map<Integer, String> partitions = new java.util.HashMap<>();
            for (final ListOffsetsResponseData.ListOffsetsPartitionResponse p : t.partitions())
            {
                final String answer = Errors.forCode(p.errorCode()) + " " + p.offset() + " " + p.timestamp() + " " + p.leaderEpoch();
                assertEquals(null, partitions.put(p.partitionIndex(), answer), t.name() + "-" + p.partitionIndex() + " answered once");
            }
            assertEquals(null, answered.put(t.name(), partitions), t.name() + " answered once");
        }
        assertEquals(Map.of(
            "ticks", Map.of(0, "INVALID_REQUEST -1 -1 -1", 1, "NONE 0 -1 0", 7, "INVALID_REQUEST -1 -1 -1", 2, "NONE 0 -1 0"),
            "other", Map.of(0, "NONE 0 -1 0"),
            "nope", Map.of(0, "INVALID_REQUEST -1 -1 -1")), answered);
    }

    /** Sends a ListOffsets (v9) over a socket of its own and returns the answer. */
    private ListOffsetsResponseData listOffsets(final ListOffsetsRequestData data) throws Exception
    {
        final short version = 9;
        final RequestHeaderData header = new RequestHeaderData().setRequestApiKey((short)2).setRequestApiVersion(version)
            .setCorrelationId(11).setClientId("wire-test");
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final ByteBuffer request = ByteBuffer.allocate(header.size(cache, (short)2) + data.size(cache, version));
        header.write(new ByteBufferAccessor(request), cache, (short)2);
        data.write(new ByteBufferAccessor(request), cache, version);
        request.flip();
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(10_000);
            final java.io.DataOutputStream out = new java.io.DataOutputStream(socket.getOutputStream());
            out.writeInt(request.remaining());
            out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
            final java.io.DataInputStream in = new java.io.DataInputStream(socket.getInputStream());
            final byte[] bytes = new byte[in.readInt()];
            in.readFully(bytes);
            final ByteBuffer response = ByteBuffer.wrap(bytes);
            assertEquals(11, ResponseHeader.parse(response, (short)1).correlationId());
            return new ListOffsetsResponseData(new ByteBufferAccessor(response), version);
        }
    }
}
