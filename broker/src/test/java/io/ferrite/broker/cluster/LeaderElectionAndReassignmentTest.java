package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitionReassignment;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.ElectionNotNeededException;
import org.apache.kafka.common.errors.InvalidReplicaAssignmentException;
import org.apache.kafka.common.errors.NoReassignmentInProgressException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka 4.4's {@code kafka-leader-election} and {@code kafka-reassign-partitions} (their main classes in a child JVM,
 * as the scripts run them) and the Admin API behind them against three Ferrite brokers in cluster mode: the brokers
 * forward ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments to the active controller, as
 * Kafka's KRaft brokers do. A preferred election after the preferred leader was killed and came back moves the
 * leadership back to it with every acknowledged record readable; a reassignment of an RF=2 partition from {1,2} to
 * {2,3} makes node 3 follow, join the ISR, and the controller completes it; node 1's log of it is deleted. The Admin
 * API's answers and errors are those a Kafka 4.4 node gave to the same calls (checked with {@code /work/shared/kafka-ref}, a one-node 4.4:
 * UNKNOWN_TOPIC_OR_PARTITION "No such topic as nosuch", ELECTION_NOT_NEEDED for a partition led by its preferred
 * replica for either election type, INVALID_REPLICA_ASSIGNMENT "...includes broker 9, but no such broker is
 * registered.", NO_REASSIGNMENT_IN_PROGRESS for a cancel, an empty listing for an unknown topic; and the tools'
 * lines "Valid replica already elected for partitions ...", "Successfully started partition reassignment for ...",
 * "Reassignment of partition ... is completed."). Not here: an unclean election that elects (it needs the ISR's only
 * member dead and a live replica outside the ISR while two of the three combined voters live: a restarted replica
 * rejoins the ISR at once, so no test here makes that state; the unclean type is checked where Kafka answers
 * ELECTION_NOT_NEEDED, a live leader).
 */
@Tag("slow") // three broker JVMs, a kill and a restart, the tools' JVMs: about a minute
final class LeaderElectionAndReassignmentTest
{
    private static final Duration WAIT = Duration.ofSeconds(90);
    private static final int RECORDS = 30;

    @TempDir
    Path dir;

    private ThreeNodes cluster;

    @Test
    void preferredElectionAndReassignmentThroughKafkasTools() throws Exception
    {
        try (ThreeNodes started = new ThreeNodes(dir).start())
        {
            cluster = started;
            electAndReassign();
        }
    }

