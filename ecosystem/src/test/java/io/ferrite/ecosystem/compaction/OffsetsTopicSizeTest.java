package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code __consumer_offsets} after 100 000 offset commits of 10 groups (10 000 each, one partition, the
 * offset going up by one a commit), on an Apache Kafka 4.4 node and a Ferrite node with the same
 * {@code offsets.topic.segment.bytes} (1 MiB, the least Kafka accepts for a topic's segments, so the
 * commits fill segments the cleaner may clean; with Kafka's default of 100 MiB all of them would stay in
 * the active segment, which no cleaner touches). Reports both brokers' sizes of the topic once their
 * cleaners have cleaned every group's partition up to its active segment, and checks each group's
 * committed offset survived and Ferrite's topic is no larger than Kafka's.
 */
@EnabledIfSystemProperty(named = "ferrite.offsets.size", matches = "true", disabledReason = "two minutes of commits: -Plong or -Dferrite.offsets.size=true")
class OffsetsTopicSizeTest
{
    private static final String TOPIC = "__consumer_offsets";
    private static final int GROUPS = 10;
    private static final int COMMITS = 10_000;
    private static final int SEGMENT_BYTES = 1_048_576;

    @TempDir
    Path dir;

    @Test
    void consumerOffsetsStaySmall() throws Exception
    {
        final Map<String, String> brokerConfig = Map.of("offsets.topic.segment.bytes", Integer.toString(SEGMENT_BYTES));
        try (BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka"), brokerConfig);
            BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"), brokerConfig))
        {
            kafka.awaitReady();
            ferrite.awaitReady();
            final long[] sizes = new long[2];
            int i = 0;
            for (final BrokerNode broker : new BrokerNode[] {kafka, ferrite})
            {
                final long started = System.nanoTime();
                commitAll(broker);
                final long written = CleanerProgress.topicBytes(broker, TOPIC);
                final Path logDir = broker.partitionDir(TOPIC, 0).getParent();
                for (int p = 0; p < 50; p++)
                {
                    if (Files.isDirectory(logDir.resolve(TOPIC + "-" + p)) && CleanerProgress.segmentCount(logDir.resolve(TOPIC + "-" + p)) > 1)
                    {
                        CleanerProgress.awaitCleaned(broker, TOPIC, p);
                    }
                }
                sizes[i] = CleanerProgress.topicBytes(broker, TOPIC);
                System.out.printf("%s: __consumer_offsets %d B after %d commits cleaned (%d B when the commits ended), %.1f s%n", broker.name, sizes[i++],
                    GROUPS * COMMITS, written, (System.nanoTime() - started) / 1e9);
                checkCommitted(broker);
            }
            System.out.printf("__consumer_offsets after %d commits of %d groups: Kafka 4.4 %d B, Ferrite %d B%n", GROUPS * COMMITS, GROUPS,
                sizes[0], sizes[1]);
            assertTrue(sizes[1] <= sizes[0], "Ferrite's __consumer_offsets (" + sizes[1] + " B) is larger than Kafka's (" + sizes[0] + " B)");
        }
    }

    /** Each group commits 10 000 times from its own thread (a consumer with an assigned partition, no membership). */
    private static void commitAll(final BrokerNode broker) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(broker.clientConfig(), new ByteArraySerializer(), new ByteArraySerializer()))
        {
            producer.send(new ProducerRecord<>("events", 0, null, new byte[1])).get(); // the topic exists (auto-created)
        }
        final ExecutorService threads = Executors.newFixedThreadPool(GROUPS);
        try
        {
            final List<Future<?>> done = new ArrayList<>();
            for (int g = 0; g < GROUPS; g++)
            {
                final String group = "group-" + g;
                done.add(threads.submit(() ->
                {
                    try (KafkaConsumer<byte[], byte[]> consumer = consumer(broker, group))
                    {
                        final TopicPartition tp = new TopicPartition("events", 0);
                        consumer.assign(List.of(tp));
                        for (int c = 1; c <= COMMITS; c++)
                        {
                            consumer.commitSync(Map.of(tp, new OffsetAndMetadata(c)));
                        }
                    }
                    return null;
                }));
            }
            for (final Future<?> f : done)
            {
                f.get();
            }
        }
        finally
        {
            threads.shutdownNow();
        }
    }

    private static void checkCommitted(final BrokerNode broker)
    {
        for (int g = 0; g < GROUPS; g++)
        {
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(broker, "group-" + g))
            {
                final TopicPartition tp = new TopicPartition("events", 0);
                final OffsetAndMetadata committed = consumer.committed(java.util.Set.of(tp)).get(tp);
                assertEquals(COMMITS, committed == null ? -1 : committed.offset(), broker.name + ": group-" + g + "'s committed offset");
            }
        }
    }

    private static KafkaConsumer<byte[], byte[]> consumer(final BrokerNode broker, final String group)
    {
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        return new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    }
}
