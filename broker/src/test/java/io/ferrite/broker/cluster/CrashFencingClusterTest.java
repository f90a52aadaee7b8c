package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ferrite's crash fencing ({@code ferrite.cluster.crash.fence.ms}, replication-lite's {@code CrashFencing}) on three
 * real nodes: a SIGKILLed partition leader is fenced, and its partition led by another member of the ISR, without
 * waiting out {@code broker.session.timeout.ms} — here 30 s, so that the bound below (well under it) fails with the
 * feature off (-1), when only the session timeout fences — whether the killed node is the active controller's
 * (the next active controller probes it at its activation) or not (the active controller saw its heartbeat connection
 * close); every acknowledged record is read back. A SIGSTOPped active controller (its connections open, its listener
 * still completing connections in the kernel) is fenced only after the session timeout, as in Kafka, and unfenced by
 * its first heartbeat once it runs again.
 */
@Tag("slow") // three broker JVMs per test, a kill or a pause: about a minute each
final class CrashFencingClusterTest
{
    /** Long, so that the bound of a crash's failover is far below it: only Ferrite's crash fencing meets the bound. */
    private static final int SESSION_TIMEOUT_MS = 30_000;
    /**
     * Kill to the first acknowledgement of a record sent after it: the grace (0.5 s), a tick, the fence committed,
     * the new leader's image, the producer's metadata refresh — and for a killed active controller KRaft's election
     * first (controller.quorum.fetch.timeout.ms 2 s, then the election timeout, 1-2 s; under a load average of 57 on
     * this 2-core machine one such kill took two elections and 12.6 s). Well below the 30 s session.
     */
    private static final long FAILOVER_BOUND_MS = 20_000;
    private static final Duration WAIT = Duration.ofSeconds(120);

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes().jvmOptions("-Dorg.slf4j.simpleLogger.showDateTime=true",
        "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS", "-Dorg.slf4j.simpleLogger.log.io.ferrite.replication=info",
        // the failover's steps in the nodes' logs: KRaft's leader change, the controller's fencing
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.raft.QuorumState=info",
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.controller.ReplicationControlManager=info",
        "-Dorg.slf4j.simpleLogger.log.org.apache.kafka.controller.BrokerHeartbeatManager=info");

    @Test
    void aKilledLeaderIsFencedByTheActiveControllerWithoutWaitingOutTheSession() throws Exception
    {
        cluster.start(Map.of("broker.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS)));
        final int controller = activeController();
        killTheLeaderAndMeasure(controller % 3 + 1, "a leader that is not the active controller (" + controller + ")");
    }

    @Test
    void aKilledActiveControllerLeadingAPartitionIsFencedByTheNextOne() throws Exception
    {
        cluster.start(Map.of("broker.session.timeout.ms", Integer.toString(SESSION_TIMEOUT_MS)));
        final int controller = activeController();
        killTheLeaderAndMeasure(controller, "the active controller, leading the partition");
    }

    @Test
    void aPausedActiveControllerIsFencedOnlyAfterTheSessionTimeoutAndRejoinsWhenResumed() throws Exception
    {
        final int session = 12_000;
        cluster.start(Map.of("broker.session.timeout.ms", Integer.toString(session)));
        final int paused = activeController();
        final int survivor = paused % 3 + 1;
        leadBy("paused", paused);
        cluster.pause(paused);
        final long pausedAt = System.nanoTime();
        try (Admin admin = cluster.admin(survivor))
        {
            // the next active controller starts the paused broker's session at its activation (Kafka's
            // BrokerHeartbeatManager) and probes it then: its listener still completes connections, so it waits
            Await.await(() -> !live(admin).contains(paused), WAIT,
                () -> "node " + survivor + " to list the paused node " + paused + " as fenced: " + cluster.tails("fenc"));
            final long fencedAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - pausedAt);
            System.out.println("CrashFencingClusterTest: paused active controller " + paused + " fenced " + fencedAfterMs +
                " ms after the SIGSTOP (broker.session.timeout.ms " + session + ")");
            assertTrue(fencedAfterMs >= session, "a paused broker is fenced by the session timeout (" + session +
                " ms from the next controller's activation), not sooner: fenced after " + fencedAfterMs + " ms\n" +
                cluster.tails("fenc"));
            cluster.resume(paused);
            Await.await(() -> live(admin).contains(paused), WAIT,
                () -> "node " + survivor + " to list the resumed node " + paused + " as live again: " + cluster.tails("fenc"));
        }
    }

    /**
     * Creates {@code crash} led by {@code victim}, produces to it at ~100 records/s (acks=all, idempotent), SIGKILLs
     * the victim, and measures the kill to the first acknowledgement of a record sent after it; then checks every
     * acknowledged record is read back.
     */
    private void killTheLeaderAndMeasure(final int victim, final String what) throws Exception
    {
        final String topic = "crash";
        leadBy(topic, victim);
        final Set<String> acknowledged = ConcurrentHashMap.newKeySet();
        final Set<String> failed = ConcurrentHashMap.newKeySet();
        final AtomicLong firstAckAfterKill = new AtomicLong();
        long killedAt = 0;
        java.time.LocalTime killedAtClock = null; // for reading the nodes' logs beside it
        int killedAfter = -1;
        int sent = 0;
        try (KafkaProducer<String, String> producer = producer())
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (System.nanoTime() < deadline && (firstAckAfterKill.get() == 0 || sent < killedAfter + 300))
            {
                final String value = Integer.toString(sent);
                final boolean afterKill = killedAt != 0;
                producer.send(new ProducerRecord<>(topic, 0, value, value), (metadata, failure) ->
                {
                    if (failure != null)
                    {
                        failed.add(value + ": " + failure);
                        return;
                    }
                    acknowledged.add(value);
                    if (afterKill)
                    {
                        firstAckAfterKill.compareAndSet(0, System.nanoTime());
                    }
                });
                sent++;
                if (killedAt == 0 && acknowledged.size() >= 200)
                {
                    cluster.kill(victim); // SIGKILL
                    killedAt = System.nanoTime();
                    killedAtClock = java.time.LocalTime.now();
                    killedAfter = sent;
                }
                Thread.sleep(10); // pacing: ~100 records/s
            }
            producer.flush();
        }
        assertTrue(killedAt != 0, "the victim was killed (200 acknowledgements before it): " + cluster.tails(null));
        assertTrue(firstAckAfterKill.get() != 0, "a record sent after the kill of " + what + " was acknowledged within 90 s; " +
            "failed: " + failed + "\n" + cluster.tails("fenc"));
        final long failoverMs = TimeUnit.NANOSECONDS.toMillis(firstAckAfterKill.get() - killedAt);
        System.out.println("CrashFencingClusterTest: killed " + victim + " (" + what + ") at " + killedAtClock +
            ": first acks=all acknowledgement of a record sent after the kill " + failoverMs + " ms after it; the nodes' " +
            "steps:\n" + stages(topic));
        assertTrue(failoverMs < FAILOVER_BOUND_MS, "kill of " + what + " to the first acknowledgement of a record sent " +
            "after it: " + failoverMs + " ms, not under " + FAILOVER_BOUND_MS + " ms (broker.session.timeout.ms " +
            SESSION_TIMEOUT_MS + ")\n" + cluster.tails("fenc"));
        assertEquals(Set.of(), failed, "no send failed");
        final List<String> read = cluster.readAll(topic, acknowledged.size());
        final Set<String> lost = new HashSet<>(acknowledged);
        lost.removeAll(read);
        assertEquals(Set.of(), lost, "acknowledged records missing from " + topic + "-0 after the failover");
        assertEquals(read.size(), new HashSet<>(read).size(), "no record read back twice");
    }

