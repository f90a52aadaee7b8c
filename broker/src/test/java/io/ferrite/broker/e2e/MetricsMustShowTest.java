package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.DoublePredicate;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 16's first Must show in one test: a broker, a producer and a consumer group; the message and byte rates match
 * what was produced within 1% through all three readers — {@code ferrite-stat --once} (a child JVM), JMX under Kafka's
 * MBean names ({@code kafka.server:type=BrokerTopicMetrics}), and a real Prometheus server scraping the endpoint,
 * queried through its HTTP API; the group's lag goes to 0 as it catches up; an unknown topic shows in the error counters
 * of all three.
 *
 * <p>The rates are made deterministic by their window: the test takes two instants, T0 before the first record and T1
 * once every reader shows the last one, with the producer at rest at both; the rate each reader gives is its counter's
 * increase over [T0, T1] divided by T1 - T0 (Prometheus computes it itself, with the {@code @} modifier at T0 and T1),
 * and the produced rate is what the producer sent (its records, and its {@code byte-total}: the batches' bytes) over the
 * same window. Kafka's one-minute rate (an EWMA ticked every 5 s) depends on where the ticks fall, so it is not compared.
 */
class MetricsMustShowTest
{
    private static final String TOPIC = "watched";
    private static final String GROUP = "watchers";
    private static final int RECORDS = 2_000;
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();
    private static final String TOPIC_METRICS = "kafka.server:type=BrokerTopicMetrics,name=";

    @TempDir
    Path dir;

    @Test
    void ratesWithinOnePercentThroughFerriteStatJmxAndPrometheusLagToZeroAndAnErrorCounted() throws Exception
    {
        final int metricsPort = LoopbackPorts.take();
        final Path data = Files.createDirectories(dir.resolve("data"));
        try (RunningBroker broker = new RunningBroker(data, Map.of(BrokerConfig.METRICS_LISTENER, "http://127.0.0.1:" + metricsPort,
            BrokerConfig.AUTO_CREATE_TOPICS, "false"));
             PrometheusServer prometheus = new PrometheusServer(Files.createDirectories(dir.resolve("prometheus")),
                 "127.0.0.1:" + metricsPort))
        {
            await(prometheus::ready, DEADLINE, () -> "prometheus ready; its log:\n" + prometheus.log());
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 3, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            final String messagesIn = "kafka_server_brokertopicmetrics_messagesin_total{topic=\"" + TOPIC + "\"}";
            final String bytesIn = "kafka_server_brokertopicmetrics_bytesin_total{topic=\"" + TOPIC + "\"}";
            final String bytesOut = "kafka_server_brokertopicmetrics_bytesout_total{topic=\"" + TOPIC + "\"}";
            awaitPrometheus(prometheus, last(messagesIn), v -> v == 0, "the topic's series scraped at 0");
            final double t0 = nowSeconds();

            final double sentBytes;
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.LINGER_MS_CONFIG, 5)))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(TOPIC, ("key-" + i).getBytes(StandardCharsets.UTF_8),
                        ("value " + i + " " + "v".repeat(i % 200)).getBytes(StandardCharsets.UTF_8)));
                }
                producer.flush();
                assertEquals(0.0, producerMetric(producer, "record-retry-total"), "no retried batch (counted twice by the producer)");
                assertEquals(RECORDS, producerMetric(producer, "record-send-total"));
                sentBytes = producerMetric(producer, "byte-total");
            }
            // every reader at rest with the last record (a produce is counted before it is answered, and the producer
            // had every answer): T1
            final long brokerBytesIn = stat(broker, "--filter", "bytes in topic=" + TOPIC).get("bytes in topic=" + TOPIC);
            awaitStat(broker, "records in topic=" + TOPIC, v -> v == RECORDS);
            awaitJmx(TOPIC_METRICS + "MessagesInPerSec,topic=" + TOPIC, v -> v == RECORDS);
            awaitJmx(TOPIC_METRICS + "BytesInPerSec,topic=" + TOPIC, v -> v == brokerBytesIn);
            awaitPrometheus(prometheus, last(messagesIn), v -> v == RECORDS, "messages in scraped");
            awaitPrometheus(prometheus, last(bytesIn), v -> v == brokerBytesIn, "bytes in scraped");
            final double t1 = nowSeconds();
            final double window = t1 - t0;
            final double producedRate = RECORDS / window;
            final double producedByteRate = sentBytes / window;

            final Map<String, Long> stat = stat(broker, "--filter", "topic=" + TOPIC);
            final double statRate = stat.get("records in topic=" + TOPIC) / window;
            final double statByteRate = stat.get("bytes in topic=" + TOPIC) / window;
            final double jmxRate = count(TOPIC_METRICS + "MessagesInPerSec,topic=" + TOPIC) / window;
            final double jmxByteRate = count(TOPIC_METRICS + "BytesInPerSec,topic=" + TOPIC) / window;
            final double promRate = prometheus.value(overWindow(messagesIn, t0, t1));
            final double promByteRate = prometheus.value(overWindow(bytesIn, t0, t1));
            final String rates = String.format("over %.3f s: produced %.2f msg/s %.1f B/s; ferrite-stat %.2f %.1f; JMX %.2f %.1f; "
                + "Prometheus %.2f %.1f", window, producedRate, producedByteRate, statRate, statByteRate, jmxRate, jmxByteRate,
                promRate, promByteRate);
            System.out.println(rates);
            for (final double r : new double[] {statRate, jmxRate, promRate})
            {
                assertWithinOnePercent(producedRate, r, "message rate; " + rates);
            }
            for (final double r : new double[] {statByteRate, jmxByteRate, promByteRate})
            {
                assertWithinOnePercent(producedByteRate, r, "byte rate; " + rates);
            }

            // a consumer group reads it all: each batch goes out once (one consumer, nothing re-read), so bytes go out
            // at the rate they were produced, over the reading's own window; and the group's lag goes to 0
            final double t2 = nowSeconds();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, GROUP)))
            {
                consumer.subscribe(List.of(TOPIC));
                final int[] read = {0};
                await(() ->
                {
                    read[0] += consumer.poll(Duration.ofMillis(200)).count();
                    return read[0] >= RECORDS;
                }, DEADLINE, () -> "the group read " + RECORDS + ", read " + read[0]);
                assertEquals(RECORDS, read[0], "each record once");
                consumer.commitSync();
            }
            awaitStat(broker, "bytes out topic=" + TOPIC, v -> v >= brokerBytesIn);
            final long brokerBytesOut = stat(broker, "--filter", "bytes out topic=" + TOPIC).get("bytes out topic=" + TOPIC);
            awaitJmx(TOPIC_METRICS + "BytesOutPerSec,topic=" + TOPIC, v -> v == brokerBytesOut);
            awaitPrometheus(prometheus, last(bytesOut), v -> v == brokerBytesOut, "bytes out scraped");
            final double t3 = nowSeconds();
            final double readWindow = t3 - t2;
            final double readRate = sentBytes / readWindow;
            final double[] outRates = {brokerBytesOut / readWindow,
                count(TOPIC_METRICS + "BytesOutPerSec,topic=" + TOPIC) / readWindow, prometheus.value(overWindow(bytesOut, t2, t3))};
            for (final double r : outRates)
            {
                assertWithinOnePercent(readRate, r, "bytes out rate against the bytes produced, over " + readWindow + " s: "
                    + java.util.Arrays.toString(outRates) + " vs " + readRate);
            }
            for (int p = 0; p < 3; p++)
            {
                final String label = "consumer lag topic=" + TOPIC + " partition=" + p + " group=" + GROUP;
                awaitStat(broker, "--group", GROUP, label, v -> v == 0);
                awaitPrometheus(prometheus, "sum(kafka_consumergroup_lag{consumergroup=\"" + GROUP + "\",topic=\"" + TOPIC
                    + "\",partition=\"" + p + "\"})", v -> v == 0, "lag 0 on partition " + p);
            }

            // an induced error: a producer to a topic that does not exist (auto-creation off)
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(UnknownTopicSends.producerConfig()))
            {
                UnknownTopicSends.untilCounted(producer, "no-such-topic",
                    () -> count("kafka.network:type=RequestMetrics,name=ErrorsPerSec,request=Metadata,error=UNKNOWN_TOPIC_OR_PARTITION") > 0,
                    "UNKNOWN_TOPIC_OR_PARTITION counted in JMX");
            }
            awaitStat(broker, "error UNKNOWN_TOPIC_OR_PARTITION (3)", v -> v >= 1);
            awaitPrometheus(prometheus, last("ferrite_network_errors_total{error=\"UNKNOWN_TOPIC_OR_PARTITION\",code=\"3\"}"),
                v -> v >= 1, "the error scraped");
            awaitPrometheus(prometheus, last("kafka_network_requestmetrics_errors_total{request=\"Metadata\"}"), v -> v >= 1,
                "Metadata's errors scraped");
        }
    }

    private static void assertWithinOnePercent(final double expected, final double actual, final String what)
    {
        assertTrue(Math.abs(actual - expected) <= expected / 100, what + ": " + actual + " not within 1% of " + expected);
    }

    private static double nowSeconds()
    {
        return System.currentTimeMillis() / 1000.0;
    }

    /** The last sample within a minute (a scrape that failed on a loaded machine marks the series stale for a while). */
    private static String last(final String series)
    {
        return "sum(last_over_time(" + series + "[1m]))";
    }

    /** Prometheus' own rate of {@code series} over [t0, t1]: its increase between the samples at t0 and at t1, per second. */
    private static String overWindow(final String series, final double t0, final double t1)
    {
        return String.format(java.util.Locale.ROOT, "(sum(last_over_time(%s[1m] @ %.3f)) - (sum(last_over_time(%s[1m] @ %.3f)) or vector(0)))"
            + " / %.3f", series, t1, series, t0, t1 - t0);
    }

    private static double producerMetric(final KafkaProducer<byte[], byte[]> producer, final String name)
    {
        for (final Map.Entry<org.apache.kafka.common.MetricName, ? extends Metric> e : producer.metrics().entrySet())
        {
            if (e.getKey().group().equals("producer-topic-metrics") && e.getKey().name().equals(name)
                && TOPIC.equals(e.getKey().tags().get("topic")))
            {
                return ((Number)e.getValue().metricValue()).doubleValue();
            }
        }
        throw new AssertionError("no producer metric " + name);
    }

    private static long count(final String name)
    {
        try
        {
            final ObjectName objectName = new ObjectName(name);
            return JMX.isRegistered(objectName) ? ((Number)JMX.getAttribute(objectName, "Count")).longValue() : 0;
        }
        catch (final Exception e)
        {
            throw new IllegalStateException(name, e);
        }
    }

    private static void awaitJmx(final String name, final java.util.function.LongPredicate wanted)
    {
        final long[] seen = {-1};
        await(() -> wanted.test(seen[0] = count(name)), DEADLINE, () -> name + " Count: " + seen[0]);
    }

    private static void awaitPrometheus(final PrometheusServer prometheus, final String query, final DoublePredicate wanted,
        final String what)
    {
        final Double[] seen = {null};
        await(() -> (seen[0] = prometheus.value(query)) != null && wanted.test(seen[0]), DEADLINE,
            () -> what + ": " + query + " was " + seen[0] + "; prometheus' log:\n" + prometheus.log());
    }

    private static Map<String, Long> stat(final RunningBroker broker, final String... args)
    {
        final String[] all = new String[args.length + 1];
        all[0] = "--all";
        System.arraycopy(args, 0, all, 1, args.length);
        return FerriteStatTest.onceRows(broker.dir, all);
    }

    private static void awaitStat(final RunningBroker broker, final String label, final DoublePredicate wanted)
    {
        awaitStat(broker, "--filter", label, label, wanted);
    }

    private static void awaitStat(final RunningBroker broker, final String option, final String value, final String label,
        final DoublePredicate wanted)
    {
        final Map<?, ?>[] seen = {null};
        await(() ->
        {
            final Map<String, Long> rows = stat(broker, option, value);
            seen[0] = rows;
            return rows.get(label) != null && wanted.test(rows.get(label));
        }, DEADLINE, () -> "ferrite-stat " + option + " " + value + ": " + label + "; it showed " + seen[0]);
    }
}
