package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A latency cell with kafka-clients 4.4 ({@link ClientLatency}): a producer (linger.ms=0, no compression) sends
 * 1 KiB records to partition 0 of a fresh topic on a {@link FixedRate} schedule from the caller's thread; each
 * callback records the send-to-ack latency from the record's intended time. With {@code endToEnd}, a consumer thread
 * (assign, from offset 0) records the send-to-poll latency: the intended time travels in the value's first 8 bytes,
 * the record's number in the next 4.
 */
final class KafkaClientCell
{
    private KafkaClientCell()
    {
    }

    static CellResult run(final Workloads w, final String topic, final String acks, final FixedRate schedule,
        final boolean endToEnd) throws InterruptedException
    {
        final Histogram ack = FixedRate.histogram();
        final Histogram e2e = endToEnd ? FixedRate.histogram() : null;
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<String> first = new AtomicReference<>();
        final AtomicLong received = new AtomicLong();
        final CountDownLatch consumerReady = new CountDownLatch(1);
        final AtomicReference<Thread> consumer = new AtomicReference<>();
        if (endToEnd)
        {
            final Thread t = new Thread(() -> consume(w, topic, schedule, e2e, received, consumerReady, first), "e2e-kafka-clients");
            t.setDaemon(true);
            t.start();
            consumer.set(t);
            if (!consumerReady.await(60, TimeUnit.SECONDS))
            {
                first.compareAndSet(null, "the consumer did not poll within 60 s");
            }
        }
        final ClientTrace trace = ClientTrace.directory() == null ? null : new ClientTrace(schedule);
        final byte[] value = w.payload.clone();
        final ByteBuffer header = ByteBuffer.wrap(value);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(w.producerProps(acks, "none", 0)))
        {
            producer.partitionsFor(topic); // metadata before the schedule starts
            schedule.start();
            for (int i = 0; i < schedule.total; i++)
            {
                schedule.awaitDue(i);
                header.putLong(0, schedule.due(i)).putInt(8, i);
                final int n = i;
                if (trace != null)
                {
                    trace.sent(n); // when the caller got to it: its own lateness
                }
                try
                {
                    // the value is copied into the batch within send(), so the same array serves every record
                    producer.send(new ProducerRecord<>(topic, 0, null, value), (m, e) ->
                    {
                        if (e != null)
                        {
                            failed.incrementAndGet();
                            first.compareAndSet(null, SteadyProducer.describe(e));
                        }
                        else
                        {
                            schedule.record(ack, n, System.nanoTime()); // on the producer's one I/O thread
                            if (trace != null)
                            {
                                trace.acked(n);
                            }
                        }
                    });
                }
                catch (final RuntimeException ex)
                {
                    failed.incrementAndGet();
                    first.compareAndSet(null, "send: " + SteadyProducer.describe(ex));
                }
            }
            producer.flush();
        }
        if (trace != null)
        {
            try
            {
                trace.report(ClientTrace.directory(), topic);
            }
            catch (final java.io.IOException ex)
            {
                System.out.println("trace of " + topic + " not written: " + ex);
            }
        }
        if (endToEnd)
        {
            consumer.get().join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, schedule.deadline() - System.nanoTime())));
            final long missing = schedule.total - received.get();
            if (missing > 0)
            {
                failed.addAndGet(missing);
                first.compareAndSet(null, "the consumer polled " + received.get() + " of " + schedule.total + " records");
            }
        }
        return new CellResult(ack, e2e, failed.get(), first.get());
    }

    private static void consume(final Workloads w, final String topic, final FixedRate schedule, final Histogram e2e,
        final AtomicLong received, final CountDownLatch ready, final AtomicReference<String> first)
    {
        final TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(w.consumerProps()))
        {
            consumer.assign(List.of(tp));
            consumer.seek(tp, 0);
            boolean signalled = false;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120) + schedule.total * schedule.periodNs;
            while (received.get() < schedule.total && System.nanoTime() - deadline < 0)
            {
                final var records = consumer.poll(Duration.ofMillis(100));
                final long now = System.nanoTime();
                for (final ConsumerRecord<byte[], byte[]> r : records)
                {
                    final ByteBuffer v = ByteBuffer.wrap(r.value());
                    if (schedule.measured(v.getInt(8)))
                    {
                        FixedRate.recordSince(e2e, v.getLong(0), now);
                    }
                    received.incrementAndGet();
                }
                if (!signalled)
                {
                    signalled = true;
                    ready.countDown(); // connected and positioned: the producer's schedule may start
                }
            }
        }
        catch (final RuntimeException ex)
        {
            first.compareAndSet(null, "consumer: " + SteadyProducer.describe(ex));
        }
        finally
        {
            ready.countDown();
        }
    }
}
