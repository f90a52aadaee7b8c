package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Metric;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.quota.ClientQuotaEntity;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Throttling as Kafka 4.4's ClientQuotaManager computes it, checked on answers whose figures follow from the rules alone
 * (no timing): a produce over its client's {@code producer_byte_rate} is answered {@code throttle_time_ms} =
 * (rate - quota) / quota x window, with the rate over the 10 s a first window counts as; a consumer's fetch is bounded
 * by what its {@code consumer_byte_rate} allows in the quota window, and a fetch over the quota is answered empty with
 * its throttle time (its bytes not counted); a client with no quota is never throttled. kafka-clients' producer sees
 * the throttle ({@code produce-throttle-time-max}). The rates themselves, over time: {@code QuotaMustShowTest}.
 */
class QuotaThrottleTest
{
    @TempDir
    Path dir;

    static final short PRODUCE_VERSION = 12;
    private static final short FETCH_VERSION = 12;

    static ProduceRequestData produce(final int valueBytes)
    {
        final ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData().setName("q").setPartitionData(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(0).setRecords(MemoryRecords.withRecords(Compression.NONE,
                new SimpleRecord(System.currentTimeMillis(), null, new byte[valueBytes]))))));
        return new ProduceRequestData().setAcks((short)1).setTimeoutMs(30_000).setTopicData(topics);
    }

    private static int throttleMs(final RawClient raw, final ProduceRequestData request) throws Exception
    {
        final ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.PRODUCE, PRODUCE_VERSION,
            request)), PRODUCE_VERSION);
        assertEquals(Errors.NONE.code(), response.responses().iterator().next().partitionResponses().get(0).errorCode());
        return response.throttleTimeMs();
    }

    @Test
    void aProduceOverItsQuotaIsAnsweredKafkasThrottleTime() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            topicWithQuota(broker, "q", "raw-test", "producer_byte_rate", 1000.0);
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                // one request of S bytes: the rate is S over the 10 s a first window counts as, so the throttle time is
                // (S / 10 - 1000) / 1000 x 10 000 ms = S - 10 000 ms
                final ProduceRequestData first = produce(10_100);
                final int size = RawClient.frame(ApiKeys.PRODUCE, PRODUCE_VERSION, first, 0).getInt(0);
                assertTrue(size > 10_000 && size < 10_400, "request of " + size + " bytes");
                assertEquals(size - 10_000, throttleMs(raw, first));
                // a small one now is over the quota too: throttled (and its connection muted until then: ThrottledConnectionsTest)
                assertTrue(throttleMs(raw, produce(10)) > 0);
            }
            // kafka-clients reads it: its producer of another client id is not throttled, one under the quota is
            try (KafkaProducer<byte[], byte[]> free = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "free")))
            {
                free.send(new ProducerRecord<>("q", new byte[20_000])).get(30, TimeUnit.SECONDS);
                assertEquals(0.0, metric(free.metrics(), "produce-throttle-time-max"));
            }
            try (KafkaProducer<byte[], byte[]> throttled = broker.producer(Map.of(ProducerConfig.CLIENT_ID_CONFIG, "raw-test")))
            {
                // 5 000 bytes more: about 15 000 over the 10-11 s a young window counts, well over 1 000 B/s
                throttled.send(new ProducerRecord<>("q", new byte[5_000])).get(30, TimeUnit.SECONDS);
                // the producer records a response's throttle time after it completed the batch's future: waited for, bounded
                io.ferrite.testing.Await.await(() -> metric(throttled.metrics(), "produce-throttle-time-max") > 0,
                    java.time.Duration.ofSeconds(20), "produce-throttle-time-max above 0");
            }
        }
    }

    private static double metric(final Map<org.apache.kafka.common.MetricName, ? extends Metric> metrics, final String name)
    {
        return metrics.entrySet().stream().filter(e -> e.getKey().name().equals(name) && e.getKey().group().equals("producer-metrics"))
            .mapToDouble(e -> ((Number)e.getValue().metricValue()).doubleValue()).findFirst().orElseThrow();
    }

    private static FetchResponseData fetch(final RawClient raw, final long offset) throws Exception
    {
        final FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(0).setMinBytes(0).setMaxBytes(1 << 20)
            .setSessionEpoch(-1).setTopics(List.of(new FetchRequestData.FetchTopic().setTopic("q").setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(offset).setPartitionMaxBytes(1 << 20)))));
        return new FetchResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FETCH, FETCH_VERSION, request)), FETCH_VERSION);
    }

    @Test
    void aFetchIsBoundedByItsQuotaWindowAndAFetchOverTheQuotaIsAnsweredEmpty() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            topicWithQuota(broker, "q", "raw-test", "consumer_byte_rate", 2000.0);
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                for (int i = 0; i < 20; i++) // 20 batches of one 3 000-byte record each
                {
                    throttleMs(raw, produce(3_000));
                }
                // Kafka bounds a consumer's fetch by what its quota allows in the window: 2 000 B/s x 10 s = 20 000 bytes
                final FetchResponseData first = fetch(raw, 0);
                assertEquals(0, first.throttleTimeMs(), "20 000 bytes over the 10 s window: 2 000 B/s, within the quota");
                final FetchResponseData.PartitionData p = first.responses().get(0).partitions().get(0);
                final int bytes = ((MemoryRecords)p.records()).sizeInBytes();
                final int batch = ((MemoryRecords)p.records()).batches().iterator().next().sizeInBytes();
                assertEquals(20_000 / batch * batch, bytes, "whole batches up to the quota window's 20 000 bytes, of " + batch + " each");
                // the next one would take the rate over the quota: answered empty, with its throttle time
                final FetchResponseData second = fetch(raw, 20_000 / batch);
                assertEquals(Errors.NONE.code(), second.errorCode());
                assertEquals(List.of(), second.responses(), "a throttled fetch is answered with no partitions");
                assertTrue(second.throttleTimeMs() > 0, "throttle time " + second.throttleTimeMs());
            }
        }
    }

    /** A topic of one partition made on {@code broker}, and {@code key} = {@code rate} for {@code clientId}'s quota. */
    static void topicWithQuota(final RunningBroker broker, final String topic, final String clientId, final String key,
        final double rate) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            ClientQuotasTest.alter(admin, ClientQuotasTest.set(ClientQuotasTest.entity(ClientQuotaEntity.CLIENT_ID, clientId), key, rate));
        }
    }
}
