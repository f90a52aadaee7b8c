package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Two consumers of one group share a topic's partitions; a third resumes from their commits. */
class GroupSmokeTest
{
    @TempDir
    Path dir;

    /** Whether the consumer's position is at the end (10 records each) on every partition it has. */
    private static boolean atEnd(final KafkaConsumer<byte[], byte[]> consumer)
    {
        for (final TopicPartition tp : consumer.assignment())
        {
            if (consumer.position(tp) != 10)
            {
                return false;
            }
        }
        return true;
    }

    @Test
    void twoConsumersShareSixPartitionsAndCommitsAreResumed() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("group.initial.rebalance.delay.ms", "0",
            "offsets.topic.num.partitions", "3")); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("shared", 6, (short)1))).all().get(20, TimeUnit.SECONDS);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                for (int i = 0; i < 60; i++)
                {
                    producer.send(new ProducerRecord<>("shared", i % 6, null, new byte[] {(byte)i})).get();
                }
            }
            final Map<String, Object> cfg = Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g1", "group.protocol", "classic",
                ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000, ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 500);
            try (KafkaConsumer<byte[], byte[]> a = broker.consumer(cfg); KafkaConsumer<byte[], byte[]> b = broker.consumer(cfg))
            {
                a.subscribe(List.of("shared"));
                b.subscribe(List.of("shared"));
                int seen = 0;
                final long deadline = System.currentTimeMillis() + 30_000;
                while ((a.assignment().size() != 3 || b.assignment().size() != 3 || !atEnd(a) || !atEnd(b))
                    && System.currentTimeMillis() < deadline)
                {
                    seen += a.poll(Duration.ofMillis(100)).count();
                    seen += b.poll(Duration.ofMillis(100)).count();
                }
                final Set<TopicPartition> all = new HashSet<>(a.assignment());
                all.addAll(b.assignment());
                assertEquals(6, all.size(), "a " + a.assignment() + " b " + b.assignment());
                assertEquals(3, a.assignment().size());
                assertTrue(seen >= 60, "every record at least once (partitions that moved before a commit are read again)");
                a.commitSync();
                b.commitSync();
            }
            try (KafkaConsumer<byte[], byte[]> c = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g1", "group.protocol", "classic")))
            {
                c.subscribe(List.of("shared"));
                int seen = 0;
                final long end = System.currentTimeMillis() + 5_000;
                while (System.currentTimeMillis() < end)
                {
                    seen += c.poll(Duration.ofMillis(200)).count();
                }
                assertEquals(0, seen, "nothing after the committed offsets");
                assertEquals(10L, c.committed(Set.of(new TopicPartition("shared", 0))).get(new TopicPartition("shared", 0)).offset());
            }
        }
    }
}
