package io.ferrite.perf.sidebyside;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/**
 * The partition-scale workloads with kafka-clients 4.4 against the broker at {@code bootstrap}:
 * topics {@code scale-00000...} of {@code partitionsPerTopic} partitions each, created in batches of
 * CreateTopics; a few records produced to every partition and consumed back. Every step has a
 * deadline and watches whether the broker is still alive, so a broker that gives up half-way is
 * recorded as far as it got instead of hanging the run.
 */
final class ScaleWorkload
{
    static final int VALUE_BYTES = 100;

    /** How a step ended: {@code done} of {@code wanted} units (partitions or records), its time, the first error. */
    record Outcome(long wanted, long done, long elapsedNanos, String error)
    {
        boolean complete()
        {
            return done == wanted && error == null;
        }
    }

    private final String bootstrap;
    private final int partitionsPerTopic;
    private final BooleanSupplier alive;
    private final byte[] value = new byte[VALUE_BYTES];

    ScaleWorkload(final String bootstrap, final int partitionsPerTopic, final BooleanSupplier alive)
    {
        this.bootstrap = bootstrap;
        this.partitionsPerTopic = partitionsPerTopic;
        this.alive = alive;
        java.util.Arrays.fill(value, (byte) 'x');
    }

    static String topic(final int index)
    {
        return String.format(Locale.ROOT, "scale-%05d", index);
    }

