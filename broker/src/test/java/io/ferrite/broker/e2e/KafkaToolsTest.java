package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka 4.4's command-line tools that apply to one node ({@code docs/kafka-tools.md}), each run as
 * {@code bin/kafka-*.sh} runs it (its main class, in a child JVM ended after 90 s, so a hang fails the case) against one
 * broker, in order (a case may use what an earlier one made): those that work print what they print against a Kafka 4.4
 * node (the text checked for in a line of its output was taken from one, {@code /work/shared/kafka-ref}; kafka-delegation-tokens
 * fails there as here, PLAINTEXT), those that need an API Ferrite does not
 * have fail with the message and exit status they give against a Kafka without it (kafka-clients' "The node does not
 * support ..."). A case checks a line of the tool's output, or what the tool did or printed as a whole ({@link After}:
 * the topic altered or gone, the records produced read back, nothing printed where Kafka prints nothing).
 * kafka-features describe, kafka-broker-api-versions, kafka-log-dirs, kafka-delegation-tokens and kafka-transactions
 * have their own default-build tests (FeaturesToolTest, BrokerApiVersionsToolTest, LogDirsTest, DelegationTokensTest,
 * TransactionsToolTest) and are here too only as one line each; kafka-acls (AclsTest) and kafka-configs for brokers
 * (BrokerConfigsToolTest) are only there. Slow (one JVM per case, about 90 s under load): {@code mvn -B verify -Pslow},
 * which CI runs.
 */
@Tag("slow") // 40-odd tool JVMs, ~90 s under load: outside the default build, in `mvn -B verify -Pslow` (CI runs it)
class KafkaToolsTest
{
    private static final String T = "org.apache.kafka.tools.";
    @TempDir
    static Path dir;
    private static RunningBroker broker;

    /** What a case checks after the tool ran, besides its exit status. */
    interface After
    {
        void check(KafkaTool.Run run) throws Exception;
    }

    /** Kafka prints nothing on stdout for it. */
    private static final After PRINTS_NOTHING = run -> assertEquals(List.of(), run.lines(), run.toString());

    /**
     * One tool run: its main class and arguments ({B} the bootstrap address, {D} a directory for its files), a text one
     * of its lines holds ("" for none) and what else to check ({@code null} for nothing); at least one of the two.
     */
    record Case(String name, String input, int status, String expected, After after, String mainClass, String... args)
    {
        Case(final String name, final String input, final int status, final String expected, final String mainClass,
            final String... args)
        {
            this(name, input, status, expected, null, mainClass, args);
        }

        @Override
        public String toString()
        {
            return name;
        }
    }

