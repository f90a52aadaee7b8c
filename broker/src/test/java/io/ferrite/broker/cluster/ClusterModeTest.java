package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three Ferrite brokers in cluster mode (issue 14), child JVMs of {@code ferrite-server} ({@code -Xmx256m}) on loopback
 * with Kafka's settings: a topic created with replication factor 3 through one node (CreateTopics forwarded to the
 * active controller) is described alike by all three (leader, replicas, ISR); DescribeCluster lists the three; a
 * producer with acks=all and {@code min.insync.replicas=2} has every record acknowledged (the followers fetch from
 * the leader's broker listener), every node still describes the ISR of three, and a consumer reads the records
 * back; DeleteTopics through another node deletes a topic's log on every node; a producer's Metadata request
 * auto-creates a topic through the controller; the first topic's leader is SIGKILLed, the two others name a new
 * leader within the session timeout, every acknowledged record is read back from it, and an acks=all produce to it
 * (ISR: the two survivors) is acknowledged.
 */
@Tag("slow") // three broker JVMs, about 30 s: `mvn -B verify -Pslow` (CI runs it)
final class ClusterModeTest
{
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");
    private static final Duration START = Duration.ofSeconds(120);
    private static final int RECORDS = 100;

    @TempDir
    Path dir;

    private final List<Process> nodes = new ArrayList<>(List.of());
    private final int[] brokerPorts = new int[4];

    @AfterEach
    void stop() throws InterruptedException
    {
        for (final Process node : nodes)
        {
            node.toHandle().destroyForcibly();
            node.waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void threeBrokersShareTheControllersMetadataAndFollowAKilledLeader() throws Exception
    {
        // every port chosen up front, distinct: a broker listener on port 0 could take another node's controller port
        final int[] free = freePorts(6);
        final int[] controllerPorts = {0, free[0], free[1], free[2]};
        final int[] listenerPorts = {0, free[3], free[4], free[5]};
        final String voters = "1@127.0.0.1:" + controllerPorts[1] + ",2@127.0.0.1:" + controllerPorts[2] + ",3@127.0.0.1:" +
            controllerPorts[3];
        for (int id = 1; id <= 3; id++)
        {
            nodes.add(launch(id, voters, listenerPorts[id], controllerPorts[id]));
        }
        for (int id = 1; id <= 3; id++)
        {
            final Path out = dir.resolve("node" + id + ".out");
            final int node = id;
            brokerPorts[id] = Await.awaitValue(() -> listeningPort(out), port -> port > 0, START,
                () -> "node " + node + " to join the cluster and listen: " + tail(node));
        }

        // replication: an acks=all producer with min.insync.replicas=2 gets every record acknowledged only once the
        // followers, which fetch from the leader's broker listener, have it; the ISR stays the three
        final int leader = createAndDescribeAlike("orders");
        final List<String> acknowledged = new ArrayList<>();
        try (KafkaProducer<String, String> producer = producer())
        {
            for (int i = 0; i < RECORDS; i++)
            {
                producer.send(new ProducerRecord<>("orders", 0, "k" + i, "v" + i)).get(60, TimeUnit.SECONDS);
                acknowledged.add("v" + i);
            }
        }
        for (int id = 1; id <= 3; id++)
        {
            final int node = id;
            try (Admin admin = admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, "orders"),
                    info -> info != null && info.leader() != null && info.isr().size() == 3, START,
                    () -> "node " + node + " to describe orders-0 with its 3 replicas in sync: " + tail(node));
                assertEquals(leader, p.leader().id(), "the leader of orders-0 on node " + id);
            }
        }
        assertEquals(acknowledged, readAll("orders", RECORDS), "records read back from the leader " + leader);

        // a topic config altered through another node reaches every node's local log (each node asked itself)
        try (Admin admin = admin(2))
        {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, "orders"), List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET))))
                .all().get(60, TimeUnit.SECONDS);
        }
        describeConfigsAlike("orders", Map.of("min.insync.replicas", "2", "retention.ms", "86400000"));

        // the local coordinators' topics are never auto-created through the controller (a replica of one would meet
        // this node's own __consumer_offsets): every node, asked itself, answers UNKNOWN_TOPIC_OR_PARTITION
        for (final String internal : List.of("__consumer_offsets", "__transaction_state"))
        {
            for (int id = 1; id <= 3; id++)
            {
                assertEquals(3, NodeRequests.topic(brokerPorts[id], internal, true).errorCode(),
                    "node " + id + " answers a Metadata request for " + internal + " with auto-creation UNKNOWN_TOPIC_OR_PARTITION");
            }
        }

        // DeleteTopics through another node, forwarded: every node's image drops it and every node deletes its log
        createAndDescribeAlike("doomed");
        for (int id = 1; id <= 3; id++)
        {
            final Path data = dir.resolve("data" + id);
            final int node = id;
            Await.await(() -> Files.isDirectory(data.resolve("doomed-0")), START,
                () -> "node " + node + " to have a log of doomed-0: " + tail(node));
        }
        try (Admin admin = admin(2))
        {
            admin.deleteTopics(List.of("doomed")).all().get(60, TimeUnit.SECONDS);
        }
        for (int id = 1; id <= 3; id++)
        {
            final Path data = dir.resolve("data" + id);
            final int node = id;
            Await.await(() -> !Files.exists(data.resolve("doomed-0")), START,
                () -> "node " + node + " to delete its log of doomed-0: " + tail(node));
        }
        // auto-creation: a producer naming a topic nobody created gets it from the controller (num.partitions,
        // default.replication.factor: 1 here) through the Metadata request of any node
        try (KafkaProducer<String, String> producer = producer())
        {
            producer.send(new ProducerRecord<>("auto", "k", "v")).get(60, TimeUnit.SECONDS);
        }

        // failover: the leader of orders-0 SIGKILLed, Kafka's controller fences it after broker.session.timeout.ms (9 s)
        // and elects another member of the ISR, which has every acknowledged record
        nodes.get(leader - 1).toHandle().destroyForcibly(); // SIGKILL
        nodes.get(leader - 1).waitFor(30, TimeUnit.SECONDS);
        final long killedAt = System.nanoTime();
        final String[] after = new String[4];
        for (int id = 1; id <= 3; id++)
        {
            if (id == leader)
            {
                continue;
            }
            final int node = id;
            try (Admin admin = admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, "orders"),
                    info -> info != null && info.leader() != null && info.leader().id() != leader, Duration.ofSeconds(60),
                    () -> "node " + node + " to name a leader of orders-0 other than the killed " + leader + ": " + tail(node));
                after[id] = p.leader().id() + " " + ids(p.isr());
                assertTrue(!ids(p.isr()).contains(leader), "the killed node left the ISR: " + after[id]);
                assertEquals(2, admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).size(), "live brokers after the kill");
                // DescribeCluster v2 with includeFencedBrokers (KIP-1073): the killed, fenced broker listed too, marked fenced
                final var all = admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true)).nodes()
                    .get(30, TimeUnit.SECONDS);
                assertEquals(Set.of(1, 2, 3), ids(List.copyOf(all)), "with includeFencedBrokers on node " + id + ": the fenced node too");
                assertEquals(Set.of(leader), all.stream().filter(Node::isFenced).map(Node::id).collect(Collectors.toSet()),
                    "only the killed node is fenced, on node " + id);
            }
        }
        System.out.println("ClusterModeTest: new leader in both survivors' metadata " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt) + " ms after the kill of " + leader + ": " +
            String.join(" | ", after[1 == leader ? 2 : 1], after[3 == leader ? 2 : 3]));
        final List<String> survivors = new ArrayList<>();
        for (int id = 1; id <= 3; id++)
        {
            if (id != leader)
            {
                survivors.add(after[id]);
            }
        }
        assertEquals(survivors.get(0), survivors.get(1), "both survivors describe orders-0 alike");
        final int newLeader = Integer.parseInt(survivors.get(0).split(" ")[0]);
        assertNotEquals(leader, newLeader);
        assertEquals(acknowledged, readAll("orders", RECORDS), "acknowledged records read back from the new leader " + newLeader);
        try (KafkaProducer<String, String> producer = producer())
        {
            // its bootstrap list names the dead node too; its metadata leads it to the new leader, whose ISR is the two
            // survivors (min.insync.replicas=2): acknowledged once the other survivor follows the new leader
            producer.send(new ProducerRecord<>("orders", 0, "after", "failover")).get(60, TimeUnit.SECONDS);
        }
        acknowledged.add("failover");
        assertEquals(acknowledged, readAll("orders", RECORDS + 1), "every acknowledged record on the new leader " + newLeader);
    }

    /** The first {@code count} records of {@code topic}-0 from its beginning, read from its leader. */
    private List<String> readAll(final String topic, final int count)
    {
        try (KafkaConsumer<String, String> consumer = consumer())
        {
            final TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final List<String> read = new ArrayList<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(r.value());
                }
                return read.size() >= count;
            }, Duration.ofSeconds(60), () -> count + " records of " + topic + "-0 read back, read " + read + "\n" + tails());
            return read;
        }
    }

    /**
     * Creates {@code topic} (one partition, replication factor 3) through node 1, waits until every node describes it
     * with a leader and {@code isrSize} in sync, checks they describe it alike and list three brokers; its leader.
     */
    private int createAndDescribeAlike(final String topic) throws Exception
    {
        try (Admin admin = admin(1))
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)3).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(60, TimeUnit.SECONDS);
        }
        final String[] described = new String[4];
        for (int id = 1; id <= 3; id++)
        {
            final int node = id;
            try (Admin admin = admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, topic),
                    info -> info != null && info.leader() != null && info.isr().size() == 3, START,
                    () -> "node " + node + " to describe " + topic + "-0 with a leader and 3 in sync: " + tail(node));
                described[id] = p.leader().id() + " " + ids(p.replicas()) + " " + ids(p.isr());
                assertEquals(Set.of(1, 2, 3), ids(p.replicas()), "replicas on node " + id);
                final var nodesSeen = admin.describeCluster().nodes().get(30, TimeUnit.SECONDS);
                assertEquals(Set.of(1, 2, 3), ids(List.copyOf(nodesSeen)), "brokers DescribeCluster lists on node " + id);
            }
        }
        assertEquals(described[1], described[2], "nodes 1 and 2 describe " + topic + "-0 alike");
        assertEquals(described[1], described[3], "nodes 1 and 3 describe " + topic + "-0 alike");
        describeConfigsAlike(topic, Map.of("min.insync.replicas", "2"));
        return Integer.parseInt(described[1].split(" ")[0]);
    }

    /** Waits until every node, asked itself (DescribeConfigs), has {@code overrides} as {@code topic}'s configs. */
    private void describeConfigsAlike(final String topic, final Map<String, String> overrides)
    {
        for (int id = 1; id <= 3; id++)
        {
            final int port = brokerPorts[id];
            final int node = id;
            Await.await(() -> NodeRequests.topicOverrides(port, topic).equals(new TreeMap<>(overrides)), START,
                () -> "node " + node + " to describe the configs of " + topic + " as " + overrides + ": " + tail(node));
        }
    }

    private Process launch(final int id, final String voters, final int brokerPort, final int controllerPort) throws IOException
    {
        final String clusterClasspath = Files.readString(Path.of("..", "replication-lite", "target", "cluster.classpath"),
            StandardCharsets.UTF_8).trim();
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-Dorg.slf4j.simpleLogger.log.io.ferrite.broker.cluster=info", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + clusterClasspath,
            ClusterBrokerMain.class.getName()));
        for (final String setting : List.of("node.id=" + id, "process.roles=broker,controller",
            "controller.quorum.voters=" + voters, "controller.listener.names=CONTROLLER",
            "listeners=PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort,
            "ferrite.cluster.id=RmVycml0ZVRlc3QwMDAwMQ", "log.dir=" + dir.resolve("data" + id),
            // the brokers' own: the topic's config is not yet applied to the local logs (rwire review H2)
            "min.insync.replicas=2"))
        {
            command.add("--override");
            command.add(setting);
        }
        return new ProcessBuilder(command).redirectOutput(dir.resolve("node" + id + ".out").toFile())
            .redirectError(dir.resolve("node" + id + ".err").toFile()).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    }

    private static int listeningPort(final Path out) throws IOException
    {
        if (!Files.exists(out))
        {
            return 0;
        }
        final Matcher m = LISTENING.matcher(Files.readString(out, StandardCharsets.UTF_8));
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private String tail(final int id)
    {
        try
        {
            final List<String> lines = Files.readAllLines(dir.resolve("node" + id + ".err"), StandardCharsets.UTF_8);
            final List<String> said = lines.stream().filter(l -> !l.startsWith("\tat ")).toList(); // no stack frames
            return String.join("\n", said.subList(Math.max(0, said.size() - 40), said.size()));
        }
        catch (final IOException ex)
        {
            return "(no output: " + ex + ")";
        }
    }

    /** The last lines every node logged. */
    private String tails()
    {
        final StringBuilder said = new StringBuilder();
        for (int id = 1; id <= 3; id++)
        {
            said.append("node ").append(id).append(":\n").append(tail(id)).append('\n');
            try
            {
                Files.readAllLines(dir.resolve("node" + id + ".err"), StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains("orders") && !l.contains("\tat ")).forEach(l -> said.append(l).append('\n'));
            }
            catch (final IOException ex)
            {
                said.append(ex).append('\n');
            }
        }
        return said.toString();
    }

    /** {@code count} distinct free ports (all held open together while chosen). */
    private static int[] freePorts(final int count) throws IOException
    {
        final ServerSocket[] sockets = new ServerSocket[count];
        final int[] ports = new int[count];
        try
        {
            for (int i = 0; i < count; i++)
            {
                sockets[i] = new ServerSocket(0);
                ports[i] = sockets[i].getLocalPort();
            }
        }
        finally
        {
            for (final ServerSocket socket : sockets)
            {
                if (socket != null)
                {
                    socket.close();
                }
            }
        }
        return ports;
    }

    private Admin admin(final int id)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + brokerPorts[id],
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000"));
    }

    private static TopicPartitionInfo partition(final Admin admin, final String topic) throws Exception
    {
        final TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(topic);
        return description.partitions().get(0);
    }

    private String bootstrap()
    {
        return "127.0.0.1:" + brokerPorts[1] + ",127.0.0.1:" + brokerPorts[2] + ",127.0.0.1:" + brokerPorts[3];
    }

    private KafkaProducer<String, String> producer()
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer()
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"); // out of range is an error here, not a reset to the end
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static Set<Integer> ids(final List<Node> nodes)
    {
        return nodes.stream().map(Node::id).collect(Collectors.toCollection(TreeSet::new));
    }
}
