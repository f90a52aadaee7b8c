package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.LoopbackPorts;
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
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Issue 16's Must show for consumer lag and the group coordinator's figures: a producer writes to two partitions, a
 * consumer group reads everything and commits part-way (lag exact and above 0), producers alone move on (lag grows
 * with no commit), the group catches up (lag 0), and the group is deleted (its lag counters freed) — each step read
 * through {@code ferrite-stat --once --group} (a child JVM, as bin/ferrite-stat runs), a real Prometheus server's
 * query API ({@code kafka_consumergroup_lag}) and JMX under Kafka 4.4's names ({@code
 * kafka.server:type=group-coordinator-metrics}, {@code kafka.coordinator.group:type=GroupMetadataManager}).
 */
class ConsumerLagTest
{
    private static final String TOPIC = "lagged";
    private static final String GROUP = "laggards";
    private static final int PER_PARTITION = 100;
    private static final int COMMITTED_P0 = 40;
    private static final int MORE_P1 = 25;
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();
    private static final String COORDINATOR = "kafka.server:type=group-coordinator-metrics";
    private static final String MANAGER = "kafka.coordinator.group:type=GroupMetadataManager,name=";

    @TempDir
    Path dir;

    @Test
    void lagIsExactPerPartitionGrowsWithProducersAndGoesToZeroWhenTheGroupCatchesUp() throws Exception
    {
        final int metricsPort = LoopbackPorts.take();
        final Path data = Files.createDirectories(dir.resolve("data"));
        try (RunningBroker broker = new RunningBroker(data, Map.of(BrokerConfig.METRICS_LISTENER,
            "http://127.0.0.1:" + metricsPort));
             PrometheusServer prometheus = new PrometheusServer(Files.createDirectories(dir.resolve("prometheus")),
                 "127.0.0.1:" + metricsPort);
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all")))
        {
            await(prometheus::ready, DEADLINE, () -> "prometheus ready; its log:\n" + prometheus.log());
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            send(producer, 0, PER_PARTITION);
            send(producer, 1, PER_PARTITION);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP)))
            {
                consumer.subscribe(List.of(TOPIC));
                readUntil(consumer, 2 * PER_PARTITION);
                // part-way on partition 0, everything on partition 1
                consumer.commitSync(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(COMMITTED_P0),
                    new TopicPartition(TOPIC, 1), new OffsetAndMetadata(PER_PARTITION)));
                awaitLag(broker, prometheus, PER_PARTITION - COMMITTED_P0, 0);
                awaitJmx(COORDINATOR, "offset-commit-count", 2.0);
                awaitJmx(COORDINATOR, "offset-count", 2.0);
                awaitJmx(MANAGER + "NumOffsets", "Value", 2L);
                awaitJmx(COORDINATOR + ",protocol=classic", "group-count", 1.0);
                awaitJmx(COORDINATOR + ",state=Stable", "classic-group-count", 1.0);
                awaitJmx(MANAGER + "NumGroupsStable", "Value", 1L);
                awaitJmx(COORDINATOR, "group-completed-rebalance-count", 1.0);

                // only the producer moves: the lag grows with no commit (the coordinator's timed refresh)
                send(producer, 1, MORE_P1);
                awaitLag(broker, prometheus, PER_PARTITION - COMMITTED_P0, MORE_P1);

                // the group catches up
                readUntil(consumer, MORE_P1);
                consumer.commitSync();
                awaitLag(broker, prometheus, 0, 0);
                awaitJmx(COORDINATOR, "offset-commit-count", 4.0);
                awaitPrometheus(prometheus, "sum(kafka_server_group_coordinator_metrics_offset_commit_count)", 4);
                awaitPrometheus(prometheus, "sum(kafka_server_group_coordinator_metrics_classic_group_count{state=\"Stable\"})", 1);
            }
            awaitJmx(COORDINATOR + ",state=Empty", "classic-group-count", 1.0);
            awaitJmx(MANAGER + "NumGroupsEmpty", "Value", 1L);
            awaitJmx(COORDINATOR + ",state=Stable", "classic-group-count", 0.0);
            // the group deleted: its offsets, and with them its lag counters, are gone
            try (Admin admin = broker.admin())
            {
                admin.deleteConsumerGroups(List.of(GROUP)).all().get(30, TimeUnit.SECONDS);
            }
            await(() -> lagRows(broker).isEmpty(), DEADLINE, "the deleted group's lag counters freed");
            awaitJmx(COORDINATOR, "offset-count", 0.0);
            awaitJmx(MANAGER + "NumGroups", "Value", 0L);
        }
    }

    private static void send(final KafkaProducer<byte[], byte[]> producer, final int partition, final int records)
        throws Exception
    {
        for (int i = 0; i < records; i++)
        {
            producer.send(new ProducerRecord<>(TOPIC, partition, null, ("record " + i).getBytes(StandardCharsets.UTF_8)));
        }
        producer.flush();
    }

    private static void readUntil(final KafkaConsumer<byte[], byte[]> consumer, final int records)
    {
        final int[] read = {0};
        await(() ->
        {
            read[0] += consumer.poll(Duration.ofMillis(200)).count();
            return read[0] >= records;
        }, DEADLINE, () -> "the group read " + records + " records, read " + read[0]);
        assertEquals(records, read[0], "no record read twice");
    }

    /** Awaits lag {@code p0} and {@code p1} in ferrite-stat, then in Prometheus (scraped every second). */
    private static void awaitLag(final RunningBroker broker, final PrometheusServer prometheus, final long p0, final long p1)
    {
        final Map<String, Long> expected = new LinkedHashMap<>();
        expected.put(label(0), p0);
        expected.put(label(1), p1);
        final Map<?, ?>[] last = {null};
        await(() ->
        {
            last[0] = lagRows(broker);
            return expected.equals(last[0]);
        }, DEADLINE, () -> "ferrite-stat --group " + GROUP + " shows " + expected + "; it showed " + last[0]);
        for (int p = 0; p < 2; p++)
        {
            final String query = "sum(kafka_consumergroup_lag{consumergroup=\"" + GROUP + "\",topic=\"" + TOPIC
                + "\",partition=\"" + p + "\"})";
            awaitPrometheus(prometheus, query, p == 0 ? p0 : p1);
        }
    }

    private static void awaitPrometheus(final PrometheusServer prometheus, final String query, final double want)
    {
        final Double[] seen = {null};
        await(() ->
        {
            seen[0] = prometheus.value(query);
            return seen[0] != null && seen[0] == want;
        }, DEADLINE, () -> query + " == " + want + ", was " + seen[0]);
    }

    private static String label(final int partition)
    {
        return "consumer lag topic=" + TOPIC + " partition=" + partition + " group=" + GROUP;
    }

    private static Map<String, Long> lagRows(final RunningBroker broker) throws Exception
    {
        return FerriteStatTest.rows(FerriteStatTest.statLines(broker.dir, "--once", "--group", GROUP));
    }

    static void awaitJmx(final String name, final String attribute, final Object expected) throws Exception
    {
        final ObjectName objectName = new ObjectName(name);
        final Object[] seen = {null};
        await(() ->
        {
            seen[0] = JMX.isRegistered(objectName) ? JMX.getAttribute(objectName, attribute) : "(not registered)";
            return expected.equals(seen[0]);
        }, DEADLINE, () -> name + " " + attribute + " == " + expected + ", was " + seen[0]);
    }
}
