package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.DescribeConsumerGroupsOptions;
import org.apache.kafka.clients.admin.DescribeTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The read paths Kafka 4.4's KafkaApis checks besides produce and fetch — OffsetFetch of several groups, DescribeLogDirs,
 * ListTransactions, DescribeTransactions, DescribeProducers, ElectLeaders, OffsetDelete's topic — and ACL changes seen by a
 * client that stays connected (a deletion, a DENY, a PREFIXED pattern), with StandardAuthorizer on one broker, SASL PLAIN
 * users {@code admin} (a super user) and {@code carol} (only the ACLs a test gives her), kafka-clients over real sockets.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AclReadPathsTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
        + "user_admin=\"admin-pw\" user_carol=\"carol-pw\";";
    private static final String CAROL = "User:carol";
    /** The principal of the PLAINTEXT listener, for the raw requests. */
    private static final String ANONYMOUS = "User:ANONYMOUS";

    private RunningBroker broker;

    @BeforeAll
    void start(@TempDir final Path dir) throws Exception
    {
        broker = new RunningBroker(dir, Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0",
            "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "User:admin"));
    }

    @AfterAll
    void stop() throws Exception
    {
        broker.close();
    }

    private Map<String, Object> login(final String user)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        c.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
            + "\" password=\"" + user + "-pw\";");
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        c.put(CommonClientConfigs.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return c;
    }

    private Admin admin(final String user)
    {
        return Admin.create(login(user));
    }

    /** A producer of {@code user}: transactional when {@code transactionalId} is given, else neither (acks=1). */
    private KafkaProducer<byte[], byte[]> producer(final String user, final String transactionalId)
    {
        final Map<String, Object> c = login(user);
        c.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        if (transactionalId == null)
        {
            c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, false);
            c.put(ProducerConfig.ACKS_CONFIG, "1");
        }
        else
        {
            c.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        }
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
        return new KafkaProducer<>(c, new ByteArraySerializer(), new ByteArraySerializer());
    }

    private static AclBinding acl(final String principal, final ResourceType type, final String name, final PatternType pattern,
        final AclOperation operation, final AclPermissionType permission)
    {
        return new AclBinding(new ResourcePattern(type, name, pattern), new AccessControlEntry(principal, "*", operation, permission));
    }

    private static AclBinding carolMay(final ResourceType type, final String name, final AclOperation operation)
    {
        return acl(CAROL, type, name, PatternType.LITERAL, operation, AclPermissionType.ALLOW);
    }

    private void grant(final AclBinding... acls) throws Exception
    {
        try (Admin admin = admin("admin"))
        {
            admin.createAcls(List.of(acls)).all().get(30, TimeUnit.SECONDS);
        }
    }

    private void revoke(final AclBinding... acls) throws Exception
    {
        try (Admin admin = admin("admin"))
        {
            admin.deleteAcls(List.of(acls).stream().map(AclBinding::toFilter).toList()).all().get(30, TimeUnit.SECONDS);
        }
    }

    private void topics(final String... names) throws Exception
    {
        try (Admin admin = admin("admin"))
        {
            admin.createTopics(List.of(names).stream().map(n -> new NewTopic(n, 1, (short)1)).toList()).all().get(30, TimeUnit.SECONDS);
        }
        for (final String name : names)
        {
            Await.await(() -> broker.broker.topics().topic(name) != null, Duration.ofSeconds(30), "topic " + name);
        }
    }

    @Test
    void offsetFetchOfSeveralGroupsChecksEachGroupAndEachTopic() throws Exception
    {
        topics("of-secret", "of-open");
        final TopicPartition secret = new TopicPartition("of-secret", 0);
        final TopicPartition open = new TopicPartition("of-open", 0);
        try (Admin admin = admin("admin"))
        {
            for (final String group : List.of("of-g-secret", "of-g-mine"))
            {
                admin.alterConsumerGroupOffsets(group, Map.of(secret, new OffsetAndMetadata(1, "m"), open, new OffsetAndMetadata(2)))
                    .all().get(30, TimeUnit.SECONDS);
            }
        }
        grant(acl(ANONYMOUS, ResourceType.GROUP, "of-g-mine", PatternType.LITERAL, AclOperation.DESCRIBE, AclPermissionType.ALLOW),
            acl(ANONYMOUS, ResourceType.TOPIC, "of-open", PatternType.LITERAL, AclOperation.DESCRIBE, AclPermissionType.ALLOW));
        // two groups in one OffsetFetch v8, as the Admin batches them (whose FindCoordinator would refuse the secret group
        // first), from User:ANONYMOUS on the PLAINTEXT listener
        try (RawClient raw = new RawClient(broker.broker.address("PLAINTEXT").getPort()))
        {
            final List<OffsetFetchResponseData.OffsetFetchResponseGroup> every = offsetFetch(raw, null);
            assertEquals(Errors.GROUP_AUTHORIZATION_FAILED.code(), every.get(0).errorCode());
            assertEquals(List.of(), every.get(0).topics(), "nothing of the refused group");
            assertEquals(Errors.NONE.code(), every.get(1).errorCode());
            assertEquals(List.of("of-open"), every.get(1).topics().stream().map(OffsetFetchResponseData.OffsetFetchResponseTopics::name)
                .toList(), "a topic it may not DESCRIBE is left out of the every-offset form");
            assertEquals(2, every.get(1).topics().get(0).partitions().get(0).committedOffset());

            final List<OffsetFetchResponseData.OffsetFetchResponseGroup> named = offsetFetch(raw, List.of(
                new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("of-secret").setPartitionIndexes(List.of(0)),
                new OffsetFetchRequestData.OffsetFetchRequestTopics().setName("of-open").setPartitionIndexes(List.of(0))));
            assertEquals(Errors.GROUP_AUTHORIZATION_FAILED.code(), named.get(0).errorCode());
            named.get(0).topics().forEach(t -> t.partitions().forEach(p -> assertEquals(-1, p.committedOffset(), "nothing read")));
            final var mine = named.get(1).topics();
            assertEquals(Errors.TOPIC_AUTHORIZATION_FAILED.code(), mine.get(0).partitions().get(0).errorCode());
            assertEquals(-1, mine.get(0).partitions().get(0).committedOffset());
            assertEquals(Errors.NONE.code(), mine.get(1).partitions().get(0).errorCode());
            assertEquals(2, mine.get(1).partitions().get(0).committedOffset());
        }
    }

    /** An OffsetFetch v8 of the groups of-g-secret and of-g-mine, each for {@code topics} (null: every offset). */
    private static List<OffsetFetchResponseData.OffsetFetchResponseGroup> offsetFetch(final RawClient raw,
        final List<OffsetFetchRequestData.OffsetFetchRequestTopics> topics) throws Exception
    {
        final short version = 8;
        final OffsetFetchRequestData request = new OffsetFetchRequestData().setGroups(List.of(
            new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("of-g-secret").setTopics(topics),
            new OffsetFetchRequestData.OffsetFetchRequestGroup().setGroupId("of-g-mine").setTopics(topics)));
        final List<OffsetFetchResponseData.OffsetFetchResponseGroup> groups = new OffsetFetchResponseData(
            new ByteBufferAccessor(raw.exchange(ApiKeys.OFFSET_FETCH, version, request)), version).groups();
        assertEquals(List.of("of-g-secret", "of-g-mine"), groups.stream().map(OffsetFetchResponseData.OffsetFetchResponseGroup::groupId)
            .toList());
        return groups;
    }

    @Test
    void describeLogDirsAndElectLeadersNeedTheCluster() throws Exception
    {
        topics("ld-topic");
        final TopicPartition tp = new TopicPartition("ld-topic", 0);
        try (Admin admin = admin("admin"); Admin carol = admin("carol"))
        {
            final int node = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().id();
            assertTrue(admin.describeLogDirs(List.of(node)).allDescriptions().get(30, TimeUnit.SECONDS).get(node).values().stream()
                .anyMatch(d -> d.replicaInfos().containsKey(tp)), "a super user sees the topic's log dir");
            AclAuthorizationTest.cause(ClusterAuthorizationException.class, () -> carol.describeLogDirs(List.of(node)).allDescriptions().get(30, TimeUnit.SECONDS));
            AclAuthorizationTest.cause(ClusterAuthorizationException.class, () -> carol.electLeaders(ElectionType.PREFERRED, Set.of(tp)).partitions()
                .get(30, TimeUnit.SECONDS).get(tp).orElseThrow(() -> new AssertionError("elected")));

            grant(carolMay(ResourceType.CLUSTER, "kafka-cluster", AclOperation.DESCRIBE));
            assertTrue(carol.describeLogDirs(List.of(node)).allDescriptions().get(30, TimeUnit.SECONDS).get(node).values().stream()
                .anyMatch(d -> d.replicaInfos().containsKey(tp)), "with DESCRIBE on the cluster");
        }
    }

    @Test
    void transactionsAndProducersAreDescribedOnlyToWhoMayDescribeThem() throws Exception
    {
        topics("tx-topic");
        final TopicPartition tp = new TopicPartition("tx-topic", 0);
        try (KafkaProducer<byte[], byte[]> producer = producer("admin", "tx-hidden"); Admin carol = admin("carol"))
        {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("tx-topic", new byte[] {1})).get(30, TimeUnit.SECONDS);
            try (Admin admin = admin("admin"))
            {
                Await.await(() -> ids(admin).contains("tx-hidden"), Duration.ofSeconds(30), "the open transaction listed");
                assertEquals(Set.of(tp), admin.describeTransactions(List.of("tx-hidden")).description("tx-hidden").get(30, TimeUnit.SECONDS)
                    .topicPartitions());
            }
            assertFalse(ids(carol).contains("tx-hidden"), "an id she may not DESCRIBE is left out");
            AclAuthorizationTest.cause(TransactionalIdAuthorizationException.class, () -> carol.describeTransactions(List.of("tx-hidden"))
                .description("tx-hidden").get(30, TimeUnit.SECONDS));

            grant(carolMay(ResourceType.TRANSACTIONAL_ID, "tx-hidden", AclOperation.DESCRIBE));
            assertTrue(ids(carol).contains("tx-hidden"));
            assertEquals(Set.of(), carol.describeTransactions(List.of("tx-hidden")).description("tx-hidden").get(30, TimeUnit.SECONDS)
                .topicPartitions(), "a topic she may not DESCRIBE is left out of the transaction's partitions");

            // DESCRIBE on the topic (the Admin's leader lookup needs it) shows it in the transaction, but its producers need READ
            grant(carolMay(ResourceType.TOPIC, "tx-topic", AclOperation.DESCRIBE));
            assertEquals(Set.of(tp), carol.describeTransactions(List.of("tx-hidden")).description("tx-hidden").get(30, TimeUnit.SECONDS)
                .topicPartitions());
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> carol.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS));
            grant(carolMay(ResourceType.TOPIC, "tx-topic", AclOperation.READ));
            assertEquals(1, carol.describeProducers(List.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS).activeProducers().size());
            producer.abortTransaction();
        }
    }

    private static Set<String> ids(final Admin admin) throws Exception
    {
        return admin.listTransactions().all().get(30, TimeUnit.SECONDS).stream().map(TransactionListing::transactionalId)
            .collect(Collectors.toSet());
    }

    @Test
    void offsetDeleteNeedsReadOnTheTopic() throws Exception
    {
        topics("od-topic");
        final TopicPartition tp = new TopicPartition("od-topic", 0);
        try (Admin admin = admin("admin"); Admin carol = admin("carol"))
        {
            admin.alterConsumerGroupOffsets("od-group", Map.of(tp, new OffsetAndMetadata(3))).all().get(30, TimeUnit.SECONDS);
            grant(carolMay(ResourceType.GROUP, "od-group", AclOperation.DELETE));
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> carol.deleteConsumerGroupOffsets("od-group", Set.of(tp)).partitionResult(tp)
                .get(30, TimeUnit.SECONDS));
            assertEquals(Map.of(tp, new OffsetAndMetadata(3)), admin.listConsumerGroupOffsets("od-group").partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS), "not deleted");

            grant(carolMay(ResourceType.TOPIC, "od-topic", AclOperation.READ));
            carol.deleteConsumerGroupOffsets("od-group", Set.of(tp)).partitionResult(tp).get(30, TimeUnit.SECONDS);
            assertEquals(Map.of(), admin.listConsumerGroupOffsets("od-group").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void anAclDeletedWhileConnectedHoldsOnTheNextRequest() throws Exception
    {
        topics("live-topic");
        final AclBinding write = carolMay(ResourceType.TOPIC, "live-topic", AclOperation.WRITE);
        final AclBinding read = carolMay(ResourceType.TOPIC, "live-topic", AclOperation.READ);
        grant(write, read);
        final Map<String, Object> c = login("carol");
        c.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaProducer<byte[], byte[]> producer = producer("carol", null);
             KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer()))
        {
            producer.send(new ProducerRecord<>("live-topic", new byte[] {1})).get(30, TimeUnit.SECONDS);
            consumer.assign(List.of(new TopicPartition("live-topic", 0)));
            Await.await(() -> !consumer.poll(Duration.ofMillis(100)).isEmpty(), Duration.ofSeconds(30), "her record read");

            revoke(write, read);
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> producer.send(new ProducerRecord<>("live-topic", new byte[] {2})).get(30, TimeUnit.SECONDS));
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> pollUntilThrown(consumer));
        }
    }

    /**
     * The connection's cached decision on its latest transactional id (a transactional produce asks the authorizer nothing in
     * steady state) is exact and dropped on an ACL change: over one SASL connection as carol, raw Produce v12 of {@code txa}
     * (her WRITE ACL) is taken, of {@code txb} (same length, no ACL) refused, of {@code txa} again taken; once her
     * {@code txa} ACL is deleted, {@code txa}'s next produce on the same connection is TRANSACTIONAL_ID_AUTHORIZATION_FAILED
     * and nothing is appended.
     */
    @Test
    void aTransactionalIdsCachedDecisionIsExactAndDroppedWhenItsAclIsDeleted() throws Exception
    {
        topics("txid-topic");
        final TopicPartition tp = new TopicPartition("txid-topic", 0);
        final AclBinding txa = carolMay(ResourceType.TRANSACTIONAL_ID, "txa", AclOperation.WRITE);
        grant(carolMay(ResourceType.TOPIC, "txid-topic", AclOperation.WRITE), txa);
        try (RawClient asAdmin = sasl("admin"); RawClient carol = sasl("carol"); Admin admin = admin("admin"))
        {
            final InitProducerIdResponseData a = ProduceVerificationTest.init(asAdmin, "txa");
            final InitProducerIdResponseData b = ProduceVerificationTest.init(asAdmin, "txb");
            assertEquals("NONE", produce(carol, "txa", a, 0));
            assertEquals("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", produce(carol, "txb", b, 0), "an id of the same length without an ACL");
            assertEquals("NONE", produce(carol, "txa", a, 1), "the allowed id again");
            final long end = admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS).offset();
            assertEquals(2, end, "her two records");

            revoke(txa);
            assertEquals("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", produce(carol, "txa", a, 2), "after the ACL was deleted");
            assertEquals(end, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(30, TimeUnit.SECONDS).offset(),
                "nothing appended");
        }
    }

    /** A raw connection to the SASL listener, authenticated (SaslHandshake v1 PLAIN, SaslAuthenticate v2) as {@code user}. */
    private RawClient sasl(final String user) throws Exception
    {
        final RawClient raw = new RawClient(broker.broker.address("SASL_PLAINTEXT").getPort());
        assertEquals(Errors.NONE.code(), new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_HANDSHAKE,
            (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"))), (short)1).errorCode());
        assertEquals(Errors.NONE.code(), new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_AUTHENTICATE,
            (short)2, new SaslAuthenticateRequestData().setAuthBytes((user + "\0" + user + "\0" + user + "-pw")
                .getBytes(StandardCharsets.UTF_8)))), (short)2).errorCode(), user + " authenticated");
        return raw;
    }

    /** The error of a transactional Produce v12 of one record to txid-topic 0 by {@code init}'s producer, sequence {@code sequence}. */
    private static String produce(final RawClient raw, final String transactionalId, final InitProducerIdResponseData init,
        final int sequence) throws Exception
    {
        final short version = 12;
        return ProduceVerificationTest.produceError(raw.exchange(ApiKeys.PRODUCE, version, ProduceVerificationTest.produceRequest(
            transactionalId, "txid-topic", 0, init.producerId(), init.producerEpoch(), sequence)), version);
    }

    @Test
    void denyAndPrefixedAclsEndToEnd() throws Exception
    {
        topics("pfx-open", "pfx-denied");
        grant(acl(CAROL, ResourceType.TOPIC, "pfx-", PatternType.PREFIXED, AclOperation.ALL, AclPermissionType.ALLOW),
            acl(CAROL, ResourceType.TOPIC, "pfx-denied", PatternType.LITERAL, AclOperation.WRITE, AclPermissionType.DENY));
        try (KafkaProducer<byte[], byte[]> producer = producer("carol", null))
        {
            producer.send(new ProducerRecord<>("pfx-open", new byte[] {1})).get(30, TimeUnit.SECONDS);
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> producer.send(new ProducerRecord<>("pfx-denied", new byte[] {1})).get(30, TimeUnit.SECONDS));
        }
        final Map<String, Object> c = login("carol");
        c.remove(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c, new ByteArrayDeserializer(), new ByteArrayDeserializer()))
        {
            // the DENY is of WRITE only: the prefixed ALLOW still lets her read the denied topic (empty) and the open one
            consumer.assign(List.of(new TopicPartition("pfx-open", 0), new TopicPartition("pfx-denied", 0)));
            Await.await(() -> !consumer.poll(Duration.ofMillis(100)).isEmpty(), Duration.ofSeconds(30), "the prefixed topic read");
        }
        try (Admin carol = admin("carol"))
        {
            assertEquals(Set.of("pfx-open", "pfx-denied"), carol.listTopics().names().get(30, TimeUnit.SECONDS).stream()
                .filter(n -> n.startsWith("pfx-")).collect(Collectors.toSet()));
            AclAuthorizationTest.cause(TopicAuthorizationException.class, () -> carol.describeTopics(List.of("live-nothing")).allTopicNames().get(30, TimeUnit.SECONDS));
        }
    }

    /**
     * {@code includeAuthorizedOperations} of Admin's describeCluster, describeTopics and describeConsumerGroups (Metadata,
     * DescribeCluster and DescribeGroups underneath): the operations Kafka 4.4 reports — each one the resource type supports
     * that the principal is allowed, implied ones included; the cluster's none without DESCRIBE on it; a super user's every
     * supported one. They were left out (null) before.
     */
    @Test
    void authorizedOperationsAreReportedAsKafkaReportsThem() throws Exception
    {
        topics("ops-topic");
        try (Admin admin = admin("admin"))
        {
            admin.alterConsumerGroupOffsets("ops-group", Map.of(new TopicPartition("ops-topic", 0), new OffsetAndMetadata(1)))
                .all().get(30, TimeUnit.SECONDS);
            assertEquals(Set.of(AclOperation.CREATE, AclOperation.CLUSTER_ACTION, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS,
                AclOperation.IDEMPOTENT_WRITE, AclOperation.ALTER, AclOperation.DESCRIBE), admin.describeCluster(
                    new DescribeClusterOptions().includeAuthorizedOperations(true)).authorizedOperations().get(30, TimeUnit.SECONDS));
        }
        grant(carolMay(ResourceType.TOPIC, "ops-topic", AclOperation.READ), carolMay(ResourceType.TOPIC, "ops-topic", AclOperation.ALTER_CONFIGS),
            carolMay(ResourceType.GROUP, "ops-group", AclOperation.DELETE));
        try (Admin carol = admin("carol"))
        {
            assertEquals(Set.of(), carol.describeCluster(new DescribeClusterOptions().includeAuthorizedOperations(true))
                .authorizedOperations().get(30, TimeUnit.SECONDS), "no DESCRIBE on the cluster: none reported");
            assertEquals(Set.of(AclOperation.READ, AclOperation.DESCRIBE, AclOperation.ALTER_CONFIGS, AclOperation.DESCRIBE_CONFIGS),
                carol.describeTopics(List.of("ops-topic"), new DescribeTopicsOptions().includeAuthorizedOperations(true)).allTopicNames()
                    .get(30, TimeUnit.SECONDS).get("ops-topic").authorizedOperations());
            assertEquals(Set.of(AclOperation.DELETE, AclOperation.DESCRIBE), carol.describeConsumerGroups(List.of("ops-group"),
                new DescribeConsumerGroupsOptions().includeAuthorizedOperations(true)).all().get(30, TimeUnit.SECONDS).get("ops-group")
                .authorizedOperations());
            assertEquals(null, carol.describeTopics(List.of("ops-topic")).allTopicNames().get(30, TimeUnit.SECONDS).get("ops-topic")
                .authorizedOperations(), "not asked: not reported");
        }
        grant(carolMay(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER));
        try (Admin carol = admin("carol"))
        {
            assertEquals(Set.of(AclOperation.ALTER, AclOperation.DESCRIBE), carol.describeCluster(
                new DescribeClusterOptions().includeAuthorizedOperations(true)).authorizedOperations().get(30, TimeUnit.SECONDS));
        }
        revoke(carolMay(ResourceType.CLUSTER, "kafka-cluster", AclOperation.ALTER));
    }

    /** Polls until the consumer throws (the test's assertion), at most 30 s: a poll that never throws fails it. */
    private static void pollUntilThrown(final KafkaConsumer<byte[], byte[]> consumer)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
            assertTrue(records.isEmpty(), "nothing new to read");
        }
    }
}