    private Properties adminProps()
    {
        final Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, 5);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 50);
        a.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 20);
        a.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 100);
        a.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 60_000);
        a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 120_000);
        return a;
    }

    /** Waits until the broker answers DescribeCluster (up, no topic created); answers when it did (nanoTime), or -1. */
    long awaitUp(final long deadlineNanos) throws InterruptedException
    {
        try (Admin admin = Admin.create(adminProps()))
        {
            while (System.nanoTime() < deadlineNanos && alive.getAsBoolean())
            {
                try
                {
                    admin.describeCluster().nodes().get(2, TimeUnit.SECONDS);
                    return System.nanoTime();
                }
                catch (final ExecutionException | java.util.concurrent.TimeoutException ex)
                {
                    Thread.sleep(20); // retry backoff while the broker starts
                }
            }
        }
        return -1;
    }

    /**
     * Creates {@code topics} topics, {@code batch} per CreateTopics request. Stops at the first
     * batch with a failed topic (a broker out of file descriptors fails every later one too, and
     * each could take the whole request timeout): the outcome says how many partitions exist.
     */
    Outcome create(final int topics, final int batch, final long deadlineNanos) throws InterruptedException
    {
        final long start = System.nanoTime();
        long created = 0;
        String error = null;
        try (Admin admin = Admin.create(adminProps()))
        {
            for (int first = 0; first < topics && error == null; first += batch)
            {
                if (System.nanoTime() > deadlineNanos)
                {
                    error = "creation deadline passed";
                    break;
                }
                final List<NewTopic> request = new ArrayList<>();
                for (int t = first; t < Math.min(topics, first + batch); t++)
                {
                    request.add(new NewTopic(topic(t), partitionsPerTopic, (short) 1));
                }
                final Map<String, KafkaFuture<Void>> results = admin.createTopics(request).values();
                for (final NewTopic t : request)
                {
                    final long left = Math.max(1, deadlineNanos - System.nanoTime());
                    try
                    {
                        results.get(t.name()).get(left, TimeUnit.NANOSECONDS);
                        created += partitionsPerTopic;
                    }
                    catch (final ExecutionException ex)
                    {
                        if (ex.getCause() instanceof TopicExistsException)
                        {
                            created += partitionsPerTopic; // a retried request that had gone through
                        }
                        else if (error == null)
                        {
                            error = t.name() + ": " + ex.getCause();
                        }
                    }
                    catch (final java.util.concurrent.TimeoutException ex)
                    {
                        error = t.name() + ": no answer before the creation deadline";
                        break;
                    }
                }
            }
        }
        if (error != null && !alive.getAsBoolean())
        {
            error += " (the broker exited)";
        }
        return new Outcome((long) topics * partitionsPerTopic, created, System.nanoTime() - start, error);
    }

    private Properties producerProps(final int maxBlockMs, final int requestTimeoutMs)
    {
        final Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, "1");
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, maxBlockMs);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, requestTimeoutMs);
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, requestTimeoutMs + 5);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 5);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 50);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 20);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    /**
     * Sends {@code perPartition} records of 100 B (acks=1) to each partition of the first
     * {@code topics} topics and flushes. Counts acknowledged records; a partition counts as written
     * once all its records are acknowledged.
     */
    Outcome produce(final int topics, final int perPartition, final long deadlineNanos)
    {
        final long start = System.nanoTime();
        final int partitions = topics * partitionsPerTopic;
        final AtomicIntegerArray acked = new AtomicIntegerArray(partitions);
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> first = new AtomicReference<>();
        String error = null;
        final int timeoutMs = (int) Math.max(1000, Math.min(120_000, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - start)));
        final KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(Math.min(timeoutMs, 30_000), timeoutMs));
        try
        {
            sending:
            for (int t = 0; t < topics; t++)
            {
                for (int p = 0; p < partitionsPerTopic; p++)
                {
                    final int index = t * partitionsPerTopic + p;
                    for (int r = 0; r < perPartition; r++)
                    {
                        if (System.nanoTime() > deadlineNanos || !alive.getAsBoolean())
                        {
                            error = alive.getAsBoolean() ? "produce deadline passed" : "the broker exited";
                            break sending;
                        }
                        producer.send(new ProducerRecord<>(topic(t), p, null, value), (m, e) ->
                        {
                            if (e == null)
                            {
                                acked.incrementAndGet(index);
                            }
                            else if (failed.getAndIncrement() == 0)
                            {
                                first.set(e.toString());
                            }
                        });
                    }
                }
            }
            producer.flush();
        }
        catch (final RuntimeException ex)
        {
            error = ex.toString(); // metadata not available within max.block.ms and the like
        }
        finally
        {
            producer.close(Duration.ofSeconds(5));
        }
        long done = 0;
        for (int i = 0; i < partitions; i++)
        {
            done += acked.get(i) >= perPartition ? 1 : 0;
        }
        if (error == null && first.get() != null)
        {
            error = failed.get() + " records failed, first: " + first.get();
        }
        return new Outcome(partitions, done, System.nanoTime() - start, error);
    }

    /** Produces one record to partition 0 of the first topic until one is acknowledged; answers when (nanoTime), or -1. */
    long firstAcknowledged(final long deadlineNanos, final AtomicReference<String> lastError)
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(2000, 2000)))
        {
            while (System.nanoTime() < deadlineNanos && alive.getAsBoolean())
            {
                try
                {
                    producer.send(new ProducerRecord<>(topic(0), 0, null, value)).get(5, TimeUnit.SECONDS);
                    return System.nanoTime();
                }
                catch (final ExecutionException | java.util.concurrent.TimeoutException | RuntimeException ex)
                {
                    lastError.set(ex instanceof ExecutionException ? String.valueOf(ex.getCause()) : ex.toString());
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    return -1;
                }
            }
        }
        if (!alive.getAsBoolean())
        {
            lastError.set("last client error: " + lastError.get());
        }
        return -1;
    }

    /**
     * Reads every partition of the first {@code topics} topics from the beginning (assigned, no
     * group) until each has at least {@code perPartition} records; done counts the partitions that did.
     */
    Outcome consume(final int topics, final int perPartition, final long deadlineNanos)
    {
        final long start = System.nanoTime();
        final int partitions = topics * partitionsPerTopic;
        final Properties c = new Properties();
        c.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        c.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        c.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        c.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        c.put(ConsumerConfig.RECONNECT_BACKOFF_MS_CONFIG, 5);
        c.put(ConsumerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 50);
        final int[] seen = new int[partitions];
        int complete = 0;
        String error = null;
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(c))
        {
            final List<TopicPartition> all = new ArrayList<>(partitions);
            for (int t = 0; t < topics; t++)
            {
                for (int p = 0; p < partitionsPerTopic; p++)
                {
                    all.add(new TopicPartition(topic(t), p));
                }
            }
            consumer.assign(all);
            consumer.seekToBeginning(all);
            while (complete < partitions)
            {
                if (System.nanoTime() > deadlineNanos || !alive.getAsBoolean())
                {
                    error = alive.getAsBoolean() ? "consume deadline passed" : "the broker exited";
                    break;
                }
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final int index = Integer.parseInt(r.topic().substring("scale-".length())) * partitionsPerTopic + r.partition();
                    if (++seen[index] == perPartition)
                    {
                        complete++;
                    }
                }
            }
        }
        catch (final RuntimeException ex)
        {
            error = ex.toString();
        }
        return new Outcome(partitions, complete, System.nanoTime() - start, error);
    }
}