    @BeforeAll
    static void start() throws Exception
    {
        broker = new RunningBroker(dir.resolve("data"), Map.of());
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("tools", 3, (short)1), new NewTopic("latency", 1, (short)1)))
                .all().get(30, TimeUnit.SECONDS);
        }
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            for (int i = 0; i < 30; i++)
            {
                producer.send(new ProducerRecord<>("tools", i % 3, null, ("record-" + i).getBytes(StandardCharsets.UTF_8)));
            }
            producer.flush();
        }
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "tools-group")))
        {
            consumer.commitSync(Map.of(new TopicPartition("tools", 0), new OffsetAndMetadata(5)));
        }
        Files.writeString(dir.resolve("delete.json"), "{\"partitions\":[{\"topic\":\"tools\",\"partition\":0,\"offset\":1}],\"version\":1}");
        Files.writeString(dir.resolve("move.json"), "{\"topics\":[{\"topic\":\"tools\"}],\"version\":1}");
        Files.writeString(dir.resolve("empty.properties"), "");
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (broker != null)
        {
            broker.close();
        }
    }

    static Stream<Case> working()
    {
        final String topics = T + "TopicCommand";
        final String groups = T + "consumer.group.ConsumerGroupCommand";
        final String txn = T + "TransactionsCommand";
        return Stream.of(
            new Case("kafka-topics --create", null, 0, "Created topic made.", topics,
                "--bootstrap-server", "{B}", "--create", "--topic", "made", "--partitions", "2", "--replication-factor", "1"),
            new Case("kafka-topics --list", null, 0, "tools", topics, "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-topics --describe", null, 0, "\tTopic: made\tPartition: 1\tLeader: 1\tReplicas: 1\tIsr: 1", topics,
                "--bootstrap-server", "{B}", "--describe", "--topic", "made"),
            new Case("kafka-topics --alter", null, 0, "", run -> assertEquals(3, partitionsOf("made"), run.toString()), topics,
                "--bootstrap-server", "{B}", "--alter", "--topic", "made", "--partitions", "3"),
            new Case("kafka-topics --delete", null, 0, "", run -> awaitGone("made"), topics, "--bootstrap-server", "{B}", "--delete",
                "--topic", "made"),
            new Case("kafka-console-producer", "a\nb\nc\n", 0, "", run -> awaitValues("tools", List.of("a", "b", "c")),
                T + "ConsoleProducer", "--bootstrap-server", "{B}", "--topic", "tools"),
            new Case("kafka-console-consumer", null, 0, "Processed a total of 3 messages", T + "consumer.ConsoleConsumer",
                "--bootstrap-server", "{B}", "--topic", "tools", "--from-beginning", "--max-messages", "3"),
            new Case("kafka-producer-perf-test", null, 0, "100 records sent", T + "ProducerPerformance", "--topic", "tools",
                "--num-records", "100", "--record-size", "100", "--throughput", "-1", "--producer-props", "bootstrap.servers={B}"),
            new Case("kafka-consumer-perf-test", null, 0, "start.time, end.time, data.consumed.in.MB", T + "ConsumerPerformance",
                "--bootstrap-server", "{B}", "--topic", "tools", "--num-records", "20", "--timeout", "60000"),
            new Case("kafka-consumer-groups --list", null, 0, "tools-group", groups, "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-consumer-groups --describe", null, 0, "Consumer group 'tools-group' has no active members.", groups,
                "--bootstrap-server", "{B}", "--describe", "--group", "tools-group"),
            new Case("kafka-consumer-groups --reset-offsets", null, 0, "tools-group     tools           0          0",
                groups, "--bootstrap-server", "{B}", "--reset-offsets", "--group", "tools-group", "--topic", "tools:0",
                "--to-earliest", "--execute"),
            new Case("kafka-consumer-groups --delete-offsets", null, 0, "Request succeeded for deleting offsets from group tools-group.",
                groups, "--bootstrap-server", "{B}", "--delete-offsets", "--group", "tools-group", "--topic", "tools"),
            new Case("kafka-consumer-groups --delete", null, 0,
                "Deletion of requested consumer groups ('tools-group') was successful.", groups, "--bootstrap-server", "{B}",
                "--delete", "--group", "tools-group"),
            new Case("kafka-groups --list", null, 0, "GROUP", T + "GroupsCommand", "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-get-offsets", null, 0, "tools:0:", T + "GetOffsetShell", "--bootstrap-server", "{B}", "--topic", "tools"),
            new Case("kafka-delete-records", null, 0, "Records delete operation completed:", T + "DeleteRecordsCommand",
                "--bootstrap-server", "{B}", "--offset-json-file", "{D}/delete.json"),
            // every partition: Kafka answers only the partitions it elected, none here, so the tool prints nothing
            new Case("kafka-leader-election", null, 0, "", PRINTS_NOTHING, T + "LeaderElectionCommand", "--bootstrap-server", "{B}",
                "--election-type", "preferred", "--all-topic-partitions"),
            new Case("kafka-leader-election --partition", null, 0, "Valid replica already elected for partitions tools-0",
                T + "LeaderElectionCommand", "--bootstrap-server", "{B}", "--election-type", "preferred", "--topic", "tools",
                "--partition", "0"),
            new Case("kafka-reassign-partitions --generate", null, 0, "Proposed partition reassignment configuration",
                T + "reassign.ReassignPartitionsCommand", "--bootstrap-server", "{B}", "--generate", "--topics-to-move-json-file",
                "{D}/move.json", "--broker-list", "1"),
            new Case("kafka-transactions list", null, 0, "TransactionalId\tCoordinator\tProducerId\tTransactionState\t", txn,
                "--bootstrap-server", "{B}", "list"),
            new Case("kafka-transactions describe-producers", null, 0, "ProducerId\tProducerEpoch\tLatestCoordinatorEpoch\t"
                + "LastSequence\tLastTimestamp\tCurrentTransactionStartOffset\t", txn, "--bootstrap-server", "{B}",
                "describe-producers", "--topic", "tools", "--partition", "0"),
            new Case("kafka-transactions find-hanging", null, 0, "Topic\tPartition\tProducerId\tProducerEpoch\tCoordinatorEpoch\t"
                + "StartOffset\tLastTimestamp\tDuration(min)\t", txn, "--bootstrap-server", "{B}", "find-hanging", "--broker-id", "1"),
            new Case("kafka-cluster cluster-id", null, 0, "Cluster ID: ", T + "ClusterTool", "cluster-id", "--bootstrap-server", "{B}"),
            new Case("kafka-verifiable-producer", null, 0, "\"name\":\"shutdown_complete\"", T + "VerifiableProducer",
                "--bootstrap-server", "{B}", "--topic", "tools", "--max-messages", "10"),
            new Case("kafka-verifiable-consumer", null, 0, "\"name\":\"shutdown_complete\"", T + "VerifiableConsumer",
                "--bootstrap-server", "{B}", "--topic", "tools", "--group-id", "verifiable", "--max-messages", "5"),
            new Case("kafka-e2e-latency", null, 0, "Avg latency: ", T + "EndToEndLatency", "--bootstrap-server", "{B}",
                "--topic", "latency", "--num-records", "20", "--producer-acks", "1", "--record-size", "100"),
            new Case("kafka-streams-application-reset", null, 0, "Done.", T + "StreamsResetter", "--bootstrap-server", "{B}",
                "--application-id", "tools-app", "--input-topics", "tools"),
            new Case("kafka-log-dirs", null, 0, "Received log directory information from brokers 1", T + "LogDirsCommand",
                "--bootstrap-server", "{B}", "--describe"),
            new Case("kafka-configs --entity-type users", null, 0, "", PRINTS_NOTHING, T + "ConfigCommand", "--bootstrap-server", "{B}",
                "--entity-type", "users", "--describe"), // no quota, no SCRAM user: nothing, as Kafka (ClientQuotasTest sets some)
            new Case("kafka-configs --entity-type topics", null, 0, "Dynamic configs for topic tools are:", T + "ConfigCommand",
                "--bootstrap-server", "{B}", "--entity-type", "topics", "--entity-name", "tools", "--describe"),
            new Case("kafka-share-groups --list", null, 0, "", PRINTS_NOTHING, T + "consumer.group.ShareGroupCommand",
                "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-streams-groups --list", null, 0, "", PRINTS_NOTHING, T + "streams.StreamsGroupCommand",
                "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-broker-api-versions", null, 0, "\tDescribeAcls(29): 1 to 3 [usable: 3],",
                T + "BrokerApiVersionsCommand", "--bootstrap-server", "{B}"),
            new Case("kafka-features describe", null, 0, "Feature: transaction.version", T + "FeatureCommand",
                "--bootstrap-server", "{B}", "describe"),
            // Kafka's answer on a PLAINTEXT listener, Ferrite's only kind (DelegationTokensTest)
            new Case("kafka-delegation-tokens --describe", null, 1, "org.apache.kafka.common.errors.UnsupportedByAuthenticationException: "
                + "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.",
                T + "DelegationTokenCommand", "--bootstrap-server", "{B}", "--command-config", "{D}/empty.properties", "--describe"),
            new Case("kafka-delegation-tokens --create", null, 1, "org.apache.kafka.common.errors.UnsupportedByAuthenticationException: "
                + "Delegation Token requests are not allowed on PLAINTEXT/1-way SSL channels and on delegation token authenticated channels.",
                T + "DelegationTokenCommand", "--bootstrap-server", "{B}", "--command-config", "{D}/empty.properties", "--create",
                "--max-life-time-period", "-1"));
    }

    static Stream<Case> unsupported()
    {
        return Stream.of(
            new Case("kafka-reassign-partitions --list", null, 1,
                "Error: org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support LIST_PARTITION_REASSIGNMENTS",
                T + "reassign.ReassignPartitionsCommand", "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-metadata-quorum describe", null, 1,
                "org.apache.kafka.common.errors.UnsupportedVersionException: The node does not support DESCRIBE_QUORUM",
                T + "MetadataQuorumCommand", "--bootstrap-server", "{B}", "describe", "--status"),
            new Case("kafka-client-metrics --list", null, 1,
                "Error while executing client metrics command : The node does not support LIST_CONFIG_RESOURCES",
                T + "ClientMetricsCommand", "--bootstrap-server", "{B}", "--list"),
            new Case("kafka-features upgrade", null, 1, "Could not upgrade group.version to 1. The node does not support UPDATE_FEATURES",
                T + "FeatureCommand", "--bootstrap-server", "{B}", "upgrade", "--feature", "group.version=1"),
            new Case("kafka-cluster unregister", null, 0, "The target cluster does not support the broker unregistration API.",
                T + "ClusterTool", "unregister", "--bootstrap-server", "{B}", "--id", "5"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("working")
    void answersAsKafka(final Case c) throws Exception
    {
        check(c);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("unsupported")
    void failsAsAKafkaWithoutTheApi(final Case c) throws Exception
    {
        check(c);
    }

    private static void check(final Case c) throws Exception
    {
        final String[] args = c.args().clone();
        for (int i = 0; i < args.length; i++)
        {
            args[i] = args[i].replace("{B}", broker.bootstrap()).replace("{D}", dir.toString());
        }
        assertTrue(!c.expected().isEmpty() || c.after() != null, c + " checks nothing but its exit status");
        final KafkaTool.Run run = KafkaTool.run(90, c.input(), c.mainClass(), args);
        assertEquals(c.status(), run.status(), run.toString());
        if (!c.expected().isEmpty())
        {
            final List<String> lines = Stream.concat(run.lines().stream(), run.err().lines()).toList();
            assertTrue(lines.stream().anyMatch(l -> l.contains(c.expected())), "no line with \"" + c.expected() + "\"\n" + run);
        }
        if (c.after() != null)
        {
            c.after().check(run);
        }
        assertTrue(run.err().lines().noneMatch(l -> l.contains("Exception") && !c.expected().contains("Exception") && c.status() == 0),
            "an exception while it worked:\n" + run);
    }

    private static int partitionsOf(final String topic) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic).partitions().size();
        }
    }

    private static void awaitGone(final String topic) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            await(() -> !admin.listTopics().names().get(30, TimeUnit.SECONDS).contains(topic), Duration.ofSeconds(30),
                topic + " deleted");
        }
    }

    /** Reads the topic from the start until each of {@code values} was read (no other record of it has them). */
    private static void awaitValues(final String topic, final List<String> values) throws Exception
    {
        final List<String> read = new ArrayList<>();
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            final List<TopicPartition> partitions = consumer.partitionsFor(topic).stream()
                .map(p -> new TopicPartition(topic, p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            await(() ->
            {
                consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(new String(r.value(), StandardCharsets.UTF_8)));
                return read.containsAll(values);
            }, Duration.ofSeconds(30), () -> topic + " holding " + values + "; read " + read);
        }
    }
}
