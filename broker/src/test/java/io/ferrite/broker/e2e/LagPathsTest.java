package io.ferrite.broker.e2e;

import io.ferrite.testing.TeeStream;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.LagCounters;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The lag and offset figures' paths the other metrics tests leave out (review L5), each driven through a real broker
 * with kafka-clients and read back through {@code ferrite-stat --once} (a child JVM) and JMX under Kafka's names: more
 * committed offsets than there are lag counters ({@link LagCounters#MAX}), the rest counted as "consumer lag not
 * counted (no room)" with one warning; OffsetDelete and retention counted in {@code offset-deletion-count} and {@code
 * offset-expiration-count}; and the lag of a read_committed group behind an open transaction, the high watermark minus
 * its committed offset, the LAG Kafka 4.4's {@code kafka-consumer-groups.sh --describe} prints.
 */
class LagPathsTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();
    private static final String COORDINATOR = "kafka.server:type=group-coordinator-metrics";
    private static final String NOT_COUNTED = "consumer lag not counted (no room)";

    @TempDir
    Path dir;

    @Test
    void offsetsBeyondTheLagCountersAreCountedAsNotCountedWithOneWarning() throws Exception
    {
        final int partitions = 41;
        final int groups = 100; // 4 100 offsets: 4 more than LagCounters.MAX
        final int beyond = partitions * groups - LagCounters.MAX;
        final ByteArrayOutputStream captured = new ByteArrayOutputStream();
        final PrintStream originalErr = System.err;
        System.setErr(new PrintStream(new TeeStream(originalErr, captured), true, StandardCharsets.UTF_8)); // slf4j-simple's output
        try (RunningBroker broker = new RunningBroker(Files.createDirectories(dir.resolve("data")), Map.of());
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("wide", partitions, (short)1))).all().get(30, TimeUnit.SECONDS);
            final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
            for (int p = 0; p < partitions; p++)
            {
                offsets.put(new TopicPartition("wide", p), new OffsetAndMetadata(0));
            }
            // g0 first (the group deleted below, its counters in use), then the others side by side: one after the
            // other, the 100 commits took seconds of a quiet build (before issue 17's build work)
            admin.alterConsumerGroupOffsets("g0", offsets).all().get(30, TimeUnit.SECONDS);
            final List<org.apache.kafka.common.KafkaFuture<Void>> commits = new java.util.ArrayList<>();
            for (int g = 1; g < groups; g++)
            {
                commits.add(admin.alterConsumerGroupOffsets("g" + g, offsets).all());
            }
            for (final org.apache.kafka.common.KafkaFuture<Void> commit : commits)
            {
                commit.get(30, TimeUnit.SECONDS);
            }
            awaitRow(broker, NOT_COUNTED, beyond);
            assertEquals(LagCounters.MAX, lagRows(broker), "every lag counter in use");
            awaitJmx(COORDINATOR, "offset-count", (double)(partitions * groups));

            // a group deleted frees its 41 counters: the offsets not counted get theirs at a later refresh
            admin.deleteConsumerGroups(List.of("g0")).all().get(30, TimeUnit.SECONDS);
            awaitRow(broker, NOT_COUNTED, 0);
            assertEquals(partitions * (groups - 1), lagRows(broker));
        }
        finally
        {
            System.setErr(originalErr);
        }
        final String err = captured.toString(StandardCharsets.UTF_8);
        assertEquals(1, err.split("no room for more consumer lag counters", -1).length - 1,
            "one warning, however many refreshes found no room:\n" + err);
    }

    /**
     * The retention is not waited out: the coordinators' clock ({@link SteppedClock}) is stepped past it once the
     * deletion is counted and no expiry is (before issue 17's build work the test waited out a 6 s retention).
     */
    @Test
    void offsetDeleteAndExpiryAreCountedWhereKafkaCountsThem() throws Exception
    {
        final long retentionMs = 60_000;
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(Files.createDirectories(dir.resolve("data")),
            Map.of(BrokerConfig.INTERNAL_OFFSETS_RETENTION_MS, Long.toString(retentionMs),
                BrokerConfig.OFFSETS_RETENTION_CHECK_INTERVAL_MS, "200"), clock);
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("counted", 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            final TopicPartition p0 = new TopicPartition("counted", 0);
            final TopicPartition p1 = new TopicPartition("counted", 1);
            final long committedAt = System.nanoTime();
            admin.alterConsumerGroupOffsets("deleting", Map.of(p0, new OffsetAndMetadata(0), p1, new OffsetAndMetadata(0)))
                .all().get(30, TimeUnit.SECONDS);
            admin.alterConsumerGroupOffsets("expiring", Map.of(p0, new OffsetAndMetadata(0))).all().get(30, TimeUnit.SECONDS);
            // kafka-consumer-groups.sh --delete-offsets: OffsetDelete of an Empty group's partition
            admin.deleteConsumerGroupOffsets("deleting", Set.of(p0)).all().get(30, TimeUnit.SECONDS);
            // not an assertion of speed: on a machine too loaded to delete within the retention the counts below prove nothing
            assumeTrue(System.nanoTime() - committedAt < TimeUnit.MILLISECONDS.toNanos(retentionMs),
                "the deletion came before any offset could expire");
            awaitJmx(COORDINATOR, "offset-deletion-count", 1.0);
            assertEquals(Map.of("group offsets deleted", 1L), rows(broker, "--filter", "group offsets deleted"));
            assertEquals(0L, rows(broker, "--all", "--filter", "group offsets expired").get("group offsets expired"));

            // both groups Empty since their first commit: the two offsets left (one each) expire once the retention passed
            clock.step(Duration.ofMillis(retentionMs + 1));
            awaitJmx(COORDINATOR, "offset-expiration-count", 2.0);
            awaitJmx(COORDINATOR, "offset-count", 0.0);
            assertEquals(Map.of("group offsets expired", 2L), rows(broker, "--filter", "group offsets expired"));
            assertEquals(1.0, JMX.getAttribute(new ObjectName(COORDINATOR), "offset-deletion-count"), "an expiry is no deletion");
        }
    }

    @Test
    void theLagBehindAnOpenTransactionIsTheHighWatermarkMinusTheCommittedOffset() throws Exception
    {
        final String topic = "txn-lag";
        final String group = "committed-readers";
        try (RunningBroker broker = new RunningBroker(Files.createDirectories(dir.resolve("data")), Map.of());
             Admin admin = broker.admin();
             KafkaProducer<byte[], byte[]> plain = broker.producer(Map.of());
             KafkaProducer<byte[], byte[]> txn = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "lagging-txn"));
             KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, group,
                 ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed"));
             KafkaToolSession tools = new KafkaToolSession())
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            for (int i = 0; i < 5; i++)
            {
                plain.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte)i}));
            }
            plain.flush(); // offsets 0-4
            txn.initTransactions();
            txn.beginTransaction();
            for (int i = 0; i < 3; i++)
            {
                txn.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte)i}));
            }
            txn.flush(); // offsets 5-7, the transaction open: high watermark 8, last stable offset 5

            consumer.subscribe(List.of(topic));
            readUntil(consumer, 5);
            consumer.commitSync(); // 5: all a read_committed consumer can read
            assertEquals(5, consumer.committed(Set.of(new TopicPartition(topic, 0))).get(new TopicPartition(topic, 0)).offset());
            awaitLag(broker, topic, group, 3);
            assertEquals("3", toolLag(tools, broker, topic, group), "the lag kafka-consumer-groups.sh prints");

            txn.commitTransaction(); // the marker at 8: high watermark 9
            awaitLag(broker, topic, group, 4);
            readUntil(consumer, 3);
            consumer.commitSync(); // 9, past the marker
            awaitLag(broker, topic, group, 0);
            assertEquals("0", toolLag(tools, broker, topic, group));
        }
    }

    private static void readUntil(final KafkaConsumer<byte[], byte[]> consumer, final int records)
    {
        final int[] read = {0};
        await(() ->
        {
            read[0] += consumer.poll(Duration.ofMillis(200)).count();
            return read[0] >= records;
        }, DEADLINE, () -> "read " + records + " records, read " + read[0]);
        assertEquals(records, read[0]);
    }

    private static void awaitLag(final RunningBroker broker, final String topic, final String group, final long lag)
    {
        final Map<String, Long> expected = Map.of("consumer lag topic=" + topic + " partition=0 group=" + group, lag);
        final Map<?, ?>[] last = {null};
        await(() ->
        {
            last[0] = rows(broker, "--group", group);
            return expected.equals(last[0]);
        }, DEADLINE, () -> "ferrite-stat --group " + group + " shows " + expected + "; it showed " + last[0]);
    }

    /**
     * The LAG column of {@code kafka-consumer-groups.sh --describe --group group} for partition 0 of {@code topic}, in the
     * test's child JVM of Kafka's tools.
     */
    private static String toolLag(final KafkaToolSession tools, final RunningBroker broker, final String topic, final String group)
        throws Exception
    {
        final KafkaTool.Run run = tools.run("org.apache.kafka.tools.consumer.group.ConsumerGroupCommand",
            "--bootstrap-server", broker.bootstrap(), "--describe", "--group", group);
        assertEquals(0, run.status(), run.toString());
        final List<String> header = List.of(run.lines().stream().filter(l -> l.startsWith("GROUP")).findFirst()
            .orElseThrow(() -> new AssertionError(run.toString())).trim().split("\\s+"));
        final String[] row = run.lines().stream().filter(l -> l.startsWith(group + " ")).findFirst()
            .orElseThrow(() -> new AssertionError(run.toString())).trim().split("\\s+");
        assertEquals(topic, row[header.indexOf("TOPIC")], run.toString());
        return row[header.indexOf("LAG")];
    }

    private static int lagRows(final RunningBroker broker)
    {
        return (int)rows(broker, "--filter", "consumer lag topic=").size();
    }

    private static void awaitRow(final RunningBroker broker, final String label, final long value)
    {
        final Long[] seen = {null};
        await(() ->
        {
            seen[0] = rows(broker, "--all", "--filter", label).get(label);
            return seen[0] != null && seen[0] == value;
        }, DEADLINE, () -> "ferrite-stat shows " + label + " " + value + ", was " + seen[0]);
    }

    private static Map<String, Long> rows(final RunningBroker broker, final String... args)
    {
        return FerriteStatTest.onceRows(broker.dir, args);
    }

    private static void awaitJmx(final String name, final String attribute, final Object expected) throws Exception
    {
        ConsumerLagTest.awaitJmx(name, attribute, expected);
    }
}
