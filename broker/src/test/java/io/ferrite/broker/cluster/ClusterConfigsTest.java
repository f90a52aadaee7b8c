package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
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
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Configs in cluster mode come from the metadata image, as on Kafka 4.4's brokers (issues 14 and 16), against three
 * Ferrite brokers (child JVMs): a topic's DescribeConfigs is the same on every node, the two that hold none of its
 * replicas included; a cluster default set with {@code kafka-configs --entity-default} through node 1 is forwarded to
 * the controller, written to the metadata log and shown by nodes 2 and 3 as DYNAMIC_DEFAULT_BROKER_CONFIG; a per-broker
 * value for node 2 is node 2's only; a config that cannot change at run time is refused with Kafka's error before
 * anything is forwarded; a node restarted takes the image's values, not those of a single node's
 * {@code dynamic-broker-configs.properties} left in its log directory. Every check asks one node itself
 * ({@link NodeRequests}): Kafka's Admin picks the node it sends to.
 */
@Tag("slow") // three broker JVMs, a restart and a tool's JVM: about a minute
final class ClusterConfigsTest
{
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final byte TOPIC = 2;
    private static final byte BROKER = 4;
    private static final String BACKOFF = "log.cleaner.backoff.ms";

    @TempDir
    Path dir;

    @Test
    void configsAreTheMetadataImagesOnEveryNode() throws Exception
    {
        try (ThreeNodes cluster = new ThreeNodes(dir).start())
        {
            // a topic with one replica: two of the three nodes hold none of it, and describe it from the image
            try (Admin admin = cluster.admin(1))
            {
                admin.createTopics(List.of(new NewTopic("solo", 1, (short)1).configs(Map.of("retention.ms", "123456",
                    "cleanup.policy", "compact")))).all().get(60, TimeUnit.SECONDS);
            }
            final String replica = Await.awaitValue(() -> NodeRequests.partition0(cluster.brokerPort(1), "solo"),
                p -> p.startsWith("leader "), WAIT, () -> "node 1 to know solo-0: " + cluster.tails("solo"));
            assertTrue(replica.contains("replicas [" + NodeRequests.leader(replica) + "]"), replica);
            // the replica makes the partition's directory when it applies the image, which may come after it answers
            // from that image: awaited; the other two never make one
            final int leader = NodeRequests.leader(replica);
            Await.await(() -> Files.isDirectory(cluster.data(leader).resolve("solo-0")), WAIT,
                () -> "the replica, node " + leader + ", to make solo-0's directory: " + cluster.tail(leader));
            final List<String> answers = new ArrayList<>();
            for (int id = 1; id <= 3; id++)
            {
                final int node = id;
                answers.add(Await.awaitValue(() -> shown(NodeRequests.describe(cluster.brokerPort(node), TOPIC, "solo")),
                    shown -> shown.startsWith("error 0"), WAIT, () -> "node " + node + " to describe solo's configs: "
                    + cluster.tail(node)));
                assertEquals(id == leader, Files.isDirectory(cluster.data(id).resolve("solo-0")),
                    "node " + id + " holds a log of solo-0 only if it is its replica: " + replica);
            }
            assertTrue(answers.get(0).contains(" retention.ms=123456 DYNAMIC_TOPIC_CONFIG [DYNAMIC_TOPIC_CONFIG:retention.ms=123456]"),
                answers.get(0));
            assertTrue(answers.get(0).contains(" cleanup.policy=compact DYNAMIC_TOPIC_CONFIG [DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact, "
                + "DEFAULT_CONFIG:log.cleanup.policy=delete]"), answers.get(0));
            // Kafka's controller writes the cluster's min.insync.replicas as a cluster default (KIP-966's ELR safety
            // record, from its static config), so a KRaft cluster's topics show it with that source
            assertTrue(answers.get(0).contains(" min.insync.replicas=2 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:"
                + "min.insync.replicas=2, STATIC_BROKER_CONFIG:min.insync.replicas=2, DEFAULT_CONFIG:min.insync.replicas=1]"),
                answers.get(0));
            assertEquals(List.of(answers.get(0), answers.get(0), answers.get(0)), answers, "every node's answer the same");
            assertEquals("error 3 []", shown(NodeRequests.describe(cluster.brokerPort(2), TOPIC, "nosuch")));

            // the cluster default through node 1 (kafka-configs' Admin asked node 1 only): every node shows it
            final String altered = tool(cluster.brokerPort(1), "--entity-type", "brokers", "--entity-default", "--alter",
                "--add-config", BACKOFF + "=4321");
            assertTrue(altered.contains("Completed updating default config for brokers"), altered);
            for (int id = 1; id <= 3; id++)
            {
                awaitBackoff(cluster, id, "", "4321 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:"
                    + BACKOFF + "=4321]");
                awaitBackoff(cluster, id, Integer.toString(id), "4321 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:"
                    + BACKOFF + "=4321, DEFAULT_CONFIG:" + BACKOFF + "=15000]");
            }
            final String described = tool(cluster.brokerPort(3), "--entity-type", "brokers", "--entity-default", "--describe");
            assertTrue(described.contains(BACKOFF + "=4321 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:" + BACKOFF
                + "=4321}"), described);

            // node 2's own value, through node 2: node 2's only. A later default through node 3 shows on 1 and 3 (so
            // they have read past node 2's record) with the default's source, and under node 2's value on node 2
            assertTrue(NodeRequests.alter(cluster.brokerPort(2), BROKER, "2", BACKOFF, "2222").startsWith("error 0 "));
            assertTrue(NodeRequests.alter(cluster.brokerPort(3), BROKER, "", BACKOFF, "5000").startsWith("error 0 "));
            for (final int id : new int[] {1, 3})
            {
                awaitBackoff(cluster, id, Integer.toString(id), "5000 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:"
                    + BACKOFF + "=5000, DEFAULT_CONFIG:" + BACKOFF + "=15000]");
            }
            awaitBackoff(cluster, 2, "2", "2222 DYNAMIC_BROKER_CONFIG [DYNAMIC_BROKER_CONFIG:" + BACKOFF + "=2222, "
                + "DYNAMIC_DEFAULT_BROKER_CONFIG:" + BACKOFF + "=5000, DEFAULT_CONFIG:" + BACKOFF + "=15000]");

            // Kafka's controller checks only a broker resource's name: the node checks the rest before forwarding
            assertEquals("error 42 message Cannot update these configs dynamically: [num.partitions]",
                NodeRequests.alter(cluster.brokerPort(1), BROKER, "", "num.partitions", "3"));
            assertEquals("error 42 message Cannot update these configs dynamically: [log.cleaner.enable]",
                NodeRequests.alter(cluster.brokerPort(2), BROKER, "2", "log.cleaner.enable", "false"));
            assertEquals("error 3 []", shown(NodeRequests.describe(cluster.brokerPort(1), TOPIC, "nosuch")));

            // node 3 restarted with a single node's file of dynamic configs in its log directory: the image's are in force
            cluster.kill(3);
            final Path file = cluster.data(3).resolve("dynamic-broker-configs.properties");
            final String stored = "default." + BACKOFF + "=999\nbroker." + BACKOFF + "=998\n";
            Files.writeString(file, stored, StandardCharsets.UTF_8);
            cluster.restart(3);
            awaitBackoff(cluster, 3, "3", "5000 DYNAMIC_DEFAULT_BROKER_CONFIG [DYNAMIC_DEFAULT_BROKER_CONFIG:"
                + BACKOFF + "=5000, DEFAULT_CONFIG:" + BACKOFF + "=15000]");
            assertEquals(stored, Files.readString(file, StandardCharsets.UTF_8), "the file is left as it was");
            assertEquals(answers.get(0), shown(NodeRequests.describe(cluster.brokerPort(3), TOPIC, "solo")));
            assertFalse(answers.get(0).isEmpty());
        }
    }

