package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeClusterOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
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
    private static final Duration START = Duration.ofSeconds(120);
    private static final int RECORDS = 100;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void threeBrokersShareTheControllersMetadataAndFollowAKilledLeader() throws Exception
    {
        cluster.start();

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
            try (Admin admin = cluster.admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, "orders"),
                    info -> info != null && info.leader() != null && info.isr().size() == 3, START,
                    () -> "node " + node + " to describe orders-0 with its 3 replicas in sync: " + cluster.tail(node));
                assertEquals(leader, p.leader().id(), "the leader of orders-0 on node " + id);
            }
        }
        assertEquals(acknowledged, cluster.readAll("orders", RECORDS), "records read back from the leader " + leader);

        // a topic config altered through another node reaches every node's local log (each node asked itself)
        try (Admin admin = cluster.admin(2))
        {
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, "orders"), List.of(
                new AlterConfigOp(new ConfigEntry("retention.ms", "86400000"), AlterConfigOp.OpType.SET))))
                .all().get(60, TimeUnit.SECONDS);
        }
        describeConfigsAlike("orders", Map.of("min.insync.replicas", "2", "retention.ms", "86400000"));

        // a request with the topic and the default broker, as Kafka's AdminClient sends one: the topic's part goes
        // through the controller to every node (split: the broker's part answered by node 3 itself), and Ferrite's own
        // topic config is taken by the controller and applied by every node; one Ferrite refuses is refused, not dropped
        try (Admin admin = cluster.admin(3))
        {
            final ConfigResource orders = new ConfigResource(ConfigResource.Type.TOPIC, "orders");
            admin.incrementalAlterConfigs(Map.of(orders, List.of(
                    new AlterConfigOp(new ConfigEntry("ferrite.durability", "fsync"), AlterConfigOp.OpType.SET)),
                new ConfigResource(ConfigResource.Type.BROKER, ""), List.of(
                    new AlterConfigOp(new ConfigEntry("log.cleaner.threads", "1"), AlterConfigOp.OpType.SET))))
                .values().get(orders).get(60, TimeUnit.SECONDS);
            final ExecutionException refused = assertThrows(ExecutionException.class, () -> admin.incrementalAlterConfigs(
                Map.of(orders, List.of(new AlterConfigOp(new ConfigEntry("ferrite.durability", "sometimes"),
                    AlterConfigOp.OpType.SET)))).all().get(60, TimeUnit.SECONDS));
            assertInstanceOf(InvalidConfigurationException.class, refused.getCause(), refused.toString());
        }
        describeConfigsAlike("orders", Map.of("min.insync.replicas", "2", "retention.ms", "86400000",
            "ferrite.durability", "fsync"));

        // the coordinators' topics are never auto-created by Metadata (each is created through the controller by the
        // first FindCoordinator of its key type): every node, asked itself, answers
        // UNKNOWN_TOPIC_OR_PARTITION
        for (final String internal : List.of("__consumer_offsets", "__transaction_state"))
        {
            for (int id = 1; id <= 3; id++)
            {
                assertEquals(3, NodeRequests.topic(cluster.brokerPort(id), internal, true).errorCode(),
                    "node " + id + " answers a Metadata request for " + internal + " with auto-creation UNKNOWN_TOPIC_OR_PARTITION");
            }
        }

        // DeleteTopics through another node, forwarded: every node's image drops it and every node deletes its log
        createAndDescribeAlike("doomed");
        for (int id = 1; id <= 3; id++)
        {
            final Path data = cluster.data(id);
            final int node = id;
            Await.await(() -> Files.isDirectory(data.resolve("doomed-0")), START,
                () -> "node " + node + " to have a log of doomed-0: " + cluster.tail(node));
        }
        try (Admin admin = cluster.admin(2))
        {
            admin.deleteTopics(List.of("doomed")).all().get(60, TimeUnit.SECONDS);
        }
        for (int id = 1; id <= 3; id++)
        {
            final Path data = cluster.data(id);
            final int node = id;
            Await.await(() -> !Files.exists(data.resolve("doomed-0")), START,
                () -> "node " + node + " to delete its log of doomed-0: " + cluster.tail(node));
        }
        // auto-creation: a producer naming a topic nobody created gets it from the controller (num.partitions,
        // default.replication.factor: 1 here) through the Metadata request of any node
        try (KafkaProducer<String, String> producer = producer())
        {
            producer.send(new ProducerRecord<>("auto", "k", "v")).get(60, TimeUnit.SECONDS);
        }

        // failover: the leader of orders-0 SIGKILLed, Kafka's controller fences it after broker.session.timeout.ms (9 s)
        // and elects another member of the ISR, which has every acknowledged record
        cluster.kill(leader); // SIGKILL
        final long killedAt = System.nanoTime();
        final String[] after = new String[4];
        for (int id = 1; id <= 3; id++)
        {
            if (id == leader)
            {
                continue;
            }
            final int node = id;
            try (Admin admin = cluster.admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, "orders"),
                    info -> info != null && info.leader() != null && info.leader().id() != leader, Duration.ofSeconds(60),
                    () -> "node " + node + " to name a leader of orders-0 other than the killed " + leader + ": " + cluster.tail(node));
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
        assertEquals(acknowledged, cluster.readAll("orders", RECORDS), "acknowledged records read back from the new leader " + newLeader);
        try (KafkaProducer<String, String> producer = producer())
        {
            // its bootstrap list names the dead node too; its metadata leads it to the new leader, whose ISR is the two
            // survivors (min.insync.replicas=2): acknowledged once the other survivor follows the new leader
            producer.send(new ProducerRecord<>("orders", 0, "after", "failover")).get(60, TimeUnit.SECONDS);
        }
        acknowledged.add("failover");
        assertEquals(acknowledged, cluster.readAll("orders", RECORDS + 1), "every acknowledged record on the new leader " + newLeader);
    }

    /**
     * Creates {@code topic} (one partition, replication factor 3) through node 1, waits until every node describes it
     * with a leader and {@code isrSize} in sync, checks they describe it alike and list three brokers; its leader.
     */
    private int createAndDescribeAlike(final String topic) throws Exception
    {
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)3).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(60, TimeUnit.SECONDS);
        }
        final String[] described = new String[4];
        for (int id = 1; id <= 3; id++)
        {
            final int node = id;
            try (Admin admin = cluster.admin(id))
            {
                final TopicPartitionInfo p = Await.awaitValue(() -> partition(admin, topic),
                    info -> info != null && info.leader() != null && info.isr().size() == 3, START,
                    () -> "node " + node + " to describe " + topic + "-0 with a leader and 3 in sync: " + cluster.tail(node));
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
            final int port = cluster.brokerPort(id);
            final int node = id;
            Await.await(() -> NodeRequests.topicOverrides(port, topic).equals(new TreeMap<>(overrides)), START,
                () -> "node " + node + " to describe the configs of " + topic + " as " + overrides + ": " + cluster.tail(node));
        }
    }

    private static TopicPartitionInfo partition(final Admin admin, final String topic) throws Exception
    {
        final TopicDescription description = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
            .get(topic);
        return description.partitions().get(0);
    }

    private KafkaProducer<String, String> producer()
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "false");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }

    private static Set<Integer> ids(final List<Node> nodes)
    {
        return nodes.stream().map(Node::id).collect(Collectors.toCollection(TreeSet::new));
    }
}
