package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/** The workloads, with kafka-clients 4.4, against whichever broker is at {@code bootstrap}. */
final class Workloads
{
    static final int RECORD_BYTES = 1024;

    final String bootstrap;
    final Consumer<String> problems;
    /** Every client's security properties (security.protocol, ssl.*, sasl.*): none for a PLAINTEXT listener. */
    private final Properties security;
    final byte[] payload = new byte[RECORD_BYTES];

    Workloads(final String bootstrap, final Consumer<String> problems)
    {
        this(bootstrap, problems, new Properties());
    }

    /** Workloads whose clients connect with {@code security} (see {@link BrokerSecurity#client}). */
    Workloads(final String bootstrap, final Consumer<String> problems, final Properties security)
    {
        this.bootstrap = bootstrap;
        this.problems = problems;
        this.security = security;
        final Random random = new Random(42);
        for (int i = 0; i < payload.length; i++)
        {
            payload[i] = (byte) ('A' + random.nextInt(26)); // as ProducerPerformance: random upper-case letters
        }
    }

    Properties producerProps(final String acks, final String compression, final int lingerMs)
    {
        final Properties p = new Properties();
        p.putAll(security);
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ProducerConfig.ACKS_CONFIG, acks);
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, 64 * 1024);
        p.put(ProducerConfig.LINGER_MS_CONFIG, lingerMs);
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, compression);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    Properties consumerProps()
    {
        final Properties p = new Properties();
        p.putAll(security);
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        return p;
    }

    /** Waits until a topic can be created and one record produced with acks=1; answers when it was acknowledged (nanoTime). */
    long firstProduce(final String topic, final long timeoutMs) throws Exception
    {
        final Properties a = new Properties();
        a.putAll(security);
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MS_CONFIG, 5);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 20);
        a.put(AdminClientConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        a.put(AdminClientConfig.RETRY_BACKOFF_MAX_MS_CONFIG, 50);
        a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) timeoutMs);
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        try (Admin admin = Admin.create(a))
        {
            createTopic(admin, topic, deadline);
        }
        final Properties p = producerProps("1", "none", 0);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MS_CONFIG, 5);
        p.put(ProducerConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 20);
        p.put(ProducerConfig.RETRY_BACKOFF_MS_CONFIG, 10);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMs);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(p))
        {
            while (true)
            {
                try
                {
                    producer.send(new ProducerRecord<>(topic, payload)).get(timeoutMs, TimeUnit.MILLISECONDS);
                    return System.nanoTime();
                }
                catch (final ExecutionException ex)
                {
                    if (System.nanoTime() > deadline)
                    {
                        throw ex;
                    }
                    Thread.sleep(10);
                }
            }
        }
    }

    void createTopics(final List<String> topics) throws Exception
    {
        final Properties a = new Properties();
        a.putAll(security);
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(a))
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (final String t : topics)
            {
                createTopic(admin, t, deadline);
            }
        }
    }

    private static void createTopic(final Admin admin, final String topic, final long deadline) throws Exception
    {
        while (true)
        {
            try
            {
                admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
                return;
            }
            catch (final ExecutionException ex)
            {
                if (ex.getCause() instanceof TopicExistsException)
                {
                    return;
                }
                if (System.nanoTime() > deadline)
                {
                    throw ex;
                }
                Thread.sleep(10);
            }
        }
    }

    /** records/s and MB/s of an unpaced producer: {@code n} records of 1 KiB, flushed. */
    double[] throughput(final String topic, final String acks, final String compression, final int n) throws InterruptedException
    {
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<Exception> first = new AtomicReference<>();
        final Callback callback = (m, e) ->
        {
            if (e != null && failed.getAndIncrement() == 0)
            {
                first.set(e);
            }
        };
        final long start;
        final long end;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(acks, compression, 5)))
        {
            start = System.nanoTime();
            for (int i = 0; i < n; i++)
            {
                producer.send(new ProducerRecord<>(topic, payload), callback);
            }
            producer.flush();
            end = System.nanoTime();
        }
        report(topic + " throughput acks=" + acks + " " + compression, failed.get(), first.get());
        final double seconds = (end - start) / 1e9;
        return new double[] {n / seconds, n * (double) RECORD_BYTES / 1e6 / seconds};
    }

    /** Send-to-acknowledgement latency (us) of acks=1 sends, linger.ms=0, paced at {@code rate} records/s for {@code seconds} after a 1 s warm-up. */
    Histogram fixedLoad(final String topic, final int rate, final double seconds) throws InterruptedException
    {
        return paced(topic, "1", rate, 1, seconds, false);
    }

    /**
     * Send-to-acknowledgement latency (us) of sends with {@code acks}, linger.ms=0, paced at {@code rate} records/s on a
     * fixed schedule for {@code seconds} after {@code warmSeconds} of warm-up (not recorded). {@code fromIntended}: from
     * each record's time on the schedule, so a send that is late (behind a send() that blocked, a runner thread that
     * was not scheduled) counts its lateness, as a client with a steady load sees it (no coordinated omission);
     * otherwise from the send() call.
     */
    Histogram paced(final String topic, final String acks, final int rate, final double warmSeconds, final double seconds,
        final boolean fromIntended) throws InterruptedException
    {
        final Histogram histogram = new Histogram(3); // auto-resizing: a failover-long wait is recorded, not thrown
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<Exception> first = new AtomicReference<>();
        final long interval = 1_000_000_000L / rate;
        final int warm = (int) (rate * warmSeconds);
        final int total = warm + (int) (rate * seconds);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(acks, "none", 0)))
        {
            final long start = System.nanoTime();
            for (int i = 0; i < total; i++)
            {
                final long due = start + i * interval;
                long now;
                while ((now = System.nanoTime()) < due)
                {
                    LockSupport.parkNanos(due - now); // no spinning: two cores are shared with the broker
                }
                final boolean measured = i >= warm;
                final long sent = fromIntended ? due : System.nanoTime();
                producer.send(new ProducerRecord<>(topic, payload), (m, e) ->
                {
                    if (e != null)
                    {
                        if (failed.getAndIncrement() == 0)
                        {
                            first.set(e);
                        }
                    }
                    else if (measured)
                    {
                        synchronized (histogram)
                        {
                            histogram.recordValue(Math.max(0, (System.nanoTime() - sent) / 1000));
                        }
                    }
                });
            }
            producer.flush();
        }
        report(topic + " paced acks=" + acks + " " + rate + "/s", failed.get(), first.get());
        return histogram;
    }

    /** One synchronous send at a time: {@code send().get()}, linger.ms=0; latency in us. Answers [sent, failed, elapsed ms, histogram]. */
    Object[] perRecord(final String topic, final String acks, final int n)
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        int failed = 0;
        Exception first = null;
        final long start;
        final long end;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps(acks, "none", 0)))
        {
            for (int i = 0; i < Math.min(200, n); i++) // warm-up: connection, metadata, JIT
            {
                try
                {
                    producer.send(new ProducerRecord<>(topic, payload)).get();
                }
                catch (final Exception ex)
                {
                    // counted below if it persists
                }
            }
            start = System.nanoTime();
            for (int i = 0; i < n; i++)
            {
                final long t = System.nanoTime();
                try
                {
                    producer.send(new ProducerRecord<>(topic, payload)).get();
                    histogram.recordValue((System.nanoTime() - t) / 1000);
                }
                catch (final Exception ex)
                {
                    if (failed++ == 0)
                    {
                        first = ex;
                    }
                }
            }
            end = System.nanoTime();
        }
        report(topic + " per-record acks=" + acks, failed, first);
        return new Object[] {n - failed, failed, (end - start) / 1e6, histogram};
    }

    /** Producer (acks=1, linger.ms=0) at {@code rate} records/s to a consumer polling with assign(): latency from send to poll (us), after a 1 s warm-up. */
    Histogram endToEnd(final String topic, final int rate, final double seconds) throws Exception
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        final int warm = rate;
        final int total = warm + (int) (rate * seconds);
        final AtomicLong received = new AtomicLong();
        final AtomicReference<Exception> consumerError = new AtomicReference<>();
        final TopicPartition tp = new TopicPartition(topic, 0);
        final Thread consumerThread = new Thread(() ->
        {
            try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerProps()))
            {
                consumer.assign(List.of(tp));
                consumer.seek(tp, 0);
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos((long) seconds + 60);
                while (received.get() < total && System.nanoTime() < deadline)
                {
                    final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(100));
                    final long now = System.nanoTime();
                    for (final ConsumerRecord<byte[], byte[]> r : records)
                    {
                        final ByteBuffer v = ByteBuffer.wrap(r.value());
                        final long sent = v.getLong(0);
                        if (v.getInt(8) >= warm)
                        {
                            histogram.recordValue(Math.max(0, (now - sent) / 1000));
                        }
                        received.incrementAndGet();
                    }
                }
            }
            catch (final Exception ex)
            {
                consumerError.set(ex);
            }
        }, "e2e-consumer");
        consumerThread.start();
        Thread.sleep(500); // the consumer connects and sits in a long poll
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<Exception> first = new AtomicReference<>();
        final long interval = 1_000_000_000L / rate;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(producerProps("1", "none", 0)))
        {
            final long start = System.nanoTime();
            for (int i = 0; i < total; i++)
            {
                final long due = start + i * interval;
                long now;
                while ((now = System.nanoTime()) < due)
                {
                    LockSupport.parkNanos(due - now);
                }
                final byte[] value = payload.clone();
                ByteBuffer.wrap(value).putLong(0, System.nanoTime()).putInt(8, i);
                producer.send(new ProducerRecord<>(topic, value), (m, e) ->
                {
                    if (e != null && failed.getAndIncrement() == 0)
                    {
                        first.set(e);
                    }
                });
            }
            producer.flush();
        }
        consumerThread.join();
        report(topic + " end-to-end producer", failed.get(), first.get());
        report(topic + " end-to-end consumer", consumerError.get() == null ? total - received.get() : 1, consumerError.get());
        return histogram;
    }

    /** MB/s and records/s of one consumer (assign, from offset 0) reading {@code n} records already written. */
    double[] consume(final String topic, final long n) throws InterruptedException
    {
        return consume(topic, n, "read_uncommitted");
    }

    /** As {@link #consume(String, long)}, with the consumer's {@code isolation.level}. */
    double[] consume(final String topic, final long n, final String isolation) throws InterruptedException
    {
        final TopicPartition tp = new TopicPartition(topic, 0);
        long bytes = 0;
        long count = 0;
        final long start;
        final long end;
        final Properties props = consumerProps();
        props.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, isolation);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(props))
        {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            start = System.nanoTime();
            final long deadline = start + TimeUnit.SECONDS.toNanos(300);
            while (count < n && System.nanoTime() < deadline)
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500)))
                {
                    bytes += r.serializedValueSize();
                    count++;
                }
            }
            end = System.nanoTime();
        }
        report(topic + " consume " + isolation, count < n ? n - count : 0, count < n ? new IllegalStateException("read " + count + " of " + n) : null);
        final double seconds = (end - start) / 1e9;
        return new double[] {bytes / 1e6 / seconds, count / seconds};
    }

    void report(final String what, final long failed, final Exception first)
    {
        if (failed > 0 || first != null)
        {
            problems.accept(what + ": " + failed + " failed" + (first == null ? "" : ", first: " + first));
        }
    }

    static Map<String, Long> percentiles(final Histogram h)
    {
        return Map.of("p50", h.getValueAtPercentile(50), "p99", h.getValueAtPercentile(99),
            "p99.9", h.getValueAtPercentile(99.9), "max", h.getMaxValue());
    }
}