    private void electAndReassign() throws Exception
    {
        try (Admin admin = cluster.admin(2))
        {
            admin.createTopics(List.of(
                new NewTopic("elect", Map.of(0, List.of(1, 2, 3))).configs(Map.of("min.insync.replicas", "2")),
                new NewTopic("moved", Map.of(0, List.of(1, 2))).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(60, TimeUnit.SECONDS);
        }
        awaitDescribed("elect", p -> p.leader() != null && p.leader().id() == 1 && p.isr().size() == 3, "led by 1, 3 in sync");
        awaitDescribed("moved", p -> p.leader() != null && p.isr().size() == 2, "2 in sync");
        final List<String> elected = produce("elect", "a", RECORDS);
        final List<String> moved = produce("moved", "m", RECORDS);

        // the preferred replica leads already: Kafka's answer and the tool's line for it, for either election type
        assertTrue(tool("org.apache.kafka.tools.LeaderElectionCommand", "--election-type", "preferred", "--topic", "elect",
            "--partition", "0").contains("Valid replica already elected for partitions elect-0"));
        assertTrue(tool("org.apache.kafka.tools.LeaderElectionCommand", "--election-type", "unclean", "--topic", "elect",
            "--partition", "0").contains("Valid replica already elected for partitions elect-0"));

        // the preferred leader killed: another leads and takes records; back and in sync again, it is not the leader
        // until a preferred election moves the leadership back (auto.leader.rebalance.enable is Kafka's default, true,
        // but its check runs every 300 s: the tool comes first)
        cluster.kill(1);
        awaitDescribed(2, "elect", p -> p.leader() != null && p.leader().id() != 1, "led by a survivor");
        elected.addAll(produce("elect", "b", RECORDS));
        cluster.restart(1);
        awaitDescribed("elect", p -> p.isr().size() == 3 && p.leader() != null && p.leader().id() != 1,
            "3 in sync again, led by a survivor");
        final String election = tool("org.apache.kafka.tools.LeaderElectionCommand", "--election-type", "preferred",
            "--topic", "elect", "--partition", "0");
        assertTrue(election.contains("Successfully completed leader election (PREFERRED) for partitions elect-0"), election);
        awaitDescribed("elect", p -> p.leader() != null && p.leader().id() == 1 && p.isr().size() == 3, "led by 1 again");
        // moved-0 back to its preferred leader 1 too: the reassignment below then takes the leader's replica away
        awaitDescribed("moved", p -> p.isr().size() == 2, "2 in sync again");
        final String movedBack = tool("org.apache.kafka.tools.LeaderElectionCommand", "--election-type", "preferred",
            "--topic", "moved", "--partition", "0");
        assertTrue(movedBack.contains("Successfully completed leader election (PREFERRED) for partitions moved-0"), movedBack);
        awaitDescribed("moved", p -> p.leader() != null && p.leader().id() == 1 && p.isr().size() == 2, "led by 1");
        assertEquals(elected, cluster.readAll("elect", elected.size()), "every acknowledged record of elect-0 on its leader 1");
        elected.addAll(produce("elect", "c", RECORDS));
        assertEquals(elected, cluster.readAll("elect", elected.size()), "and what the restored leader acknowledged");

        // moved-0 from {1,2} to {2,3}: node 3 makes the log and follows the leader 1, joins the ISR, the controller
        // completes (a new leader from {2,3}; node 1 is unled and its log deleted)
        final Path plan = dir.resolve("reassignment.json");
        Files.writeString(plan, "{\"version\":1,\"partitions\":[{\"topic\":\"moved\",\"partition\":0,\"replicas\":[2,3]}]}");
        final String execute = tool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--reassignment-json-file",
            plan.toString(), "--execute");
        assertTrue(execute.contains("Successfully started partition reassignment for moved-0"), execute);
        Await.await(() -> tool("org.apache.kafka.tools.reassign.ReassignPartitionsCommand", "--reassignment-json-file",
            plan.toString(), "--verify", "--preserve-throttles").contains("Reassignment of partition moved-0 is completed."),
            WAIT, () -> "the reassignment of moved-0 to complete: " + cluster.tails("moved"));
        awaitDescribed("moved", p -> ids(p.replicas()).equals(Set.of(2, 3)) && ids(p.isr()).equals(Set.of(2, 3)),
            "replicas and ISR {2,3}");
        assertTrue(Files.isDirectory(cluster.data(3).resolve("moved-0")), "node 3 has a log of moved-0");
        // kafka-topics --describe: its Admin asks any node for the topic's configs, node 1 too, which holds no replica
        // of moved any more (or soon): every node answers them from the metadata image, as Kafka's brokers do
        final String described = tool("org.apache.kafka.tools.TopicCommand", "--describe", "--topic", "moved");
        assertTrue(described.contains("Topic: moved") && described.contains("Replicas: 2,3"), described);
        // node 1 holds no replica of moved any more: its log is deleted (renamed -delete at once, as Kafka's, and removed
        // file.delete.delay.ms later)
        Await.await(() -> !Files.exists(cluster.data(1).resolve("moved-0")), WAIT,
            () -> "node 1 to delete its log of moved-0: " + cluster.tail(1));
        assertEquals(moved, cluster.readAll("moved", moved.size()), "every acknowledged record of moved-0 on its new replicas");
        moved.addAll(produce("moved", "n", RECORDS)); // acks=all, min.insync.replicas=2: the ISR {2,3} has them
        assertEquals(moved, cluster.readAll("moved", moved.size()), "and those the new replica set acknowledged");

        // the Admin API's answers and errors, Kafka 4.4's (see the class comment)
        try (Admin admin = cluster.admin(3))
        {
            assertTrue(admin.listPartitionReassignments().reassignments().get(30, TimeUnit.SECONDS).isEmpty());
            final TopicPartition nosuch = new TopicPartition("nosuch", 0);
            assertInstanceOf(UnknownTopicOrPartitionException.class, admin.electLeaders(ElectionType.PREFERRED, Set.of(nosuch))
                .partitions().get(30, TimeUnit.SECONDS).get(nosuch).orElseThrow());
            final TopicPartition elect = new TopicPartition("elect", 0);
            assertInstanceOf(ElectionNotNeededException.class, admin.electLeaders(ElectionType.PREFERRED, Set.of(elect))
                .partitions().get(30, TimeUnit.SECONDS).get(elect).orElseThrow());
            assertEquals(Map.of(), admin.electLeaders(ElectionType.PREFERRED, null).partitions().get(30, TimeUnit.SECONDS),
                "an election of every partition lists only those elected");
            final TopicPartition movedTp = new TopicPartition("moved", 0);
            final ExecutionException unknownBroker = assertThrows(ExecutionException.class, () -> admin
                .alterPartitionReassignments(Map.of(movedTp, Optional.of(new NewPartitionReassignment(List.of(2, 9)))))
                .all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(InvalidReplicaAssignmentException.class, unknownBroker.getCause(), unknownBroker.toString());
            assertTrue(unknownBroker.getCause().getMessage().contains("includes broker 9, but no such broker is registered"),
                unknownBroker.getCause().getMessage());
            final ExecutionException unknownTopic = assertThrows(ExecutionException.class, () -> admin
                .alterPartitionReassignments(Map.of(nosuch, Optional.of(new NewPartitionReassignment(List.of(1)))))
                .all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(UnknownTopicOrPartitionException.class, unknownTopic.getCause(), unknownTopic.toString());
            final ExecutionException noneInProgress = assertThrows(ExecutionException.class, () -> admin
                .alterPartitionReassignments(Map.of(movedTp, Optional.empty())).all().get(30, TimeUnit.SECONDS));
            assertInstanceOf(NoReassignmentInProgressException.class, noneInProgress.getCause(), noneInProgress.toString());
            assertEquals(Map.of(), admin.listPartitionReassignments(Set.of(nosuch)).reassignments().get(30, TimeUnit.SECONDS));
        }
    }

    /** Runs Kafka 4.4's tool {@code main} with {@code args} against the cluster in a child JVM; what it printed, exit 0 checked. */
    private String tool(final String main, final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx128m", "-cp", System.getProperty("java.class.path"), main, "--bootstrap-server", cluster.bootstrap()));
        command.addAll(List.of(args));
        final Path out = Files.createTempFile(dir, "tool", ".out");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), command + " did not end");
        final String printed = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), command + " failed:\n" + printed + "\n" + cluster.tails("moved"));
        return printed;
    }

    /** Waits until every node describes {@code topic}-0 as {@code wanted}. */
    private void awaitDescribed(final String topic, final Predicate<TopicPartitionInfo> wanted, final String what)
        throws Exception
    {
        for (int id = 1; id <= 3; id++)
        {
            awaitDescribed(id, topic, wanted, what);
        }
    }

    private void awaitDescribed(final int id, final String topic, final Predicate<TopicPartitionInfo> wanted, final String what)
        throws Exception
    {
        try (Admin admin = cluster.admin(id))
        {
            Await.awaitValue(() -> admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic)
                .partitions().get(0), p -> p != null && wanted.test(p), WAIT,
                () -> "node " + id + " to describe " + topic + "-0 " + what + ": " + cluster.tail(id));
        }
    }

    /** Produces {@code count} records to {@code topic}-0 with acks=all, each acknowledged before the next; their values. */
    private List<String> produce(final String topic, final String prefix, final int count) throws Exception
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        final List<String> acknowledged = new ArrayList<>();
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer()))
        {
            for (int i = 0; i < count; i++)
            {
                producer.send(new ProducerRecord<>(topic, 0, null, prefix + i)).get(60, TimeUnit.SECONDS);
                acknowledged.add(prefix + i);
            }
        }
        return acknowledged;
    }

    private static Set<Integer> ids(final List<Node> nodes)
    {
        return nodes.stream().map(Node::id).collect(Collectors.toSet());
    }
}