    /** Waits until node {@code id} describes broker resource {@code broker}'s {@link #BACKOFF} as {@code wanted}. */
    private static void awaitBackoff(final ThreeNodes cluster, final int id, final String broker, final String wanted)
    {
        Await.awaitValue(() -> entry(NodeRequests.describe(cluster.brokerPort(id), BROKER, broker), BACKOFF),
            wanted::equals, WAIT, () -> "node " + id + " to describe broker '" + broker + "' " + BACKOFF + " as " + wanted
            + ": " + cluster.tail(id));
    }

    /** "error E" and every config as " name=value SOURCE [SOURCE:synonym=value, ...]", sorted by name. */
    private static String shown(final DescribeConfigsResponseData.DescribeConfigsResult result)
    {
        return "error " + result.errorCode() + " " + result.configs().stream().map(c -> " " + c.name() + "=" + entryOf(c))
            .sorted().collect(Collectors.toList());
    }

    private static String entry(final DescribeConfigsResponseData.DescribeConfigsResult result, final String name)
    {
        return result.configs().stream().filter(c -> c.name().equals(name)).map(ClusterConfigsTest::entryOf).findFirst()
            .orElse("error " + result.errorCode() + " " + result.errorMessage() + ": no " + name);
    }

    private static String entryOf(final DescribeConfigsResponseData.DescribeConfigsResourceResult c)
    {
        return c.value() + " " + source(c.configSource()) + " " + c.synonyms().stream()
            .map(s -> source(s.source()) + ":" + s.name() + "=" + s.value()).collect(Collectors.toList());
    }

    /** Kafka's names of the config sources, by their id on the wire. */
    private static String source(final byte id)
    {
        return List.of("UNKNOWN", "DYNAMIC_TOPIC_CONFIG", "DYNAMIC_BROKER_CONFIG", "DYNAMIC_DEFAULT_BROKER_CONFIG",
            "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG", "DYNAMIC_BROKER_LOGGER_CONFIG").get(id);
    }

    /** Kafka 4.4's {@code kafka-configs} against node {@code port} only, in a child JVM: what it printed (exit 0 checked). */
    private String tool(final int port, final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            // the tool needs Kafka's server jars (DynamicConfig), on the cluster's class path the build writes
            "-Xmx128m", "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + Files.readString(
                Path.of("..", "replication-lite", "target", "cluster.classpath"), StandardCharsets.UTF_8).trim(),
            "org.apache.kafka.tools.ConfigCommand",
            "--bootstrap-server", "127.0.0.1:" + port));
        command.addAll(List.of(args));
        final Path out = Files.createTempFile(dir, "tool", ".out");
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        assertTrue(process.waitFor(120, TimeUnit.SECONDS), command + " did not end");
        final String printed = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, process.exitValue(), command + " failed:\n" + printed);
        return printed;
    }
}
