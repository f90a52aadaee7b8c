package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.consumer.Consumer;
import org.apache.kafka.clients.consumer.ConsumerRecord;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/** A consumer read until enough has arrived: the one reading loop of the broker's end-to-end tests. */
final class Polling
{
    /** How long one poll waits: short, so that the deadline is kept to within this. */
    private static final Duration POLL = Duration.ofMillis(200);

    private Polling()
    {
    }

    /**
     * Polls until {@code done} holds on everything read so far and returns it, in the order read.
     *
     * @throws AssertionError at the deadline, saying how many records had been read
     */
    static <K, V> List<ConsumerRecord<K, V>> pollUntil(final Consumer<K, V> consumer, final Predicate<List<ConsumerRecord<K, V>>> done,
        final Duration deadline, final String what)
    {
        final List<ConsumerRecord<K, V>> got = new ArrayList<>();
        Await.await(() ->
        {
            consumer.poll(POLL).forEach(got::add);
            return done.test(got);
        }, deadline, () -> what + " (" + got.size() + " records read)");
        return got;
    }

    /** Polls until at least {@code count} records have been read, 30 s at most. */
    static <K, V> List<ConsumerRecord<K, V>> pollCount(final Consumer<K, V> consumer, final int count)
    {
        return pollUntil(consumer, got -> got.size() >= count, Duration.ofSeconds(30), count + " records");
    }
}