    /**
     * The nodes' log lines of a failover's steps, in time order (each starts with its time): KRaft's leader change,
     * the controller's fence (a session timeout, or crash fencing), every node applying it, the new leader and follower.
     */
    private String stages(final String topic) throws java.io.IOException
    {
        final java.util.TreeSet<String> lines = new java.util.TreeSet<>();
        for (final String marker : List.of("CrashFencing", "Fencing broker", "granted fencing", "Completed transition to Leader",
            "ISR-eligible brokers", topic + "-0: leader at epoch", topic + "-0: follower of"))
        {
            lines.addAll(cluster.logLines(marker));
        }
        return String.join("\n", lines);
    }

    /** Creates {@code topic} (one partition, replicas {@code leader} first: its preferred leader), waits for its ISR of 3. */
    private void leadBy(final String topic, final int leader) throws Exception
    {
        final List<Integer> replicas = new ArrayList<>(List.of(leader));
        for (int id = 1; id <= 3; id++)
        {
            if (id != leader)
            {
                replicas.add(id);
            }
        }
        try (Admin admin = cluster.admin(leader))
        {
            admin.createTopics(List.of(new NewTopic(topic, Map.of(0, replicas)).configs(Map.of("min.insync.replicas", "2"))))
                .all().get(60, TimeUnit.SECONDS);
            Await.await(() ->
            {
                final TopicDescription d;
                try
                {
                    d = admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS).get(topic);
                }
                catch (final ExecutionException ex)
                {
                    if (ex.getCause() instanceof UnknownTopicOrPartitionException)
                    {
                        return false; // created, not yet in the image of the node asked
                    }
                    throw ex;
                }
                final TopicPartitionInfo p = d.partitions().get(0);
                return p.leader() != null && p.leader().id() == leader && p.isr().size() == 3;
            }, WAIT, () -> topic + "-0 led by " + leader + " with 3 in sync: " + cluster.tails(topic));
        }
    }

    /** The active controller, as node 1's controller listener names it (DescribeCluster for controllers, KIP-919). */
    private int activeController()
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG,
            "127.0.0.1:" + cluster.controllerPort(1))))
        {
            return Await.awaitValue(() -> admin.describeCluster().controller().get(30, TimeUnit.SECONDS),
                node -> node != null && node.id() >= 1, WAIT, "an active controller").id();
        }
    }

    private static Set<Integer> live(final Admin admin) throws Exception
    {
        return admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).stream().map(Node::id).collect(Collectors.toSet());
    }

    private KafkaProducer<String, String> producer()
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all"); // idempotent: kafka-clients' default
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "60000");
        return new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
    }
}
