package io.ferrite.broker.e2e;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.ClusterAuthorizationException;
import org.apache.kafka.common.errors.GroupAuthorizationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.TopicAuthorizationException;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ACL authorization with {@code authorizer.class.name} set to Kafka's StandardAuthorizer, driven by real kafka-clients over
 * SASL_PLAINTEXT with PLAIN users: {@code admin} a super user, {@code alice} given ACLs, {@code bob} given less. One broker
 * for the class. The ACL APIs by Admin and by Kafka's {@code AclCommand}, the ACLs across a restart, and for each API
 * enforced a principal with and one without the ACL it needs, answered with Kafka's exception.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AclAuthorizationTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
        + "user_admin=\"admin-secret\" user_alice=\"alice-secret\" user_bob=\"bob-secret\";";

    private Path dir;
    private RunningBroker broker;

    @BeforeAll
    void start(@TempDir final Path dir) throws Exception
    {
        this.dir = dir;
        broker = new RunningBroker(dir, Map.of("listeners", "SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms", "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS, "authorizer.class.name",
            "org.apache.kafka.metadata.authorizer.StandardAuthorizer", "super.users", "User:admin"));
    }

    @AfterAll
    void stop() throws Exception
    {
        broker.close();
    }

    private Map<String, Object> as(final String user)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap());
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, "PLAIN");
        c.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"" + user
            + "\" password=\"" + user + "-secret\";");
        return c;
    }

    private Admin admin(final String user)
    {
        final Map<String, Object> c = as(user);
        c.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000);
        c.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return Admin.create(c);
    }

    private KafkaProducer<byte[], byte[]> producer(final String user)
    {
        return producer(user, true);
    }

    private KafkaProducer<byte[], byte[]> producer(final String user, final boolean idempotent)
    {
        return producer(user, idempotent, Map.of());
    }

    private KafkaProducer<byte[], byte[]> producer(final String user, final boolean idempotent, final Map<String, Object> extra)
    {
        final Map<String, Object> c = as(user);
        c.putAll(extra);
        c.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        if (!idempotent)
        {
            c.put(ProducerConfig.ACKS_CONFIG, "1");
        }
        c.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class);
        c.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        c.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, 20_000);
        c.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000);
        return new KafkaProducer<>(c);
    }

    private KafkaConsumer<byte[], byte[]> consumer(final String user, final String group)
    {
        final Map<String, Object> c = as(user);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        if (group != null)
        {
            c.put(ConsumerConfig.GROUP_ID_CONFIG, group);
            c.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        }
        return new KafkaConsumer<>(c);
    }

    private static AclBinding allow(final ResourceType type, final String name, final String user, final AclOperation operation)
    {
        return new AclBinding(new ResourcePattern(type, name, PatternType.LITERAL),
            new AccessControlEntry("User:" + user, "*", operation, AclPermissionType.ALLOW));
    }

    private void grant(final AclBinding... acls) throws Exception
    {
        try (Admin admin = admin("admin"))
        {
            admin.createAcls(List.of(acls)).all().get(30, TimeUnit.SECONDS);
        }
    }

    private void createTopic(final String name) throws Exception
    {
        try (Admin admin = admin("admin"))
        {
            admin.createTopics(List.of(new NewTopic(name, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
        }
        io.ferrite.testing.Await.await(() -> broker.broker.topics().topic(name) != null, Duration.ofSeconds(30), "topic " + name);
    }

    /** The client's exception of {@code type} that {@code call} ends in: itself or a cause (a future's, the producer's). */
    static <T extends Throwable> T cause(final Class<T> type, final ThrowingRunnable call)
    {
        final Throwable thrown = assertThrows(Throwable.class, call::run);
        // the client's exception: itself, or what a future or the producer's KafkaException wraps
        for (Throwable t = thrown; t != null; t = t.getCause())
        {
            if (type.isInstance(t))
            {
                return type.cast(t);
            }
        }
        return assertInstanceOf(type, thrown, "no " + type.getSimpleName() + " in " + thrown);
    }

    @FunctionalInterface
    interface ThrowingRunnable
    {
        void run() throws Exception;
    }

    @Test
    void aclApisNeedTheClusterAclsAndAnswerAsKafka() throws Exception
    {
        final AclBinding read = new AclBinding(new ResourcePattern(ResourceType.TOPIC, "acl-api", PatternType.PREFIXED),
            new AccessControlEntry("User:carol", "*", AclOperation.READ, AclPermissionType.ALLOW));
        try (Admin admin = admin("admin"); Admin alice = admin("alice"))
        {
            cause(ClusterAuthorizationException.class, () -> alice.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS));
            cause(ClusterAuthorizationException.class, () -> alice.createAcls(List.of(read)).all().get(30, TimeUnit.SECONDS));
            cause(ClusterAuthorizationException.class, () -> alice.deleteAcls(List.of(read.toFilter())).all().get(30, TimeUnit.SECONDS));

            admin.createAcls(List.of(read)).all().get(30, TimeUnit.SECONDS);
            final AclBindingFilter carols = new AclBindingFilter(ResourcePatternFilter.ANY,
                new AccessControlEntryFilter("User:carol", null, AclOperation.ANY, AclPermissionType.ANY));
            assertEquals(List.of(read), new ArrayList<>(admin.describeAcls(carols).values().get(30, TimeUnit.SECONDS)));
            // MATCH: the ACLs that apply to a topic of that name
            final AclBindingFilter match = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, "acl-api-x", PatternType.MATCH),
                AccessControlEntryFilter.ANY);
            assertTrue(admin.describeAcls(match).values().get(30, TimeUnit.SECONDS).contains(read));
            final AclBindingFilter literal = new AclBindingFilter(new ResourcePatternFilter(ResourceType.TOPIC, "acl-api-x", PatternType.LITERAL),
                AccessControlEntryFilter.ANY);
            assertTrue(admin.describeAcls(literal).values().get(30, TimeUnit.SECONDS).isEmpty());

            // alice may once she has ALTER and DESCRIBE on the cluster
            admin.createAcls(List.of(allow(ResourceType.CLUSTER, "kafka-cluster", "alice", AclOperation.ALTER))).all().get(30, TimeUnit.SECONDS);
            assertTrue(alice.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS).contains(read), "ALTER implies DESCRIBE");
            final Collection<AclBinding> deleted = alice.deleteAcls(List.of(carols)).all().get(30, TimeUnit.SECONDS);
            assertEquals(List.of(read), new ArrayList<>(deleted));
            assertTrue(admin.describeAcls(carols).values().get(30, TimeUnit.SECONDS).isEmpty());

            final AclBinding badCluster = allow(ResourceType.CLUSTER, "other", "carol", AclOperation.ALTER);
            final InvalidRequestException ex = cause(InvalidRequestException.class,
                () -> admin.createAcls(List.of(badCluster)).all().get(30, TimeUnit.SECONDS));
            assertEquals("The only valid name for the CLUSTER resource is kafka-cluster", ex.getMessage());
            admin.deleteAcls(List.of(allow(ResourceType.CLUSTER, "kafka-cluster", "alice", AclOperation.ALTER).toFilter()))
                .all().get(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void kafkaAclsCommandAddsListsAndRemovesAndTheAclsSurviveARestart() throws Exception
    {
        final Path config = dir.resolve("admin.properties");
        Files.writeString(config, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config="
            + "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"admin\" password=\"admin-secret\";\n",
            StandardCharsets.UTF_8);
        try (KafkaToolSession tools = new KafkaToolSession())
        {
            KafkaTool.Run run = acls(tools, config, "--add", "--allow-principal", "User:dave", "--operation", "Read", "--topic", "cmd-topic");
            assertEquals(0, run.status(), run.toString());
            run = acls(tools, config, "--list", "--topic", "cmd-topic");
            assertEquals(0, run.status(), run.toString());
            assertTrue(run.out().contains("(principal=User:dave, host=*, operation=READ, permissionType=ALLOW)"), run.toString());

            broker.restart();
            try (Admin admin = admin("admin"))
            {
                assertTrue(admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS)
                    .contains(allow(ResourceType.TOPIC, "cmd-topic", "dave", AclOperation.READ)), "the ACL after the restart");
            }
            run = acls(tools, config, "--remove", "--allow-principal", "User:dave", "--operation", "Read", "--topic", "cmd-topic", "--force");
            assertEquals(0, run.status(), run.toString());
            run = acls(tools, config, "--list", "--topic", "cmd-topic");
            assertFalse(run.out().contains("User:dave"), run.toString());
            broker.restart();
            try (Admin admin = admin("admin"))
            {
                assertFalse(admin.describeAcls(AclBindingFilter.ANY).values().get(30, TimeUnit.SECONDS)
                    .contains(allow(ResourceType.TOPIC, "cmd-topic", "dave", AclOperation.READ)), "removed for good");
            }
        }
    }

    /** kafka-acls.sh with {@code args} as the admin, in the test's child JVM of Kafka's tools. */
    private KafkaTool.Run acls(final KafkaToolSession tools, final Path config, final String... args) throws Exception
    {
        final List<String> all = new ArrayList<>(List.of("--bootstrap-server", broker.bootstrap(), "--command-config", config.toString()));
        all.addAll(List.of(args));
        return tools.run("org.apache.kafka.tools.AclCommand", all.toArray(new String[0]));
    }

    /**
     * Produce needs WRITE on the topic, an idempotent producer's InitProducerId WRITE on some topic; Metadata leaves out
     * what the principal may not DESCRIBE and refuses it by name.
     */
    @Test
    void produceAndMetadata() throws Exception
    {
        createTopic("m-produce");
        grant(allow(ResourceType.TOPIC, "m-produce", "alice", AclOperation.WRITE),
            allow(ResourceType.TOPIC, "m-produce", "bob", AclOperation.DESCRIBE));
        try (KafkaProducer<byte[], byte[]> alice = producer("alice"); KafkaProducer<byte[], byte[]> bob = producer("bob", false);
             KafkaProducer<byte[], byte[]> bobIdempotent = producer("bob", true))
        {
            alice.send(new ProducerRecord<>("m-produce", "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            cause(TopicAuthorizationException.class,
                () -> bob.send(new ProducerRecord<>("m-produce", "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS));
            // InitProducerId: IDEMPOTENT_WRITE on the cluster or WRITE on some topic, which alice has and bob has not
            cause(ClusterAuthorizationException.class, () -> bobIdempotent.send(new ProducerRecord<>("m-produce",
                "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS));
        }
        try (Admin alice = admin("alice"); Admin bob = admin("bob"))
        {
            assertTrue(alice.listTopics().names().get(30, TimeUnit.SECONDS).contains("m-produce"), "WRITE implies DESCRIBE");
            createTopic("m-hidden");
            final Set<String> seen = new HashSet<>(bob.listTopics().names().get(30, TimeUnit.SECONDS));
            assertTrue(seen.contains("m-produce"));
            assertFalse(seen.contains("m-hidden"), "left out");
            cause(TopicAuthorizationException.class, () -> bob.describeTopics(List.of("m-hidden")).allTopicNames().get(30, TimeUnit.SECONDS));
        }
    }

    /** Fetch needs READ on the topic; a group's APIs READ on the group (GROUP_AUTHORIZATION_FAILED first). */
    @Test
    void fetchAndGroups() throws Exception
    {
        createTopic("m-fetch");
        try (KafkaProducer<byte[], byte[]> admin = producer("admin"))
        {
            admin.send(new ProducerRecord<>("m-fetch", "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
        }
        grant(allow(ResourceType.TOPIC, "m-fetch", "alice", AclOperation.READ), allow(ResourceType.GROUP, "g-alice", "alice", AclOperation.READ),
            allow(ResourceType.TOPIC, "m-fetch", "bob", AclOperation.DESCRIBE), allow(ResourceType.GROUP, "g-bob", "bob", AclOperation.READ));
        try (KafkaConsumer<byte[], byte[]> alice = consumer("alice", "g-alice"))
        {
            alice.subscribe(List.of("m-fetch"));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int read = 0;
            while (read == 0 && System.nanoTime() < deadline)
            {
                read += alice.poll(Duration.ofMillis(200)).count();
            }
            assertEquals(1, read);
            alice.commitSync();
        }
        try (KafkaConsumer<byte[], byte[]> bob = consumer("bob", null))
        {
            bob.assign(List.of(new TopicPartition("m-fetch", 0)));
            bob.seekToBeginning(List.of(new TopicPartition("m-fetch", 0)));
            cause(TopicAuthorizationException.class, () -> pollUntilThrown(bob));
        }
        try (KafkaConsumer<byte[], byte[]> bob = consumer("bob", "g-alice"))
        {
            bob.subscribe(List.of("m-fetch"));
            cause(GroupAuthorizationException.class, () -> pollUntilThrown(bob));
        }
    }

    /**
     * The admin APIs on topics: CreateTopics (CREATE), CreatePartitions (ALTER), DeleteTopics (DELETE; DeleteRecords allowed only),
     * DescribeConfigs (DESCRIBE_CONFIGS) and IncrementalAlterConfigs (ALTER_CONFIGS): alice with ALL on her topics, bob
     * with DESCRIBE only (so that each request, not the Metadata before it, is what is refused).
     */
    @Test
    void topicAdminApis() throws Exception
    {
        createTopic("a-admin");
        grant(allow(ResourceType.TOPIC, "a-admin", "alice", AclOperation.ALL), allow(ResourceType.TOPIC, "a-new", "alice", AclOperation.CREATE),
            allow(ResourceType.TOPIC, "a-admin", "bob", AclOperation.DESCRIBE));
        final ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "a-admin");
        final Collection<AlterConfigOp> retention = List.of(new AlterConfigOp(new ConfigEntry("retention.ms", "3600000"),
            AlterConfigOp.OpType.SET));
        final TopicPartition tp = new TopicPartition("a-admin", 0);
        try (Admin alice = admin("alice"); Admin bob = admin("bob"))
        {
            cause(TopicAuthorizationException.class, () -> bob.createTopics(List.of(new NewTopic("b-new", 1, (short)1))).all()
                .get(30, TimeUnit.SECONDS));
            alice.createTopics(List.of(new NewTopic("a-new", 1, (short)1))).all().get(30, TimeUnit.SECONDS);

            cause(TopicAuthorizationException.class, () -> bob.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS));
            cause(TopicAuthorizationException.class, () -> bob.incrementalAlterConfigs(Map.of(resource, retention)).all()
                .get(30, TimeUnit.SECONDS));
            alice.incrementalAlterConfigs(Map.of(resource, retention)).all().get(30, TimeUnit.SECONDS);
            assertEquals("3600000", alice.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource)
                .get("retention.ms").value());

            cause(TopicAuthorizationException.class, () -> bob.createPartitions(Map.of("a-admin", NewPartitions.increaseTo(2))).all()
                .get(30, TimeUnit.SECONDS));
            // refused per partition with TOPIC_AUTHORIZATION_FAILED (not KAFKA_STORAGE_ERROR, which Admin retries until timeout)
            cause(TopicAuthorizationException.class, () -> bob.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(0))).all()
                .get(30, TimeUnit.SECONDS));
            alice.deleteRecords(Map.of(tp, RecordsToDelete.beforeOffset(0))).all().get(30, TimeUnit.SECONDS);
            cause(TopicAuthorizationException.class, () -> bob.deleteTopics(List.of("a-admin")).all().get(30, TimeUnit.SECONDS));
            alice.deleteTopics(List.of("a-admin")).all().get(30, TimeUnit.SECONDS);
        }
    }

    /** A transactional producer needs WRITE on its transactional id (FindCoordinator: DESCRIBE, implied) and on the topic. */
    @Test
    void transactionalIds() throws Exception
    {
        createTopic("t-txn");
        grant(allow(ResourceType.TOPIC, "t-txn", "alice", AclOperation.WRITE), allow(ResourceType.TOPIC, "t-txn", "bob", AclOperation.WRITE),
            allow(ResourceType.TRANSACTIONAL_ID, "tx-alice", "alice", AclOperation.WRITE));
        final Map<String, Object> alice = new HashMap<>(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-alice"));
        try (KafkaProducer<byte[], byte[]> producer = producer("alice", true, alice))
        {
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>("t-txn", "v".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            producer.commitTransaction();
        }
        try (KafkaProducer<byte[], byte[]> producer = producer("bob", true, Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "tx-bob")))
        {
            cause(TransactionalIdAuthorizationException.class, producer::initTransactions);
        }
    }

    private static void pollUntilThrown(final KafkaConsumer<byte[], byte[]> consumer)
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline)
        {
            consumer.poll(Duration.ofMillis(200));
        }
    }
}
