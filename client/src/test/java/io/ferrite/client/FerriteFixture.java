package io.ferrite.client;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.testing.Await;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
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
    /** How long {@link #drain} runs the duty cycle between two looks of its await. */
    private static final long SLICE_NS = TimeUnit.MILLISECONDS.toNanos(100);

    final Broker broker;

    FerriteFixture(final Path dir) throws IOException
    {
        broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NUM_NETWORK_THREADS, "1", BrokerConfig.LOG_THREADS, "1")));
    }

    String bootstrap()
    {
        return "127.0.0.1:" + broker.address().getPort();
    }

    /** Creates the topic and waits until the broker published it (a CreateTopics is answered before that). */
    void createTopic(final String name, final int partitions) throws Exception
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap())))
        {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short)1))).all().get(30, TimeUnit.SECONDS);
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
     * Runs the producer's duty cycle until nothing it sent is pending, as an application's thread would: on with
     * an idle strategy between passes that find no work (spin, yield, then park up to 1 ms), not once per pause of
     * the await (up to 50 ms) — with one batch per partition in flight, each batch's answer waited out a pause
     * before the next batch went (1-2 s of a 40-record case at acks=1 and all).
     */
    static void drain(final Producer producer)
    {
        producer.flush();
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, 1_000, 1_000_000);
        Await.await(() ->
        {
            final long sliceEnd = System.nanoTime() + SLICE_NS;
            while (producer.pending() != 0 && System.nanoTime() - sliceEnd < 0)
            {
                idle.idle(producer.doWork());
            }
            return producer.pending() == 0;
        }, Duration.ofSeconds(60), () -> "every record completed, " + producer.pending() + " pending");
    }

    @Override
    public void close() throws IOException
    {
        broker.close();
    }
}
