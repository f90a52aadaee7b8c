package io.ferrite.perf.sidebyside;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * The kafka-clients 4.4 side of the kill-the-leader runs: a topic of one partition with replication factor 3 and
 * {@code min.insync.replicas=2}, its description (leader, ISR) through Admin.describeTopics, producers as the acks
 * lecture's demonstration configures them, and a consumer reading the partition back from its beginning.
 */
final class FailoverClients
{
    private FailoverClients()
    {
    }

    static Admin admin(final String bootstrap)
    {
        final Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, 20);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200);
        a.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 50);
        a.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        return Admin.create(a);
    }

    static void createTopic(final Admin admin, final String topic, final int minInsyncReplicas) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(topic, 1, (short) ThreeNodes.NODES)
            .configs(Map.of("min.insync.replicas", Integer.toString(minInsyncReplicas))))).all().get(60, TimeUnit.SECONDS);
    }

    /** Partition 0 of {@code topic} as the cluster describes it now, or null when it cannot say. */
    static TopicPartitionInfo describe(final Admin admin, final String topic)
    {
        try
        {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions().get(0);
        }
        catch (final Exception ex)
        {
            return null;
        }
    }

    /** Polls {@link #describe} until {@code wanted} holds; the description, or null at the deadline. */
    static TopicPartitionInfo awaitPartition(final Admin admin, final String topic, final Predicate<TopicPartitionInfo> wanted,
        final long deadlineNanos) throws InterruptedException
    {
        while (System.nanoTime() < deadlineNanos)
        {
            final TopicPartitionInfo p = describe(admin, topic);
            if (p != null && wanted.test(p))
            {
                return p;
            }
            Thread.sleep(50);
        }
        return null;
    }

    static boolean hasLeaderAndIsr(final TopicPartitionInfo p, final int isr)
    {
        return p.leader() != null && p.leader().id() >= 0 && p.isr().size() == isr;
    }

    static boolean inIsr(final TopicPartitionInfo p, final int node)
    {
        return p.isr().stream().anyMatch(n -> n.id() == node);
    }

    /**
     * A producer as the acks lecture's demonstration has it: acks=all idempotent (kafka-clients' default), acks=1
     * with idempotence off (the idempotent producer requires acks=all); otherwise kafka-clients' defaults
     * (delivery.timeout.ms 120 s, request.timeout.ms 30 s, linger.ms 5, max.in.flight 5, retries unbounded) unless
     * {@code retries} is 0 (the lecture's way of seeing the broker's error itself: no retry hides it).
     */
    static KafkaProducer<String, String> producer(final String bootstrap, final String acks, final boolean idempotent,
        final int retries)
    {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, idempotent);
        if (retries >= 0)
        {
            p.put(ProducerConfig.RETRIES_CONFIG, retries);
        }
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 20);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 200);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        return new KafkaProducer<>(p);
    }

    /** A record read back: its offset and key. */
    record Read(long offset, String key)
    {
    }

    /** What a read back saw: the end offset (high watermark) it read to, and every record below it. */
    record ReadBack(long end, List<Read> records)
    {
    }

    /**
     * Reads partition 0 of {@code topic} from its beginning up to its end offset (the high watermark) as the
     * brokers at {@code bootstrap} serve it, once that end offset is at least {@code minEnd} (asked again until it is:
     * an acks=1 acknowledgement can come before the high watermark covers it); null when the end was not reached by
     * the deadline.
     */
    static ReadBack readBack(final String bootstrap, final String topic, final long minEnd, final long deadlineNanos)
        throws InterruptedException
    {
        final Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class);
        final TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(c))
        {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            while (end < minEnd && System.nanoTime() < deadlineNanos)
            {
                Thread.sleep(100);
                end = consumer.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            }
            final List<Read> read = new ArrayList<>();
            while (end >= minEnd && consumer.position(tp, Duration.ofSeconds(30)) < end && System.nanoTime() < deadlineNanos)
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(new Read(r.offset(), r.key()));
                }
            }
            return end >= minEnd && consumer.position(tp, Duration.ofSeconds(30)) >= end ? new ReadBack(end, read) : null;
        }
    }
}
