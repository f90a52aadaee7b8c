package io.ferrite.ecosystem.connect;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Kafka Connect 4.3.1 workers on the broker, each test a FileStreamSource connector (file to topic) and a
 * FileStreamSink connector (topic to file) while lines keep being appended to the source file. The worker, a
 * child JVM, is killed with SIGKILL once it has moved lines of its own end to end, and restarted,
 * {@value #DEFAULT_KILLS} times ({@code -Dferrite.connect.kills=N}; the {@code long} profile 10); then the
 * appending stops and every line must reach the sink file and the topic.
 *
 * <p>No line is ever lost. Whether a line may repeat after a kill is what Kafka 4.4 gives in the same test
 * (measured, module README): FileStreamSink appends, and what it wrote after its last offset commit is
 * delivered and written again after a kill (Connect's at-least-once sink delivery), so the sink file repeats
 * lines on Kafka as on Ferrite — counted and printed, not refused. The distributed worker's source runs with
 * {@code exactly.once.source.support=enabled} (Ferrite has transactions): records and source offsets in one
 * transaction, so the topic under read_committed holds every line exactly once, in order — asserted. The
 * standalone worker keeps source offsets in a file flushed every second, so its topic repeats what was sent
 * after the last flush, on Kafka too: no loss asserted. {@code -Dferrite.connect.eos=disabled} runs the
 * distributed source at-least-once; {@code -Dferrite.connect.bootstrap=host:port} runs against another broker
 * (Kafka 4.4 from {@code /work/shared/kafka-ref}); {@code -Dferrite.connect.seed} replays the kill delays.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class ConnectWorkerKillTest
{
    private static final int DEFAULT_KILLS = 2;
    private static final Duration FLOWING = Duration.ofSeconds(60);
    private static final String STRING_CONVERTER = "org.apache.kafka.connect.storage.StringConverter";

    @TempDir
    Path dir;

    private final int kills = Integer.getInteger("ferrite.connect.kills", DEFAULT_KILLS);
    private final long seed = Long.getLong("ferrite.connect.seed", System.nanoTime());
    private Path logs;
    private TestBroker broker;
    private Admin admin;
    private String s;
    private String topic;
    private SourceFile source;
    private Path sink;
    private ConnectWorker worker;

    @BeforeEach
    void startBrokerAndSource(final TestInfo test) throws Exception
    {
        logs = Files.createDirectories(Path.of("target", getClass().getSimpleName(), test.getTestMethod().orElseThrow().getName() + "-" + seed));
        broker = TestBroker.start(dir.resolve("data"), logs.resolve("broker.log"));
        admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, broker.bootstrap()));
        s = broker.suffix();
        topic = "lines" + s;
        admin.createTopics(List.of(new NewTopic(topic, 1, (short)1))).all().get(20, TimeUnit.SECONDS);
        source = new SourceFile(dir.resolve("source.txt"));
        sink = dir.resolve("sink.txt");
        System.out.println(test.getDisplayName() + " against " + broker.describe() + ", " + kills + " kills, seed " + seed
            + " (-Dferrite.connect.seed), logs in " + logs);
    }

    @AfterEach
    void stopAll() throws Exception
    {
        try (TestBroker b = broker; Admin a = admin; SourceFile f = source)
        {
            if (worker != null)
            {
                worker.close();
            }
        }
    }

    @Test
    void distributedWorkerLosesNoLineAndItsSourceRepeatsNone() throws Exception
    {
        final String eos = System.getProperty("ferrite.connect.eos", "enabled");
        System.out.println("exactly.once.source.support=" + eos);
        final Map<String, String> config = workerConfig();
        config.put("group.id", "connect-cluster" + s);
        config.put("config.storage.topic", "connect-configs" + s);
        config.put("offset.storage.topic", "connect-offsets" + s);
        config.put("status.storage.topic", "connect-status" + s);
        // one broker: replication factor 1 (Kafka's default is 3), as Kafka's connect-distributed.properties sets it
        config.put("config.storage.replication.factor", "1");
        config.put("offset.storage.replication.factor", "1");
        config.put("status.storage.replication.factor", "1");
        config.put("exactly.once.source.support", eos);
        // the sink reads only committed records: none of a source transaction a kill left open
        config.put("consumer.isolation.level", "read_committed");
        // a killed source task leaves its transaction open, its source offsets in it; a restarted worker reads the
        // offsets topic to its last stable offset before it starts any task, so it waits until the broker aborts that
        // transaction: after transaction.timeout.ms (the producer's default a minute) and the broker's next sweep (10 s)
        config.put("producer.transaction.timeout.ms", "5000");
        // a killed worker leaves no group: its successor's rebalance waits out its session (10 s by default)
        config.put("session.timeout.ms", "6000");
        config.put("heartbeat.interval.ms", "1000");

        worker = ConnectWorker.start(false, config, List.of(), logs, "worker-0");
        worker.putConnector("file-source" + s, sourceConnector());
        worker.putConnector("file-sink" + s, sinkConnector());
        assertInternalTopics();
        final List<String> lines = killAndRestart(n -> ConnectWorker.start(false, config, List.of(), logs, "worker-" + n));

        final List<String> inTopic = Delivery.topicValues(broker.bootstrap(), topic, "read_committed");
        System.out.println(Delivery.summary("topic (read_committed)", lines, inTopic));
        assertEquals(List.of(), Delivery.missing(lines, inTopic), "lines lost on the way to the topic");
        if ("enabled".equals(eos))
        {
            assertEquals(lines, inTopic, "the topic under read_committed: every line once, in order");
        }
    }

    @Test
    void standaloneWorkerLosesNoLine() throws Exception
    {
        final Map<String, String> config = workerConfig();
        config.put("offset.storage.file.filename", dir.resolve("standalone.offsets").toString());
        final Path sourceFile = connectorFile("source", sourceConnector());
        final Path sinkFile = connectorFile("sink", sinkConnector());

        worker = ConnectWorker.start(true, config, List.of(sourceFile, sinkFile), logs, "standalone-0");
        final List<String> lines = killAndRestart(n -> ConnectWorker.start(true, config, List.of(sourceFile, sinkFile), logs, "standalone-" + n));

        final List<String> inTopic = Delivery.topicValues(broker.bootstrap(), topic, "read_uncommitted");
        System.out.println(Delivery.summary("topic", lines, inTopic));
        assertEquals(List.of(), Delivery.missing(lines, inTopic), "lines lost on the way to the topic");
    }

    /** What both workers share. */
    private Map<String, String> workerConfig()
    {
        final Map<String, String> config = new HashMap<>();
        config.put("bootstrap.servers", broker.bootstrap());
        config.put("key.converter", STRING_CONVERTER);
        config.put("value.converter", STRING_CONVERTER);
        // offsets committed every second (default a minute), so that a kill falls after some commits
        config.put("offset.flush.interval.ms", "1000");
        // a killed sink task's consumer leaves no group either: its successor waits out its session, the broker's
        // smallest (6 s) rather than a consumer's 45 s
        config.put("consumer.session.timeout.ms", "6000");
        config.put("consumer.heartbeat.interval.ms", "1000");
        return config;
    }

    private Map<String, String> sourceConnector()
    {
        return Map.of("name", "file-source" + s, "connector.class", "org.apache.kafka.connect.file.FileStreamSourceConnector",
            "tasks.max", "1", "file", source.path().toString(), "topic", topic);
    }

    private Map<String, String> sinkConnector()
    {
        return Map.of("name", "file-sink" + s, "connector.class", "org.apache.kafka.connect.file.FileStreamSinkConnector",
            "tasks.max", "1", "file", sink.toString(), "topics", topic);
    }

    private Path connectorFile(final String name, final Map<String, String> config) throws Exception
    {
        final Path file = dir.resolve(name + ".properties");
        final Properties p = new Properties();
        p.putAll(config);
        try (OutputStream out = Files.newOutputStream(file))
        {
            p.store(out, null);
        }
        return file;
    }

    /** How a worker is started again after a kill ({@code incarnation} 1, 2, ...). */
    @FunctionalInterface
    private interface Restart
    {
        ConnectWorker start(int incarnation) throws Exception;
    }

    /**
     * Kills the running worker {@link #kills} times, each once both connectors run on it, a line appended after its
     * start has reached the sink file (it moved lines end to end itself) and the sink committed offsets beyond those
     * at its start (else a kill before its first commit has it write everything again), then a random 0-999 ms later; stops
     * the appending once the last worker moves lines, and waits until the sink file holds every line.
     * Returns the lines written, in order.
     */
    private List<String> killAndRestart(final Restart restart) throws Exception
    {
        final Random random = new Random(seed);
        for (int kill = 0; ; kill++)
        {
            final long committedAtStart = sinkCommitted();
            worker.awaitRunning("file-source" + s, 1);
            worker.awaitRunning("file-sink" + s, 1);
            final String mark = SourceFile.line(source.written());
            Delivery.awaitAllIn(sink, List.of(mark), FLOWING);
            if (kill == kills)
            {
                break;
            }
            await(() -> sinkCommitted() > committedAtStart, FLOWING, () -> "the sink committing offsets beyond " + committedAtStart);
            final int afterMs = random.nextInt(1_000);
            Thread.sleep(afterMs); // a random point of its work, not a wait for a state
            worker.kill();
            System.out.println("kill " + kill + ": " + afterMs + " ms after " + mark + " reached the sink file and the sink committed "
                + "progress, " + source.written() + " lines written, " + Delivery.lines(sink).size() + " in the sink file");
            worker = restart.start(kill + 1);
        }
        final List<String> lines = source.stop();
        Delivery.awaitAllIn(sink, lines, FLOWING);
        System.out.println(Delivery.summary("sink file", lines, Delivery.lines(sink)));
        return lines;
    }

    /** The sink's committed offset (its consumer group connect-file-sink), -1 when none. */
    private long sinkCommitted() throws Exception
    {
        final OffsetAndMetadata committed = admin.listConsumerGroupOffsets("connect-file-sink" + s).partitionsToOffsetAndMetadata()
            .get(20, TimeUnit.SECONDS).get(new TopicPartition(topic, 0));
        return committed == null ? -1 : committed.offset();
    }

    /** The distributed worker's own topics, as it asked for them: compacted, with Kafka's default partition counts. */
    private void assertInternalTopics() throws Exception
    {
        final Map<String, Integer> expected = Map.of("connect-configs" + s, 1, "connect-offsets" + s, 25, "connect-status" + s, 5);
        final Map<String, TopicDescription> topics = admin.describeTopics(expected.keySet()).allTopicNames().get(20, TimeUnit.SECONDS);
        final Map<String, Integer> partitions = new TreeMap<>();
        topics.forEach((name, d) -> partitions.put(name, d.partitions().size()));
        assertEquals(new TreeMap<>(expected), partitions, "the worker's topics' partitions");
        final List<ConfigResource> resources = expected.keySet().stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        final Map<String, String> policies = new TreeMap<>();
        for (final Map.Entry<ConfigResource, Config> e : admin.describeConfigs(resources).all().get(20, TimeUnit.SECONDS).entrySet())
        {
            policies.put(e.getKey().name(), e.getValue().get("cleanup.policy").value());
        }
        final Map<String, String> compact = new TreeMap<>();
        expected.keySet().forEach(t -> compact.put(t, "compact"));
        assertEquals(compact, policies, "the worker's topics' cleanup.policy");
    }
}
