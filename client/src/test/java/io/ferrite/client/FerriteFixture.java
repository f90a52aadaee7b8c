package io.ferrite.client;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.Await;
import io.ferrite.testing.TestInternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Ferrite started in-process on an ephemeral loopback port, as the broker's own tests start it; kafka-clients to check. */
final class FerriteFixture implements AutoCloseable
{
    final Broker broker;

    FerriteFixture(final Path dir) throws IOException
    {
        this(dir, Map.of());
    }

    /** With broker configs added (Kafka's names), {@code advertised.listeners} for a proxy in front, say. */
    FerriteFixture(final Path dir, final Map<String, String> extra) throws IOException
    {
        final Map<String, String> config = new java.util.HashMap<>(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NUM_NETWORK_THREADS, "1", BrokerConfig.LOG_THREADS, "1"));
        config.putAll(extra);
        // __consumer_offsets and __transaction_state of 5 partitions each, as KafkaInteropNode's Kafka makes them
        broker = Broker.start(BrokerConfig.of(TestInternalTopics.withTestCounts(config)));
    }

    String bootstrap()
    {
        return "127.0.0.1:" + broker.address().getPort();
    }

    /** Creates the topic and waits until the broker published it (a CreateTopics is answered before that). */
    void createTopic(final String name, final int partitions) throws Exception
    {
        createTopic(name, partitions, Map.of());
    }

    /** {@link #createTopic(String, int)} with topic configs. */
    void createTopic(final String name, final int partitions, final Map<String, String> configs) throws Exception
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap())))
        {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short)1).configs(configs))).all().get(30, TimeUnit.SECONDS);
        }
        Await.await(() -> broker.topics().topic(name) != null, Duration.ofSeconds(30), "topic " + name + " published");
    }

    /** Reads {@code count} records of one partition of any broker from offset 0 with kafka-clients' consumer. */
    static List<ConsumerRecord<byte[], byte[]>> read(final String bootstrap, final String topic, final int partition,
        final int count)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)))
        {
            final TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    records.add(r);
                }
                return records.size() >= count;
            }, Duration.ofSeconds(60), () -> count + " records of " + tp + ", read " + records.size());
            return records;
        }
    }

    /**
     * Every record of one partition of any broker, from offset 0 up to its end offset (the high watermark) as the
     * consumer first sees it, so a record written once too often is read too.
     */
    static List<ConsumerRecord<byte[], byte[]>> readToEnd(final String bootstrap, final String topic, final int partition)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(Map.of(
            ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap,
            ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class,
            ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class)))
        {
            final TopicPartition tp = new TopicPartition(topic, partition);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp)).get(tp);
            final List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    records.add(r);
                }
                return consumer.position(tp) >= end;
            }, Duration.ofSeconds(60), () -> "records of " + tp + " up to " + end + ", read " + records.size());
            return records;
        }
    }

    /**
     * Runs the producer's duty cycle until nothing it sent is pending (60 s at most), as an application's loop
     * runs it: without a pause between cycles, which would hold every answer, retry and reconnect back.
     */
    static void drain(final Producer producer)
    {
        producer.flush();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (producer.pending() > 0)
        {
            if (System.nanoTime() - deadline >= 0)
            {
                throw new AssertionError("every record completed within 60 s: " + producer.pending() + " pending\n" +
                    producer.describeState());
            }
            if (producer.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        broker.close();
    }
}
