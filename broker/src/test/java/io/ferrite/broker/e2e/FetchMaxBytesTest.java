package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.log.config.ConfigException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.BaseRecords;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker's {@code fetch.max.bytes} caps a fetch response whatever the request asks for, as
 * Kafka's KafkaApis caps it (the smaller of the request's max_bytes and the broker's), and the
 * first batch still comes whole when it alone is larger (KIP-74), so a consumer always progresses.
 */
class FetchMaxBytesTest
{
    private static final int BROKER_MAX = 4096;
    private static final int ASKED = 500 * 1024 * 1024;
    private static final int MAX_WAIT_MS = 20_000;

    @TempDir
    Path dir;

    private static FetchResponseData.PartitionData fetch(final RawClient raw, final String topic, final int minBytes)
        throws Exception
    {
        return fetch(raw, topic, minBytes, 0);
    }

    private static FetchResponseData.PartitionData fetch(final RawClient raw, final String topic, final int minBytes,
        final int maxWaitMs) throws Exception
    {
        final FetchRequestData request = new FetchRequestData().setReplicaId(-1).setMaxWaitMs(maxWaitMs).setMinBytes(minBytes)
            .setMaxBytes(ASKED).setIsolationLevel((byte)0).setSessionId(0).setSessionEpoch(-1)
            .setTopics(List.of(new FetchRequestData.FetchTopic().setTopic(topic).setPartitions(List.of(
                new FetchRequestData.FetchPartition().setPartition(0).setFetchOffset(0).setPartitionMaxBytes(ASKED)))));
        final ByteBuffer body = raw.exchange(ApiKeys.FETCH, (short)12, request);
        final FetchResponseData response = new FetchResponseData(new ByteBufferAccessor(body), (short)12);
        assertEquals(Errors.NONE.code(), response.errorCode());
        final FetchResponseData.PartitionData partition = response.responses().get(0).partitions().get(0);
        assertEquals(Errors.NONE.code(), partition.errorCode());
        return partition;
    }

    @Test
    void aFetchAskingForMoreThanTheBrokersFetchMaxBytesGetsAtMostThatMuch() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.FETCH_MAX_BYTES, Integer.toString(BROKER_MAX))))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("small", 1, (short)1), new NewTopic("large", 1, (short)1)))
                    .all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                for (int i = 0; i < 40; i++)
                {
                    producer.send(new ProducerRecord<>("small", new byte[900])).get(20, TimeUnit.SECONDS); // a batch each
                }
                producer.send(new ProducerRecord<>("large", new byte[3 * BROKER_MAX])).get(20, TimeUnit.SECONDS);
            }
            try (RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final FetchResponseData.PartitionData small = fetch(raw, "small", 1);
                final int got = ((BaseRecords)small.records()).sizeInBytes();
                System.out.println("fetch asking " + ASKED + " bytes got " + got + " (fetch.max.bytes " + BROKER_MAX + ")");
                assertEquals(40L, small.highWatermark());
                assertTrue(got > 0 && got <= BROKER_MAX, "got " + got + " bytes, fetch.max.bytes is " + BROKER_MAX);

                final int whole = ((BaseRecords)fetch(raw, "large", 1).records()).sizeInBytes();
                assertTrue(whole > 3 * BROKER_MAX, "a first batch larger than fetch.max.bytes comes whole: " + whole);

                // min_bytes above the cap is capped with it (Kafka: min(min_bytes, max_bytes)), so
                // a fetch that has the cap's worth is answered rather than left to max_wait_ms
                // with a real max_wait_ms: answered at once, not after the wait (the 900-byte batches
                // that fit make 3 880 bytes, under the capped min_bytes; the partition holds more)
                final long start = System.nanoTime();
                final int capped = ((BaseRecords)fetch(raw, "small", ASKED, MAX_WAIT_MS).records()).sizeInBytes();
                final long tookMs = (System.nanoTime() - start) / 1_000_000;
                System.out.println("min_bytes " + ASKED + " with max_wait_ms " + MAX_WAIT_MS + ": answered after " + tookMs + " ms");
                assertTrue(capped > 0 && capped <= BROKER_MAX, "got " + capped);
                assertTrue(tookMs < MAX_WAIT_MS / 2, "a capped min_bytes the partition holds does not wait out max_wait_ms");
            }
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, ASKED,
                ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, ASKED)))
            {
                final TopicPartition tp = new TopicPartition("small", 0);
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final List<ConsumerRecord<byte[], byte[]>> records = Polling.pollCount(consumer, 40);
                assertEquals(40, records.size(), "the consumer reads everything through the capped fetches");
            }
        }
    }

    @Test
    void fetchMaxBytesHasKafkasDefaultAndFloor()
    {
        assertEquals(57_671_680, BrokerConfig.of(Map.of()).getInt(BrokerConfig.FETCH_MAX_BYTES), "55 MiB");
        assertEquals(1024, BrokerConfig.of(Map.of(BrokerConfig.FETCH_MAX_BYTES, "1024")).getInt(BrokerConfig.FETCH_MAX_BYTES));
        assertThrows(ConfigException.class, () -> BrokerConfig.of(Map.of(BrokerConfig.FETCH_MAX_BYTES, "1023")));
    }
}
