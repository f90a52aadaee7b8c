package io.ferrite.broker.e2e;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.quota.ClientQuotaAlteration;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.quota.ClientQuotaFilter;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With StandardAuthorizer's rules on, the requests only brokers send and requests by topic id, raw on a PLAINTEXT listener
 * (principal {@code User:ANONYMOUS}, no ACL unless a test gives one) while {@code User:admin}, a super user on
 * SASL_PLAINTEXT, sets up with kafka-clients: WriteTxnMarkers and AddPartitionsToTxn v4+ need CLUSTER_ACTION on the
 * cluster (Kafka 4.4's answers: every partition, resp. the top-level error), and a Fetch v13 / Produce v13 naming a deleted
 * or unknown topic id is answered UNKNOWN_TOPIC_ID on a connection that stays open. One broker for the class.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AclBrokerRequestsTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required user_admin=\"admin-secret\";";

    private RunningBroker broker;

    @BeforeAll
    void start(@TempDir final Path dir) throws Exception
    {
        broker = new RunningBroker(dir, Map.of("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms", "PLAIN", "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS,
            "authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "User:admin"));
    }

    @AfterAll
    void stop() throws Exception
    {
        broker.close();
    }

    private Map<String, Object> asAdmin() throws Exception
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.broker.address("SASL_PLAINTEXT").getPort());
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        c.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" "
            + "password=\"admin-secret\";");
        return c;
    }

    private RawClient anonymous()
    {
        try
        {
            return new RawClient(broker.broker.address("PLAINTEXT").getPort());
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    private Uuid createTopic(final Admin admin, final String name) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(name, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
        io.ferrite.testing.Await.await(() -> broker.broker.topics().topic(name) != null, java.time.Duration.ofSeconds(30), "topic " + name);
        return admin.describeTopics(List.of(name)).allTopicNames().get(30, TimeUnit.SECONDS).get(name).topicId();
    }

    private static ProducerState openTransaction(final Admin admin, final TopicPartition tp) throws Exception
    {
        final List<ProducerState> producers = admin.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS)
            .activeProducers();
        assertEquals(1, producers.size(), "producers of " + tp + ": " + producers);
        return producers.get(0);
    }

    private static WriteTxnMarkersResponseData abort(final RawClient raw, final ProducerState p, final TopicPartition tp) throws Exception
    {
        final short version = 1;
        final WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(
            new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(p.producerId()).setProducerEpoch((short)p.producerEpoch())
                .setTransactionResult(false).setCoordinatorEpoch(p.coordinatorEpoch().orElse(0)).setTopics(List.of(
                    new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(tp.topic()).setPartitionIndexes(List.of(tp.partition()))
                ))));
        return new WriteTxnMarkersResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.WRITE_TXN_MARKERS, version, request)), version);
    }

    private static AddPartitionsToTxnResponseData verify(final RawClient raw, final String transactionalId, final ProducerState p,
        final TopicPartition tp) throws Exception
    {
        final short version = 4;
        final AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection topics =
            new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopicCollection();
        topics.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(tp.topic()).setPartitions(List.of(tp.partition())));
        final AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection transactions =
            new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransactionCollection();
        transactions.add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction().setTransactionalId(transactionalId)
            .setProducerId(p.producerId()).setProducerEpoch((short)p.producerEpoch()).setVerifyOnly(true).setTopics(topics));
        return new AddPartitionsToTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.ADD_PARTITIONS_TO_TXN, version,
            new AddPartitionsToTxnRequestData().setTransactions(transactions))), version);
    }

    /**
     * Admin's transaction stays open while ANONYMOUS, without CLUSTER_ACTION, sends the marker that would abort it and the
     * broker-to-coordinator verification of it; with CLUSTER_ACTION granted both are served, and the abort ends it.
     */
    @Test
    void writeTxnMarkersAndBatchedAddPartitionsNeedClusterAction() throws Exception
    {
        final TopicPartition tp = new TopicPartition("secret", 0);
        final Map<String, Object> producerConfig = asAdmin();
        producerConfig.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-admin");
        producerConfig.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        producerConfig.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        try (Admin admin = Admin.create(asAdmin()); KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerConfig);
            RawClient raw = anonymous())
        {
            createTopic(admin, tp.topic());
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(tp.topic(), "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            final ProducerState open = openTransaction(admin, tp);
            assertTrue(open.currentTransactionStartOffset().isPresent(), "the transaction is open: " + open);

            final WriteTxnMarkersResponseData refused = abort(raw, open, tp);
            assertEquals(1, refused.markers().size(), refused.toString());
            assertEquals(open.producerId(), refused.markers().get(0).producerId());
            assertEquals(Errors.CLUSTER_AUTHORIZATION_FAILED.code(), refused.markers().get(0).topics().get(0).partitions().get(0).errorCode(),
                refused.toString());
            final AddPartitionsToTxnResponseData refusedVerify = verify(raw, "tx-admin", open, tp);
            assertEquals(Errors.CLUSTER_AUTHORIZATION_FAILED.code(), refusedVerify.errorCode(), refusedVerify.toString());
            assertEquals(0, refusedVerify.resultsByTransaction().size(), refusedVerify.toString());
            assertEquals(open.currentTransactionStartOffset(), openTransaction(admin, tp).currentTransactionStartOffset(),
                "the refused marker wrote nothing: the transaction is still open");

            admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
                new AccessControlEntry("User:ANONYMOUS", "*", AclOperation.CLUSTER_ACTION, AclPermissionType.ALLOW)))).all()
                .get(30, TimeUnit.SECONDS);
            final AddPartitionsToTxnResponseData verified = verify(raw, "tx-admin", open, tp);
            assertEquals(Errors.NONE.code(), verified.errorCode(), verified.toString());
            assertEquals(Errors.NONE.code(), verified.resultsByTransaction().iterator().next().topicResults().iterator().next()
                .resultsByPartition().iterator().next().partitionErrorCode(), verified.toString());
            final WriteTxnMarkersResponseData served = abort(raw, open, tp);
            assertEquals(Errors.NONE.code(), served.markers().get(0).topics().get(0).partitions().get(0).errorCode(), served.toString());
            assertTrue(openTransaction(admin, tp).currentTransactionStartOffset().isEmpty(), "the granted abort ended the transaction");
        }
    }

    /** A topic deleted (and an id never made) fetched and produced to by id: UNKNOWN_TOPIC_ID, and the connection serves on. */
    @Test
    void aDeletedOrUnknownTopicIdIsAnsweredUnknownTopicIdNotADisconnect() throws Exception
    {
        final Uuid gone;
        try (Admin admin = Admin.create(asAdmin()))
        {
            gone = createTopic(admin, "gone");
            admin.deleteTopics(List.of("gone")).all().get(30, TimeUnit.SECONDS);
            io.ferrite.testing.Await.await(() -> broker.broker.topics().topic("gone") == null, java.time.Duration.ofSeconds(30), "gone deleted");
        }
        try (RawClient raw = anonymous())
        {
            for (final Uuid id : new Uuid[] {gone, Uuid.randomUuid()})
            {
                final short fetchVersion = 13;
                final FetchRequestData fetch = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
                    .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopicId(id).setPartitions(List.of(
                        new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(1 << 16)))));
                final FetchResponseData fetched = new FetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FETCH, fetchVersion,
                    fetch)), fetchVersion);
                assertEquals(Errors.UNKNOWN_TOPIC_ID.code(), fetched.responses().get(0).partitions().get(0).errorCode(), fetched.toString());

                final short produceVersion = 13;
                final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
                topics.add(new ProduceRequestData.TopicProduceData().setTopicId(id).setPartitionData(List.of(
                    new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.NONE,
                        new SimpleRecord("v".getBytes(StandardCharsets.UTF_8)))))));
                final ProduceResponseData produced = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.PRODUCE,
                    produceVersion, new ProduceRequestData().setAcks((short)1).setTimeoutMs(10_000).setTopicData(topics))), produceVersion);
                assertEquals(Errors.UNKNOWN_TOPIC_ID.code(), produced.responses().iterator().next().partitionResponses().get(0).errorCode(),
                    produced.toString());
            }
        }
    }

    /**
     * Client quotas with the authorizer on (review quota47 M1): ANONYMOUS without an ACL is refused both APIs with
     * CLUSTER_AUTHORIZATION_FAILED, AlterClientQuotas with the text of Kafka 4.4's controller ("Request Request(...) needs
     * ALTER_CONFIGS permission.") and DescribeClientQuotas with none (Kafka's broker answers a null message, which the
     * client reads as the error's default); DESCRIBE_CONFIGS on the cluster opens the describe only, ALTER_CONFIGS the alter.
     */
    @Test
    void clientQuotasNeedDescribeConfigsAndAlterConfigsOnTheCluster() throws Exception
    {
        final ClientQuotaEntity bob = new ClientQuotaEntity(Map.of(ClientQuotaEntity.USER, "bob"));
        final List<ClientQuotaAlteration> alteration = List.of(new ClientQuotaAlteration(bob,
            List.of(new ClientQuotaAlteration.Op("producer_byte_rate", 2048.0))));
        final Map<String, Object> anonymousConfig = Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG,
            "127.0.0.1:" + broker.broker.address("PLAINTEXT").getPort());
        try (Admin admin = Admin.create(asAdmin()); Admin anonymous = Admin.create(anonymousConfig))
        {
            final Throwable describeRefused = assertThrows(ExecutionException.class, () -> anonymous.describeClientQuotas(
                ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS)).getCause();
            assertInstanceOf(ClusterAuthorizationException.class, describeRefused);
            assertEquals("Cluster authorization failed.", describeRefused.getMessage());
            assertAlterRefused(anonymous, alteration);

            grant(admin, AclOperation.DESCRIBE_CONFIGS);
            assertEquals(Map.of(), anonymous.describeClientQuotas(ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS));
            assertAlterRefused(anonymous, alteration);

            grant(admin, AclOperation.ALTER_CONFIGS);
            anonymous.alterClientQuotas(alteration).all().get(30, TimeUnit.SECONDS);
            assertEquals(Map.of(bob, Map.of("producer_byte_rate", 2048.0)),
                admin.describeClientQuotas(ClientQuotaFilter.all()).entities().get(30, TimeUnit.SECONDS));
        }
    }

    private static void assertAlterRefused(final Admin anonymous, final List<ClientQuotaAlteration> alteration)
    {
        final Throwable refused = assertThrows(ExecutionException.class, () -> anonymous.alterClientQuotas(alteration).all()
            .get(30, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(ClusterAuthorizationException.class, refused);
        final String message = refused.getMessage();
        assertTrue(message.startsWith("Request Request(processor=") && message.contains(", listenerName=ListenerName(PLAINTEXT), ")
            && message.endsWith(", buffer=null, envelope=Optional.empty) needs ALTER_CONFIGS permission."), message);
    }

    private static void grant(final Admin admin, final AclOperation operation) throws Exception
    {
        admin.createAcls(List.of(new AclBinding(new ResourcePattern(ResourceType.CLUSTER, "kafka-cluster", PatternType.LITERAL),
            new AccessControlEntry("User:ANONYMOUS", "*", operation, AclPermissionType.ALLOW)))).all().get(30, TimeUnit.SECONDS);
    }
}
