package io.ferrite.broker.e2e;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;

/** Reads partitions from their start with kafka-clients' consumer at an isolation level (the transaction tests'). */
final class IsolatedReads
{
    private IsolatedReads()
    {
    }

    /**
     * The values of every record read from the start of {@code partitions} with {@code isolation}, in
     * the order read: polls until at least {@code expected} came and the consumer's position is the
     * end of every partition at that isolation level (the last stable offset under read_committed), so
     * a value too many shows.
     */
    static List<String> readAll(final RunningBroker broker, final List<TopicPartition> partitions, final IsolationLevel isolation,
        final int expected)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG,
            isolation.toString())))
        {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            final List<String> values = new ArrayList<>();
            await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100)))
                {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                return values.size() >= expected;
            }, Duration.ofSeconds(30), "records read with " + isolation + ": " + values);
            await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100)))
                {
                    values.add(new String(r.value(), StandardCharsets.UTF_8));
                }
                final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            }, Duration.ofSeconds(30), "read to the end with " + isolation + ": " + values);
            return values;
        }
    }
}
