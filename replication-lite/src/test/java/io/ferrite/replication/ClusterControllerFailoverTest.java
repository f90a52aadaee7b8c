package io.ferrite.replication;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.message.CreateTopicsResponseData.CreatableTopicResult;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three nodes in combined mode in child JVMs ({@link ClusterMember}) with Kafka's controller and metadata loader:
 * each registers and is unfenced; Kafka's Admin with {@code bootstrap.controllers} finds the active controller; then,
 * three times, a topic of replication factor 3 created through the controller listener appears in all three images
 * alike, the node leading it is SIGKILLed, and after the session timeout the survivors' images show it fenced and
 * the partition led by a survivor at a higher leader epoch with a smaller ISR; the killed node, restarted, registers
 * again and is unfenced. Prints the time from each kill to the new leader in both survivors' images.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class ClusterControllerFailoverTest
{
    /** JVM start alone has taken 15-35 s on the shared 2-core machine (the spike's figures). */
    private static final Duration DEADLINE = Duration.ofSeconds(180);
    private static final Pattern KEYED = Pattern.compile("^(STATE|ACTIVE|BROKER|PARTITION) node=(\\d+)( \\S+)? (\\S+=.*)$");
    private static final Pattern PARTITION = Pattern.compile(
        "leader=(-?\\d+) leaderEpoch=(\\d+) partitionEpoch=(\\d+) replicas=(\\S+) isr=\\[([\\d,]*)] elr=(\\S+)");
    private static final int ROUNDS = 3;

    @TempDir
    Path dir;

    private String voters;
    private final List<InetSocketAddress> controllers = new ArrayList<>();
    private final Process[] members = new Process[3];
    /** Per node: its latest line for each key ("STATE", "BROKER id=2", "PARTITION t0-0", ...) and when it came. */
    private final List<Map<String, Seen>> seen = List.of(new ConcurrentHashMap<>(), new ConcurrentHashMap<>(), new ConcurrentHashMap<>());
    private final Queue<String> output = new ConcurrentLinkedQueue<>();

    private record Seen(String value, long nanos)
    {
    }

    @AfterEach
    void stopMembers()
    {
        LoopbackVoters.killAll(members);
    }

    @Test
    void aKilledPartitionLeaderIsFencedReplacedAtAHigherEpochAndRejoinsWhenRestarted() throws Exception
    {
        controllers.addAll(LoopbackVoters.addresses(3));
        voters = LoopbackVoters.voters(controllers);
        for (int id = 1; id <= 3; id++)
        {
            start(id);
        }
        for (int id = 1; id <= 3; id++)
        {
            awaitAllSee(id, "fenced=false");
        }

        final Properties adminConfig = new Properties();
        adminConfig.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, controllers.get(0).getHostString() + ":" + controllers.get(0).getPort());
        try (Admin admin = Admin.create(adminConfig))
        {
            final int active = Await.awaitValue(this::activeController, id -> id > 0, DEADLINE, () -> "one active controller; " + tail());
            assertEquals(active, admin.describeCluster().controller().get(60, TimeUnit.SECONDS).id());
            assertEquals(active, admin.describeMetadataQuorum().quorumInfo().get(60, TimeUnit.SECONDS).leaderId());
        }

        final List<Long> failoverMs = new ArrayList<>();
        final List<String> rounds = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++)
        {
            final String partition = "PARTITION t" + round + "-0";
            final CreatableTopicResult created = ControllerRpc.createTopic(controllers, "t" + round, 1, (short)3);
            assertEquals(Errors.NONE.code(), created.errorCode(), created::errorMessage);
            final String agreed = Await.awaitValue(() -> sameInAll(partition), value -> value != null && isr(value).size() == 3,
                DEADLINE, () -> partition + " alike in all three images with a full ISR; " + tail());
            final int killed = leader(agreed);
            final int epoch = leaderEpoch(agreed);

            final int activeBefore = activeController();
            final long killedAt = System.nanoTime();
            members[killed - 1].destroyForcibly().waitFor(); // SIGKILL
            long latest = 0;
            for (int survivor = 1; survivor <= 3; survivor++)
            {
                if (survivor != killed)
                {
                    final int s = survivor;
                    final Seen after = Await.awaitValue(() -> seen.get(s - 1).get(partition),
                        got -> got != null && leader(got.value()) > 0 && leader(got.value()) != killed, DEADLINE,
                        () -> "node " + s + " to see a new leader of " + partition + " after " + killed + "; " + tail());
                    assertTrue(leaderEpoch(after.value()) > epoch, () -> "leader epoch after " + epoch + ": " + after);
                    assertEquals(2, isr(after.value()).size(), () -> "the ISR without " + killed + ": " + after);
                    assertTrue(!isr(after.value()).contains(killed), () -> "the ISR without " + killed + ": " + after);
                    Await.await(() -> value(s, "BROKER id=" + killed).startsWith("fenced=true"), DEADLINE,
                        () -> "node " + s + " to see broker " + killed + " fenced; " + tail());
                    latest = Math.max(latest, after.nanos());
                }
            }
            failoverMs.add(TimeUnit.NANOSECONDS.toMillis(latest - killedAt));
            rounds.add(TimeUnit.NANOSECONDS.toMillis(latest - killedAt) + " ms (killed " + killed +
                (activeBefore == killed ? ", the active controller)" : ", the active controller was " + activeBefore + ")"));
            final String[] survivors = new String[2];
            int i = 0;
            for (int id = 1; id <= 3; id++)
            {
                if (id != killed)
                {
                    survivors[i++] = value(id, partition);
                }
            }
            assertEquals(survivors[0], survivors[1], "both survivors' images alike");

            start(killed);
            awaitAllSee(killed, "fenced=false");
            Await.await(() -> value(killed, "STATE").equals("state=RUNNING"), DEADLINE, () -> "node " + killed + " running; " + tail());
            assertNotEquals(killed, leader(value(killed, partition)), "the restarted node does not lead " + partition);
        }
        final List<Long> sorted = new ArrayList<>(failoverMs);
        Collections.sort(sorted);
        System.out.println("FAILOVER kill -> new leader in both survivors' images: " + rounds + "; median " +
            sorted.get(sorted.size() / 2) + " ms");
        output.stream().filter(line -> line.contains("COST")).forEach(System.out::println);
    }

    /** Waits until all three nodes' images show broker {@code id} with {@code state} (its latest registration). */
    private void awaitAllSee(final int id, final String state)
    {
        for (int node = 1; node <= 3; node++)
        {
            final int n = node;
            Await.await(() -> value(n, "BROKER id=" + id).startsWith(state), DEADLINE,
                () -> "node " + n + " to see broker " + id + " " + state + "; " + tail());
        }
    }

    private String value(final int node, final String key)
    {
        final Seen got = seen.get(node - 1).get(key);
        return got == null ? "" : got.value();
    }

    private String sameInAll(final String key)
    {
        final String first = value(1, key);
        return !first.isEmpty() && first.equals(value(2, key)) && first.equals(value(3, key)) ? first : null;
    }

    private int activeController()
    {
        int active = -1;
        for (int node = 1; node <= 3; node++)
        {
            if (value(node, "ACTIVE").equals("active=true"))
            {
                active = active == -1 ? node : -2;
            }
        }
        return active;
    }

    private static Matcher partition(final String value)
    {
        final Matcher m = PARTITION.matcher(value);
        if (!m.matches())
        {
            throw new IllegalArgumentException(value);
        }
        return m;
    }

    private static int leader(final String value)
    {
        return Integer.parseInt(partition(value).group(1));
    }

    private static int leaderEpoch(final String value)
    {
        return Integer.parseInt(partition(value).group(2));
    }

    private static List<Integer> isr(final String value)
    {
        final String list = partition(value).group(5);
        return list.isEmpty() ? List.of() : List.of(list.split(",")).stream().map(Integer::valueOf).toList();
    }

    private String tail()
    {
        final List<String> lines = List.copyOf(output);
        return "output:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    private void start(final int id) throws IOException
    {
        seen.get(id - 1).clear();
        final Process process = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m", "-Xms32m", "-cp", System.getProperty("java.class.path"), ClusterMember.class.getName(),
            Integer.toString(id), dir.resolve("node-" + id).toString(), voters).redirectErrorStream(true).start();
        members[id - 1] = process;
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while ((line = in.readLine()) != null)
                {
                    final Matcher m = KEYED.matcher(line);
                    if (m.matches())
                    {
                        final String key = m.group(1) + (m.group(3) == null ? "" : m.group(3));
                        seen.get(id - 1).put(key, new Seen(m.group(4), System.nanoTime()));
                    }
                    output.add(id + "| " + line);
                }
            }
            catch (final IOException ex)
            {
                output.add(id + "| output ended: " + ex);
            }
        }, "member-" + id + "-output");
        reader.setDaemon(true);
        reader.start();
    }
}
