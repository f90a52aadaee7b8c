package io.ferrite.broker.e2e;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 18's Must show: a producer over its byte rate is throttled to within 10% of the quota while another client's
 * latency stays as before; and a consumer over its {@code consumer_byte_rate} likewise — kafka-clients over real sockets.
 *
 * <p>How the rate is measured. Kafka's quota is a rate over its window (11 samples of 1 s, and at least 10 s counted):
 * a client that sends as fast as it may is let through at once up to about 10 s of its quota, then throttled, and when
 * the samples of that burst leave the window it may send about as much again at once — the traffic of a greedy client
 * is a burst every window and a trickle between (the same with Kafka 4.4, whose algorithm this is). Its rate is therefore
 * measured over whole windows: from the start of one refill burst to the start of a later one, the bytes the client sent
 * (its {@code outgoing-byte-total} to the broker; the consumer's {@code bytes-consumed-total}) over the time between.
 * The first burst (at the start) is not a refill and is not counted from. A measure over an arbitrary span would count
 * one burst more or less depending on where it starts (from 0.7 to 1.75 times the quota over 10-25 s spans in a
 * simulation of Kafka's algorithm), which says nothing about the quota. The consumer fetches 64 KiB at most: a throttled
 * fetch is answered empty, its bytes taken back, so a response large next to the window wastes room (below). The other
 * client's latency is printed (p50 and
 * p99 of a synchronous 1 KiB produce, alone and beside the throttled client), not asserted: timings on a shared machine.
 */
@Tag("slow") // about 45 s each: several quota windows of 11 s
class QuotaMustShowTest
{
    private static final double QUOTA = 256 * 1024;
    private static final long MAX_RUN_MS = 70_000;

    @TempDir
    Path dir;

    /** Cumulative bytes of a client, sampled over time, and the refill bursts found in them. */
    static final class Timeline
    {
        private final List<long[]> samples = new ArrayList<>();

        synchronized void add(final long ms, final long bytes)
        {
            samples.add(new long[] {ms, bytes});
        }

        /** The samples just before each burst (over 1.5 s of quota within 500 ms) that starts after {@code fromMs}. */
        synchronized List<long[]> burstStarts(final long fromMs)
        {
            final List<long[]> starts = new ArrayList<>();
            for (int i = 0; i < samples.size(); i++)
            {
                final long[] s = samples.get(i);
                if (s[0] < fromMs)
                {
                    continue;
                }
                int j = i;
                while (j < samples.size() && samples.get(j)[0] < s[0] + 500)
                {
                    j++;
                }
                if (j == samples.size())
                {
                    break;
                }
                if (samples.get(j)[1] - s[1] > 1.5 * QUOTA)
                {
                    int k = i; // the burst's first step: more than a tenth of a second's quota between two samples
                    while (k < j && samples.get(k + 1)[1] - samples.get(k)[1] <= 0.1 * QUOTA)
                    {
                        k++;
                    }
                    starts.add(samples.get(k));
                    final long next = samples.get(k)[0] + 3_000;
                    while (i + 1 < samples.size() && samples.get(i + 1)[0] < next)
                    {
                        i++;
                    }
                }
            }
            return starts;
        }
    }

    /** The rate over whole quota windows: between the first refill burst after {@code startMs + 5 s} and the third. */
    private static double[] rateOverWindows(final Timeline timeline, final long startMs)
    {
        final List<long[]> bursts = timeline.burstStarts(startMs + 5_000);
        assertTrue(bursts.size() >= 3, "three refill bursts in " + MAX_RUN_MS + " ms, found " + bursts.size());
        final long[] first = bursts.get(0);
        final long[] last = bursts.get(2);
        return new double[] {(last[1] - first[1]) * 1000.0 / (last[0] - first[0]), (first[0] - startMs) / 1000.0,
            (last[0] - startMs) / 1000.0};
    }

    private static Metric metric(final Map<MetricName, ? extends Metric> metrics, final String group, final String name,
        final Map<String, String> tags)
    {
        return metrics.entrySet().stream().filter(e -> e.getKey().group().equals(group) && e.getKey().name().equals(name)
            && e.getKey().tags().entrySet().containsAll(tags.entrySet())).map(Map.Entry::getValue).findFirst().orElseThrow(
                () -> new AssertionError("no metric " + group + " " + name + " " + tags));
    }

    private static long value(final Metric metric)
    {
        return (long)((Number)metric.metricValue()).doubleValue();
    }

    /** Synchronous 1 KiB produces of the unthrottled client for {@code ms}: their latencies (µs). */
    private static Histogram latencies(final KafkaProducer<byte[], byte[]> free, final long ms, final AtomicBoolean until)
        throws Exception
    {
        final Histogram h = new Histogram(60_000_000L, 3);
        final long end = System.currentTimeMillis() + ms;
        while (System.currentTimeMillis() < end && (until == null || !until.get()))
        {
            final long t = System.nanoTime();
            free.send(new ProducerRecord<>("free", new byte[1024])).get(30, TimeUnit.SECONDS);
            h.recordValue((System.nanoTime() - t) / 1000);
        }
        return h;
    }

    private static String figures(final Histogram h)
    {
        return "p50 " + h.getValueAtPercentile(50) + " µs, p99 " + h.getValueAtPercentile(99) + " µs over " + h.getTotalCount() + " produces";
    }

    @Test
    void aProducerOverItsByteRateIsThrottledToWithinTenPercentWhileAnotherKeepsItsLatency() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("throttled", 1, (short)1), new NewTopic("free", 1, (short)1)))
                    .all().get(30, TimeUnit.SECONDS);
                ClientQuotasTest.alter(admin, ClientQuotasTest.set(ClientQuotasTest.entity(ClientQuotaEntity.CLIENT_ID, "throttled"),
                    "producer_byte_rate", QUOTA));
            }
            try (KafkaProducer<byte[], byte[]> free = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "free",
                ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                latencies(free, 2_000, null); // warm-up: the connection, the JIT
                final Histogram alone = latencies(free, 5_000, null);
                final KafkaProducer<byte[], byte[]> throttled = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "throttled",
                    ProducerConfig.ACKS_CONFIG, "1", ProducerConfig.LINGER_MS_CONFIG, 5));
                final Timeline timeline = new Timeline();
                final AtomicBoolean done = new AtomicBoolean();
                final long start = System.currentTimeMillis();
                final Thread sender = new Thread(() ->
                {
                    final byte[] value = new byte[1024];
                    while (!done.get())
                    {
                        throttled.send(new ProducerRecord<>("throttled", value)); // as fast as the producer takes them
                    }
                }, "throttled-sender");
                final Thread sampler = new Thread(() ->
                {
                    Metric out = null;
                    while (!done.get())
                    {
                        try
                        {
                            out = out != null ? out : metric(throttled.metrics(), "producer-node-metrics", "outgoing-byte-total",
                                Map.of("node-id", "node-1"));
                            timeline.add(System.currentTimeMillis(), value(out));
                        }
                        catch (final AssertionError notYet) // the node's metrics appear with its connection
                        {
                            timeline.add(System.currentTimeMillis(), 0);
                        }
                        try
                        {
                            Thread.sleep(20); // a sampling period, not a wait for an outcome
                        }
                        catch (final InterruptedException ex)
                        {
                            return;
                        }
                    }
                }, "throttled-sampler");
                sender.start();
                sampler.start();
                final Histogram beside;
                final double[] rate;
                try
                {
                    final AtomicBoolean measured = new AtomicBoolean();
                    final Thread watcher = new Thread(() ->
                    {
                        while (!measured.get() && System.currentTimeMillis() - start < MAX_RUN_MS)
                        {
                            if (timeline.burstStarts(start + 5_000).size() >= 3)
                            {
                                measured.set(true);
                            }
                            try
                            {
                                Thread.sleep(200);
                            }
                            catch (final InterruptedException ex)
                            {
                                return;
                            }
                        }
                        measured.set(true);
                    }, "throttled-watcher");
                    watcher.start();
                    beside = latencies(free, MAX_RUN_MS, measured);
                    watcher.join();
                    rate = rateOverWindows(timeline, start);
                }
                finally
                {
                    done.set(true);
                    sender.join(10_000);
                    sampler.join(10_000);
                    throttled.close(Duration.ZERO); // what it still buffers is dropped: it would take minutes under the quota
                }
                final double throttle = value(metric(throttled.metrics(), "producer-metrics", "produce-throttle-time-max", Map.of()));
                System.out.printf("producer_byte_rate %.0f B/s: the throttled producer sent %.0f B/s (%.3f of the quota) between the "
                    + "refills at %.1f s and %.1f s; unthrottled producer alone: %s; beside the throttled one: %s%n", QUOTA, rate[0],
                    rate[0] / QUOTA, rate[1], rate[2], figures(alone), figures(beside));
                assertTrue(Math.abs(rate[0] / QUOTA - 1) <= 0.10, "rate " + rate[0] + " B/s against a quota of " + QUOTA);
                assertEquals(0.0, value(metric(free.metrics(), "producer-metrics", "produce-throttle-time-max", Map.of())),
                    "the unthrottled producer was never throttled");
                assertTrue(throttle > 0, "the throttled producer saw throttle times: produce-throttle-time-max " + throttle);
            }
        }
    }

    @Test
    void aConsumerOverItsByteRateIsThrottledToWithinTenPercent() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            QuotaThrottleTest.topicWithQuota(broker, "consumed", "throttled", "consumer_byte_rate", QUOTA);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5)))
            {
                final byte[] value = new byte[1024];
                for (int i = 0; i < 24 * 1024; i++) // 24 MiB: more than the consumer may read in the run at its quota
                {
                    producer.send(new ProducerRecord<>("consumed", value));
                }
                producer.flush();
            }
            // fetches of 64 KiB at most: Kafka answers a fetch over the quota empty and takes its bytes back, so a response
            // large next to the window's 10 s of quota wastes the room it did not fit in — with kafka-clients' default 1 MiB
            // against 256 KiB/s, 2 MiB of a window's 2.5 MiB pass: 0.732 of the quota measured here, 0.667-0.727 in a
            // simulation of Kafka's algorithm; with 64 KiB the simulation gives 0.978
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.CLIENT_ID_CONFIG, "throttled",
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 64 * 1024)))
            {
                consumer.assign(List.of(new TopicPartition("consumed", 0)));
                final Timeline timeline = new Timeline();
                final long start = System.currentTimeMillis();
                Metric consumed = null;
                while (System.currentTimeMillis() - start < MAX_RUN_MS && timeline.burstStarts(start + 5_000).size() < 3)
                {
                    consumer.poll(Duration.ofMillis(20));
                    consumed = consumed != null ? consumed : metric(consumer.metrics(), "consumer-fetch-manager-metrics",
                        "bytes-consumed-total", Map.of());
                    timeline.add(System.currentTimeMillis(), value(consumed));
                }
                final double[] rate = rateOverWindows(timeline, start);
                final double throttle = value(metric(consumer.metrics(), "consumer-fetch-manager-metrics", "fetch-throttle-time-max", Map.of()));
                System.out.printf("consumer_byte_rate %.0f B/s: the consumer read %.0f B/s (%.3f of the quota) between the refills at "
                    + "%.1f s and %.1f s; fetch-throttle-time-max %.0f ms%n", QUOTA, rate[0], rate[0] / QUOTA, rate[1], rate[2], throttle);
                assertTrue(Math.abs(rate[0] / QUOTA - 1) <= 0.10, "rate " + rate[0] + " B/s against a quota of " + QUOTA);
                assertTrue(throttle > 0, "the consumer saw throttle times: fetch-throttle-time-max " + throttle);
            }
        }
    }
}
