package io.ferrite.perf.soak;

import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * One consumer of the soak on its own thread, reading every partition of the topic from its beginning (assign, no
 * group, {@code auto.offset.reset=earliest}: a position the log no longer has sends it back to the start, which the
 * checker then sees as an offset going backwards) for as long as the soak runs, keeping every record it got in the
 * order it got it: (partition, offset, value).
 */
final class SoakConsumer
{
    private final int id;
    private final KafkaConsumer<String, String> consumer;
    private final List<TopicPartition> partitions = new ArrayList<>();
    private final List<Checker.Seen> seen = new ArrayList<>(); // guarded by itself: read while the thread may run
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLongArray lastOffsets;
    private final Thread thread;
    private volatile boolean stopping;

    SoakConsumer(final int id, final String bootstrap, final String topic, final int partitionCount)
    {
        this.id = id;
        final Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.CLIENT_ID_CONFIG, "soak-consumer-" + id);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        this.consumer = new KafkaConsumer<>(p);
        this.lastOffsets = new java.util.concurrent.atomic.AtomicLongArray(partitionCount);
        for (int i = 0; i < partitionCount; i++)
        {
            lastOffsets.set(i, -1);
            partitions.add(new TopicPartition(topic, i));
        }
        this.thread = new Thread(this::run, "soak-consumer-" + id);
        thread.setDaemon(true);
    }

    SoakConsumer start()
    {
        thread.start();
        return this;
    }

    private void run()
    {
        try
        {
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            while (!stopping)
            {
                try
                {
                    for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                    {
                        synchronized (seen)
                        {
                            seen.add(new Checker.Seen(id, r.partition(), r.offset(), r.value()));
                        }
                        lastOffsets.set(r.partition(), r.offset());
                    }
                }
                catch (final RuntimeException ex)
                {
                    if (stopping)
                    {
                        break; // the wakeup of stop()
                    }
                    errors.computeIfAbsent(ex.getClass().getSimpleName() + ": " + ex.getMessage(), k -> new LongAdder()).increment();
                }
            }
        }
        finally
        {
            consumer.close(Duration.ofSeconds(5));
        }
    }

    /** Stops it and waits up to 30 s for its thread to end; whether it ended (again after the first time: at once). */
    boolean stop() throws InterruptedException
    {
        stopping = true;
        consumer.wakeup();
        thread.join(30_000);
        return !thread.isAlive();
    }

    int id()
    {
        return id;
    }

    /** Whether it has read every partition up to {@code highWatermarks} (the offset before each). */
    boolean reachedAll(final Map<Integer, Long> highWatermarks)
    {
        for (final Map.Entry<Integer, Long> e : highWatermarks.entrySet())
        {
            if (lastOffsets.get(e.getKey()) < e.getValue() - 1)
            {
                return false;
            }
        }
        return true;
    }

    /** What it has read so far, in order (a copy). */
    List<Checker.Seen> seen()
    {
        synchronized (seen)
        {
            return List.copyOf(seen);
        }
    }

    Map<String, Long> errors()
    {
        final Map<String, Long> out = new TreeMap<>();
        errors.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }
}
