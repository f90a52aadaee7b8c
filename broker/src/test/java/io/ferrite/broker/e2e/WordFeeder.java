package io.ferrite.broker.e2e;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The input of the Kafka Streams word count ({@link WordCountApplication}): records (key a unique sequence
 * number, value one of {@code words} words {@code w0}, {@code w1}, ...) fed at a steady pace on a thread of its
 * own by an idempotent producer, each word counted once its record is acknowledged; or a given number of them
 * sent at once, unpaced, where no kill falls among them.
 */
final class WordFeeder implements AutoCloseable
{
    /** Between input records: about 200 a second, so that a kill falls among records in flight. */
    private static final long PAUSE_MS = 5;

    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final Random random;
    private final int words;
    private final long firstSequence;
    /** The sequence number past the last record to send (Long.MAX_VALUE: until stopped). */
    private final long endSequence;
    private final Map<String, Integer> acknowledged = new ConcurrentHashMap<>();
    private final AtomicReference<Exception> failure = new AtomicReference<>();
    private final Thread thread;
    private volatile boolean stopping;

    /** Starts feeding {@code topic}; sequence numbers start at {@code firstSequence} (unique across feeders of one topic). */
    WordFeeder(final String bootstrap, final String topic, final Random random, final int words, final long firstSequence)
    {
        this(bootstrap, topic, random, words, firstSequence, -1);
    }

    /**
     * As above; {@code count} of 0 or more sends that many records, unpaced, and no more (a clean stop follows: no kill to place
     * among records in flight); -1 feeds at the pace until stopped.
     */
    WordFeeder(final String bootstrap, final String topic, final Random random, final int words, final long firstSequence,
        final int count)
    {
        final Map<String, Object> p = new HashMap<>();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class);
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        this.producer = new KafkaProducer<>(p);
        this.topic = topic;
        this.random = random;
        this.words = words;
        this.firstSequence = firstSequence;
        this.endSequence = count < 0 ? Long.MAX_VALUE : firstSequence + count;
        this.thread = new Thread(this::feed, "word-feeder");
        thread.start();
    }

    private void feed()
    {
        for (long sequence = firstSequence; sequence < endSequence && !stopping && failure.get() == null; sequence++)
        {
            final String word = "w" + random.nextInt(words);
            producer.send(new ProducerRecord<>(topic, Long.toString(sequence), word), (metadata, ex) ->
            {
                if (ex != null)
                {
                    failure.compareAndSet(null, ex);
                }
                else
                {
                    acknowledged.merge(word, 1, Integer::sum);
                }
            });
            if (endSequence != Long.MAX_VALUE)
            {
                continue;
            }
            try
            {
                Thread.sleep(PAUSE_MS); // a pace, not a wait for anything
            }
            catch (final InterruptedException ex)
            {
                return;
            }
        }
    }

    /** How many records have been acknowledged so far. */
    int acknowledged()
    {
        return acknowledged.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Stops feeding and returns how many times each word was acknowledged; every record must have been. */
    Map<String, Integer> stop() throws InterruptedException
    {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        producer.flush();
        assertNull(failure.get(), "every input record acknowledged");
        return Map.copyOf(acknowledged);
    }

    @Override
    public void close() throws InterruptedException
    {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        producer.close(Duration.ofSeconds(10));
    }
}
