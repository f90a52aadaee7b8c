package io.ferrite.perf.soak;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * One idempotent acks=all producer of the soak on its own thread: records numbered 0, 1, 2, ... at a steady rate,
 * record {@code n} to partition {@code n % partitions} with the value {@code p<id>-<n>} (no key), each sent at its
 * time on a fixed schedule (one behind is sent at once; none skipped) until {@link #stop}. Every acknowledgement's
 * offset is kept by record number (an acknowledgement without an offset as such: {@link Checker#UNKNOWN_OFFSET}); every
 * failure is counted by what the callback saw.
 */
final class SoakProducer
{
    /** A slot's value until the record is acknowledged. */
    private static final long NOT_ACKNOWLEDGED = -1;
    /** A slot's value once the record is acknowledged with no offset ({@code !metadata.hasOffset()}). */
    private static final long NO_OFFSET = -2;

    private final int id;
    private final String topic;
    private final int partitions;
    private final long periodNanos;
    private final KafkaProducer<String, String> producer;
    private final AtomicLongArray offsets;
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stopping;
    private volatile int sent;
    private volatile boolean closed;

    SoakProducer(final int id, final String bootstrap, final String topic, final int partitions, final int perSecond,
        final int capacity)
    {
        this.id = id;
        this.topic = topic;
        this.partitions = partitions;
        this.periodNanos = TimeUnit.SECONDS.toNanos(1) / perSecond;
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.CLIENT_ID_CONFIG, "soak-producer-" + id);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, 10_000);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        this.producer = new KafkaProducer<>(p);
        this.offsets = new AtomicLongArray(capacity);
        for (int i = 0; i < capacity; i++)
        {
            offsets.set(i, NOT_ACKNOWLEDGED);
        }
        this.thread = new Thread(this::run, "soak-producer-" + id);
        thread.setDaemon(true);
    }

    static String value(final int producer, final int n)
    {
        return "p" + producer + "-" + n;
    }

    SoakProducer start()
    {
        thread.start();
        return this;
    }

    private void run()
    {
        final long start = System.nanoTime();
        for (int n = 0; n < offsets.length() && !stopping; n++)
        {
            final long due = start + n * periodNanos;
            for (long wait = due - System.nanoTime(); wait > 0 && !stopping; wait = due - System.nanoTime())
            {
                LockSupport.parkNanos(wait);
            }
            final int number = n;
            try
            {
                producer.send(new ProducerRecord<>(topic, n % partitions, null, value(id, n)), (metadata, error) ->
                {
                    if (error == null)
                    {
                        offsets.set(number, metadata.hasOffset() ? metadata.offset() : NO_OFFSET);
                    }
                    else
                    {
                        errors.computeIfAbsent(describe(error), k -> new LongAdder()).increment();
                    }
                });
            }
            catch (final RuntimeException ex)
            {
                errors.computeIfAbsent("send: " + describe(ex), k -> new LongAdder()).increment();
            }
            sent = n + 1;
        }
    }

    private static String describe(final Throwable error)
    {
        final String message = error.getMessage() == null ? "" : ": " + error.getMessage();
        return error.getClass().getSimpleName() + (message.length() > 120 ? message.substring(0, 120) + "..." : message);
    }

    /**
     * Stops sending and waits up to {@code timeout} for every record sent to be acknowledged or failed; again after
     * the first time: nothing.
     */
    void stop(final Duration timeout) throws InterruptedException
    {
        if (closed)
        {
            return;
        }
        closed = true;
        stopping = true;
        thread.join(timeout.toMillis());
        producer.close(timeout);
    }

    int id()
    {
        return id;
    }

    int sent()
    {
        return sent;
    }

    /** Every acknowledged record: (producer, number, partition, offset or {@link Checker#UNKNOWN_OFFSET}). */
    List<Checker.Ack> acks()
    {
        final List<Checker.Ack> out = new ArrayList<>();
        for (int n = 0; n < sent; n++)
        {
            final long offset = offsets.get(n);
            if (offset != NOT_ACKNOWLEDGED)
            {
                out.add(new Checker.Ack(id, n, n % partitions, offset == NO_OFFSET ? Checker.UNKNOWN_OFFSET : offset));
            }
        }
        return out;
    }

    Map<String, Long> errors()
    {
        final Map<String, Long> out = new TreeMap<>();
        errors.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
