package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
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
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three Ferrite brokers in cluster mode (issue 14), child JVMs of {@code ferrite-server} ({@code -Xmx256m}) on loopback
 * with Kafka's settings: a topic created with replication factor 3 through one node (CreateTopics forwarded to the
 * active controller) is described alike by all three (leader, replicas, ISR); DescribeCluster lists the three; a
 * producer with acks=1 writes to the leader (the followers' fetcher is not in this branch: nothing is replicated);
 * the leader, whose followers never fetch, shrinks the ISR to itself by AlterPartition after
 * {@code replica.lag.time.max.ms}, every node shows it, and a consumer reads the records back; DeleteTopics through
 * another node deletes the topic's log on every node; a producer's Metadata request auto-creates a topic through the
 * controller; the leader of another
 * topic, still with its ISR of three, is SIGKILLed and the two others name a new leader within the session timeout,
 * which a producer's metadata follows.
 */
@Tag("slow") // three broker JVMs, about 90 s: `mvn -B verify -Pslow` (CI runs it)
final class ClusterModeTest
{
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");
    private static final Duration START = Duration.ofSeconds(120);

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

        // created with configs: every node's local log takes them from the image (Kafka's ConfigurationsImage)
        final String orders = createAndDescribeAlike("orders", Map.of("cleanup.policy", "compact", "retention.ms", "-1"));
        try (KafkaProducer<String, String> producer = producer())
        {
            for (int i = 0; i < 10; i++)
            {
                producer.send(new ProducerRecord<>("orders", 0, "k" + i, "v" + i)).get(30, TimeUnit.SECONDS);
            }
        }
        // no follower fetches (branch rfetch): after replica.lag.time.max.ms the leader shrinks the ISR to itself by
        // AlterPartition to the controller, every node's image shows it, and the high watermark (the ISR's minimum log
        // end) reaches the leader's log end: only then can a consumer read what acks=1 appended
        final String shrunk = Await.awaitValue(() -> alike("orders", 1, 2, 3),
            d -> d != null && !d.startsWith("leader -1") && d.contains(" isr [" + NodeRequests.leader(d) + "] "), START,
            () -> "every node to show the ISR of orders-0 shrunk to its leader (was " + orders + "): " + described("orders"));
        assertEquals(NodeRequests.epoch(orders), NodeRequests.epoch(shrunk), "the same leadership: " + shrunk);
        try (KafkaConsumer<String, String> consumer = consumer())
        {
            final TopicPartition tp = new TopicPartition("orders", 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final List<String> read = new ArrayList<>();
            final Set<Integer> epochs = new TreeSet<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(r.value());
                    epochs.add(r.leaderEpoch().orElse(-1));
                }
                return read.size() >= 10;
            }, Duration.ofSeconds(60), () -> "10 records read back from the leader, read " + read);
            assertEquals(List.of("v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9"), read);
            assertEquals(Set.of(NodeRequests.epoch(orders)), epochs, "the batches carry the image's leader epoch");
        }

        // the local coordinators' topics are never auto-created through the controller (H3: a replica of one would
        // meet this node's own __consumer_offsets); every node answers UNKNOWN_TOPIC_OR_PARTITION and creates nothing
        for (final String internal : List.of("__consumer_offsets", "__transaction_state"))
        {
            for (int id = 1; id <= 3; id++)
            {
                assertEquals(3, NodeRequests.topic(brokerPorts[id], internal, true).errorCode(),
                    "node " + id + " answers " + internal + " with auto-creation UNKNOWN_TOPIC_OR_PARTITION");
            }
        }

        // DeleteTopics through another node, forwarded: every node's image drops it and every node deletes its log
        for (int id = 1; id <= 3; id++)
        {
            assertTrue(Files.isDirectory(dir.resolve("data" + id).resolve("orders-0")), "node " + id + " has a log of orders-0");
        }
        try (Admin admin = admin(2))
        {
            admin.deleteTopics(List.of("orders")).all().get(60, TimeUnit.SECONDS);
        }
        for (int id = 1; id <= 3; id++)
        {
            final Path data = dir.resolve("data" + id);
            final int node = id;
            Await.await(() -> !Files.exists(data.resolve("orders-0")), START,
                () -> "node " + node + " to delete its log of orders-0: " + tail(node));
        }
        // auto-creation: a producer naming a topic nobody created gets it from the controller (num.partitions,
        // default.replication.factor: 1 here) through the Metadata request of any node
        try (KafkaProducer<String, String> producer = producer())
        {
            producer.send(new ProducerRecord<>("auto", "k", "v")).get(60, TimeUnit.SECONDS);
        }

        // a partition whose ISR is still all three (its leader shrinks it only after replica.lag.time.max.ms, 60 s): its
        // leader killed, Kafka's controller elects another member of the ISR
        final String standby = createAndDescribeAlike("standby", Map.of());
        final int leader = NodeRequests.leader(standby);
        nodes.get(leader - 1).toHandle().destroyForcibly(); // SIGKILL
        nodes.get(leader - 1).waitFor(30, TimeUnit.SECONDS);
        final long killedAt = System.nanoTime();
        final int[] survivors = java.util.stream.IntStream.rangeClosed(1, 3).filter(id -> id != leader).toArray();
        // Kafka's controller fences a broker unheard of for broker.session.timeout.ms (20 s here), then elects; both
        // survivors, each asked itself, name the new leader at a higher epoch, the killed node out of the ISR and offline
        final String after = Await.awaitValue(() -> alike("standby", survivors),
            d -> d != null && NodeRequests.leader(d) >= 0 && NodeRequests.leader(d) != leader, Duration.ofSeconds(90),
            () -> "both survivors to name a leader of standby-0 other than the killed " + leader + ": " + described("standby"));
        System.out.println("ClusterModeTest: new leader in both survivors' metadata " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt) + " ms after the kill of " + leader + ": " + after);
        assertTrue(NodeRequests.epoch(after) > NodeRequests.epoch(standby), "a higher leader epoch: " + standby + " -> " + after);
        final String isr = after.substring(after.indexOf(" isr ") + 5, after.indexOf(" offline "));
        assertTrue(!isr.matches(".*\\b" + leader + "\\b.*"), "the killed node left the ISR: " + after);
        assertTrue(after.endsWith(" offline [" + leader + "]"), "the killed (fenced) node's replica is offline: " + after);
        try (Admin admin = admin(survivors[0]))
        {
            Await.await(() -> ids(List.copyOf(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS)))
                .equals(Set.of(survivors[0], survivors[1])), Duration.ofSeconds(90), () -> "DescribeCluster to list the two survivors");
            final var all = admin.describeCluster(new DescribeClusterOptions().includeFencedBrokers(true)).nodes()
                .get(30, TimeUnit.SECONDS);
            assertEquals(Set.of(1, 2, 3), ids(List.copyOf(all)), "with includeFencedBrokers: the fenced node too");
            assertEquals(Set.of(leader), all.stream().filter(Node::isFenced).map(Node::id).collect(Collectors.toSet()),
                "only the killed node is fenced");
        }
        try (KafkaProducer<String, String> producer = producer())
        {
            // its bootstrap list names the dead node too; its metadata leads it to the new leader
            producer.send(new ProducerRecord<>("standby", 0, "after", "failover")).get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Creates {@code topic} (one partition, replication factor 3, {@code configs}) through node 1, waits until every
     * node, asked itself, describes it alike with a leader and all three in sync (leader, leader epoch, replicas, ISR,
     * no replica offline), every node's local log has {@code configs} and DescribeCluster lists three brokers; the
     * description ({@link NodeRequests#partition0}).
     */
    private String createAndDescribeAlike(final String topic, final Map<String, String> configs) throws Exception
    {
        try (Admin admin = admin(1))
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)3).configs(configs))).all().get(60, TimeUnit.SECONDS);
        }
        final String alike = Await.awaitValue(() -> alike(topic, 1, 2, 3),
            d -> d != null && !d.startsWith("leader -1") && d.endsWith(" replicas [1, 2, 3] isr [1, 2, 3] offline []"), START,
            () -> "every node to describe " + topic + "-0 alike with a leader and 3 in sync: " + described(topic));
        for (int id = 1; id <= 3; id++)
        {
            final int port = brokerPorts[id];
            final int node = id;
            Await.await(() -> NodeRequests.topicOverrides(port, topic).equals(new java.util.TreeMap<>(configs)), START,
                () -> "node " + node + "'s log of " + topic + " to have the configs " + configs + ": " + tail(node));
        }
        try (Admin admin = admin(1))
        {
            Await.await(() -> ids(List.copyOf(admin.describeCluster().nodes().get(30, TimeUnit.SECONDS))).equals(Set.of(1, 2, 3)),
                START, () -> "DescribeCluster to list the three brokers");
        }
        return alike;
    }

    /** Partition 0 of {@code topic} as every one of {@code ids} describes it when asked itself, if all alike; else null. */
    private String alike(final String topic, final int... ids) throws IOException
    {
        String first = null;
        for (final int id : ids)
        {
            final String d = NodeRequests.partition0(brokerPorts[id], topic);
            if (first != null && !first.equals(d))
            {
                return null;
            }
            first = d;
        }
        return first;
    }

    /** What each live node says of partition 0 of {@code topic} (for a failure's message). */
    private String described(final String topic)
    {
        final StringBuilder said = new StringBuilder();
        for (int id = 1; id <= 3; id++)
        {
            try
            {
                said.append(" | node ").append(id).append(": ").append(NodeRequests.partition0(brokerPorts[id], topic));
            }
            catch (final IOException ex)
            {
                said.append(" | node ").append(id).append(": ").append(ex);
            }
        }
        return said.toString();
    }

    private Process launch(final int id, final String voters, final int brokerPort, final int controllerPort) throws IOException
    {
        final String clusterClasspath = Files.readString(Path.of("..", "replication-lite", "target", "cluster.classpath"),
            StandardCharsets.UTF_8).trim();
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + clusterClasspath,
            ClusterBrokerMain.class.getName()));
        for (final String setting : List.of("node.id=" + id, "process.roles=broker,controller",
            "controller.quorum.voters=" + voters, "controller.listener.names=CONTROLLER",
            "listeners=PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort,
            "ferrite.cluster.id=RmVycml0ZVRlc3QwMDAwMQ", "log.dir=" + dir.resolve("data" + id),
            // no follower fetches in this branch: the leader shrinks the ISR to itself after this (see the test); 60 s leaves
            // the failover's partition its ISR of three from its creation to its leader's kill
            "replica.lag.time.max.ms=60000",
            // a loaded 2-core machine running three JVMs can miss Kafka's default 9 s without a heartbeat: no stray
            // fencing (which would move leaderships) in the test's steps
            "broker.session.timeout.ms=20000"))
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

    private String bootstrap()
    {
        return "127.0.0.1:" + brokerPorts[1] + ",127.0.0.1:" + brokerPorts[2] + ",127.0.0.1:" + brokerPorts[3];
    }

    private KafkaProducer<String, String> producer()
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "1");
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
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    private static Set<Integer> ids(final List<Node> nodes)
    {
        return nodes.stream().map(Node::id).collect(Collectors.toCollection(TreeSet::new));
    }
}
