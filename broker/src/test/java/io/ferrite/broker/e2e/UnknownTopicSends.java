package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.TimeoutException;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Sends to a topic that does not exist on a broker that does not create topics: each send fails with Kafka's
 * {@link TimeoutException} once the producer's {@code max.block.ms} has passed without the topic in its metadata.
 */
final class UnknownTopicSends
{
    /**
     * The producer's {@code max.block.ms}: what a send costs. Short, and not a bound on the broker's first answer:
     * the sends are repeated until the broker counted one (a loaded machine may need more than one try to connect).
     */
    private static final int MAX_BLOCK_MS = 1_000;

    private UnknownTopicSends()
    {
    }

    /** The overrides of the producer given to {@link #untilCounted}. */
    static Map<String, Object> producerConfig()
    {
        return Map.of(ProducerConfig.MAX_BLOCK_MS_CONFIG, MAX_BLOCK_MS);
    }

    /**
     * Sends a record to {@code topic} (not there) and asserts that it fails with a {@link TimeoutException}, again
     * until the broker has {@code counted} the error; the producer's close then waits for its Metadata requests still
     * in flight.
     */
    static void untilCounted(final KafkaProducer<byte[], byte[]> producer, final String topic, final Await.Condition counted,
        final String what)
    {
        await(() ->
        {
            final ExecutionException failed = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>(topic, new byte[10])).get(30, TimeUnit.SECONDS));
            assertInstanceOf(TimeoutException.class, failed.getCause(), failed::toString);
            return counted.test();
        }, Duration.ofSeconds(60), what);
    }
}
