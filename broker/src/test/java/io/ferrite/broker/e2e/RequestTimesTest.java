package io.ferrite.broker.e2e;

import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterReadings.Figure;
import io.ferrite.broker.metrics.CounterTypes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.MetricName;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's {@code RequestMetrics} request times (TotalTimeMs and its stages) and the Fetch split (FetchConsumer,
 * FetchFollower, and Fetch for every fetch, as Kafka 4.4's {@code Request.updateRequestMetrics}), read through the
 * platform MBean server after real kafka-clients traffic and a follower's fetches over a real socket: each histogram
 * counts every request answered, its percentiles are ordered, a follower's fetches count under FetchFollower and
 * Fetch, and their errors under {@code ErrorsPerSec,request=Fetch} only (Kafka's are per API).
 */
class RequestTimesTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);
    private static final String METRICS = "kafka.network:type=RequestMetrics,name=";
    private static final String[] STAGES = {"TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs",
        "ResponseSendTimeMs"};
    private static final String[] PERCENTILES = {"50thPercentile", "75thPercentile", "95thPercentile", "98thPercentile",
        "99thPercentile", "999thPercentile"};
    private static final int RECORDS = 40;

    private final MBeanServer server = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void producesAndFetchesAreTimedAsKafkasRequestMetrics() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            final Uuid topicId;
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("timed", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                topicId = admin.describeTopics(List.of("timed")).allTopicNames().get().get("timed").topicId();
            }
            assertEquals(0L, count("TotalTimeMs", "Produce"), "nothing produced yet");
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "all")))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    // one Produce request each: the next record is sent once this one is answered
                    producer.send(new ProducerRecord<>("timed", 0, null, new byte[100])).get(30, TimeUnit.SECONDS);
                }
                assertEquals(0.0, metric(producer.metrics(), "record-retry-total"), "no request was retried");
            }
            // the time is recorded once the answer is written: the client may read it a moment before
            for (final String stage : STAGES)
            {
                await(() -> count(stage, "Produce") == RECORDS, DEADLINE,
                    () -> stage + " Produce Count == " + RECORDS + ", is " + count(stage, "Produce"));
            }
            assertEquals((long)RECORDS, attribute("RequestsPerSec", "Produce", "Count"), "RequestsPerSec counts the same");
            for (final String stage : STAGES)
            {
                assertOrdered(stage, "Produce");
            }
            assertTrue((double)attribute("TotalTimeMs", "Produce", "50thPercentile") > 0, "a produce takes time");
            assertTrue((double)attribute("RemoteTimeMs", "Produce", "Max") > 0,
                "an acks=all produce waits for its log thread (Kafka's purgatory)");

            final long consumed;
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(new TopicPartition("timed", 0)));
                final int[] read = {0};
                await(() ->
                {
                    for (final ConsumerRecord<byte[], byte[]> ignored : consumer.poll(Duration.ofMillis(100)))
                    {
                        read[0]++;
                    }
                    return read[0] >= RECORDS;
                }, DEADLINE, () -> "read " + RECORDS + " records, read " + read[0]);
                consumed = (long)metric(consumer.metrics(), "fetch-total");
            }
            assertTrue(consumed > 0, "the consumer fetched");
            // every client is closed: once the broker closed each connection (it read it to its end), no fetch of the
            // consumer's (it sends the next one before poll returns) can still be counted
            await(() -> connections(broker, CounterTypes.CONNECTIONS_CLOSED) == connections(broker, CounterTypes.CONNECTIONS_ACCEPTED),
                DEADLINE, () -> "the broker closed the clients' connections: accepted "
                    + connections(broker, CounterTypes.CONNECTIONS_ACCEPTED) + ", closed " + connections(broker, CounterTypes.CONNECTIONS_CLOSED));
            await(() -> count("TotalTimeMs", "FetchConsumer") >= consumed, DEADLINE,
                () -> "the consumer's " + consumed + " answered fetches timed, " + count("TotalTimeMs", "FetchConsumer"));
            final long consumerFetches = (long)attribute("RequestsPerSec", "FetchConsumer", "Count");
            assertTrue(consumerFetches >= count("TotalTimeMs", "FetchConsumer"), "a fetch is counted when read, timed when answered");
            assertOrdered("TotalTimeMs", "FetchConsumer");
            assertEquals(0L, attribute("RequestsPerSec", "FetchFollower", "Count"), "no follower fetched yet");
            assertEquals(0L, count("TotalTimeMs", "FetchFollower"), "no follower fetched yet");
            assertEquals(consumerFetches, (long)attribute("RequestsPerSec", "Fetch", "Count"),
                "Kafka's Fetch counts every fetch: the consumer's so far");
            assertEquals(count("TotalTimeMs", "FetchConsumer"), count("TotalTimeMs", "Fetch"), "and times them");
            assertEquals((double)attribute("TotalTimeMs", "FetchConsumer", "Max"), (double)attribute("TotalTimeMs", "Fetch", "Max"),
                "the same fetches");

            // a follower's fetches: the replica id in the request (v12) and in its replica_state (v17)
            broker.broker.leadership().leadWithoutController("timed", 0, 0, new int[] {1, 2, 3}, new int[] {1, 2, 3},
                (topic, partition, leaderEpoch, isr) -> { }).get(20, TimeUnit.SECONDS);
            for (final short version : new short[] {RawFollower.OLD_VERSION, RawFollower.NEW_VERSION})
            {
                try (RawFollower follower = new RawFollower(broker.broker.address().getPort(), 2, version, "timed", topicId))
                {
                    assertEquals(Errors.NONE.code(), follower.fetch(0, 0).errorCode());
                }
            }
            // and one past the log end: its error is a fetch's (Kafka's ErrorsPerSec is per API: request=Fetch)
            try (RawFollower follower = new RawFollower(broker.broker.address().getPort(), 2, RawFollower.NEW_VERSION, "timed",
                topicId))
            {
                assertEquals(Errors.OFFSET_OUT_OF_RANGE.code(), follower.fetch(0, 1_000).errorCode());
            }
            await(() -> count("TotalTimeMs", "FetchFollower") == 3, DEADLINE,
                () -> "the follower's 3 fetches timed, " + count("TotalTimeMs", "FetchFollower"));
            assertEquals(3L, attribute("RequestsPerSec", "FetchFollower", "Count"), "and counted");
            assertEquals(1L, attribute("ErrorsPerSec", "Fetch,error=OFFSET_OUT_OF_RANGE", "Count"),
                "the follower's fetch's error counted under Fetch");
            for (final String kind : new String[] {"FetchFollower", "FetchConsumer"})
            {
                assertFalse(server.isRegistered(new ObjectName(METRICS + "ErrorsPerSec,request=" + kind + ",error=OFFSET_OUT_OF_RANGE")),
                    "Kafka has no ErrorsPerSec for " + kind);
            }
            assertEquals(0L, attribute("ErrorsPerSec", "Produce,error=OFFSET_OUT_OF_RANGE", "Count"), "nor a produce's");
            assertOrdered("TotalTimeMs", "FetchFollower");
            assertEquals(consumerFetches, (long)attribute("RequestsPerSec", "FetchConsumer", "Count"),
                "a follower's fetch is no consumer's");
            assertEquals(consumerFetches + 3, (long)attribute("RequestsPerSec", "Fetch", "Count"),
                "Fetch: FetchConsumer + FetchFollower");
            assertEquals(count("TotalTimeMs", "FetchConsumer") + 3, count("TotalTimeMs", "Fetch"), "timed as both");
            for (final String stage : STAGES)
            {
                assertEquals(count(stage, "FetchConsumer") + count(stage, "FetchFollower"), count(stage, "Fetch"), stage);
            }
            assertOrdered("TotalTimeMs", "Fetch");
        }
    }

    private static long connections(final RunningBroker broker, final int typeId)
    {
        return CounterReadings.summed(broker.broker.counters().reader())
            .getOrDefault(new Figure(typeId, CounterReadings.ALL_THREADS, 0, null), 0L);
    }

    private long count(final String stage, final String request)
    {
        return (long)attribute(stage, request, "Count");
    }

    private Object attribute(final String name, final String request, final String attribute)
    {
        try
        {
            return server.getAttribute(new ObjectName(METRICS + name + ",request=" + request), attribute);
        }
        catch (final JMException ex)
        {
            throw new AssertionError(name + "," + request + " " + attribute, ex);
        }
    }

    /** Min <= each percentile in order <= Max, the mean within [Min, Max]. */
    private void assertOrdered(final String stage, final String request)
    {
        final double min = (double)attribute(stage, request, "Min");
        final double max = (double)attribute(stage, request, "Max");
        final double mean = (double)attribute(stage, request, "Mean");
        assertTrue(min <= mean && mean <= max, stage + " " + request + ": min " + min + " mean " + mean + " max " + max);
        double last = 0;
        for (final String percentile : PERCENTILES)
        {
            final double value = (double)attribute(stage, request, percentile);
            assertTrue(value >= last && value <= max, stage + " " + request + " " + percentile + " " + value
                + " after " + last + ", max " + max);
            last = value;
        }
        assertTrue((double)attribute(stage, request, "StdDev") >= 0, "a deviation");
    }

    private static double metric(final Map<MetricName, ? extends Metric> metrics, final String name)
    {
        return metrics.entrySet().stream()
            .filter(e -> e.getKey().name().equals(name) && e.getKey().tags().size() == 1)
            .mapToDouble(e -> ((Number)e.getValue().metricValue()).doubleValue()).findFirst()
            .orElseThrow(() -> new AssertionError("no metric " + name + " in " + metrics.keySet()));
    }
}
