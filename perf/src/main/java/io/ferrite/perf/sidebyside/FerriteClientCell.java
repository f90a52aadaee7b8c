package io.ferrite.perf.sidebyside;

import io.ferrite.client.CompletionHandler;
import io.ferrite.client.Consumer;
import io.ferrite.client.ConsumerConfig;
import io.ferrite.client.Producer;
import io.ferrite.client.ProducerConfig;
import io.ferrite.client.RecordHandler;
import io.ferrite.wire.record.Record;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

/**
 * A latency cell with the Ferrite client ({@code client/}, {@link ClientLatency}): its {@link Producer} (linger 0, no
 * compression, batch.size 64 KiB) runs on the caller's thread, which both sends each 1 KiB record to partition 0 of a
 * fresh topic when the {@link FixedRate} schedule says and runs the duty cycle between sends (Aeron style: no client
 * thread), waiting with the given idle strategy when there is nothing to do. The completion handler records the
 * send-to-ack latency from the record's intended time (its tag is the record's number). A send the producer cannot take
 * yet (BUFFER_FULL, METADATA_PENDING) is tried again after the duty cycle, its wait counted. With {@code endToEnd}, a
 * Ferrite {@link Consumer} on a thread of its own (assign, from offset 0, same idle strategy) records the send-to-poll
 * latency from the intended time carried in the value.
 */
final class FerriteClientCell implements CompletionHandler
{
    private final FixedRate schedule;
    private final Histogram ack = FixedRate.histogram();
    /** The per-record profile, with {@code -Dclientlatency.trace}; null otherwise. */
    private final ClientTrace trace;
    private long failed;
    private String first;

    private FerriteClientCell(final FixedRate schedule)
    {
        this.schedule = schedule;
        this.trace = ClientTrace.directory() == null ? null : new ClientTrace(schedule);
    }

    @Override
    public void onComplete(final long tag, final String topic, final int partition, final long offset, final short errorCode)
    {
        if (errorCode != 0)
        {
            fail("completed with error " + errorCode);
        }
        else
        {
            schedule.record(ack, tag, System.nanoTime());
            if (trace != null)
            {
                trace.acked((int)tag);
            }
        }
    }

    private void fail(final String why)
    {
        failed++;
        if (first == null)
        {
            first = why;
        }
    }

    static CellResult run(final String bootstrap, final byte[] payload, final String topic, final int acks,
        final FixedRate schedule, final boolean endToEnd, final Supplier<IdleStrategy> idles) throws InterruptedException
    {
        return run(bootstrap, payload, topic, acks, schedule, endToEnd, idles, c -> c);
    }

    /** With the producer's settings changed by {@code tweak} (a profile comparing two settings on the same cell). */
    static CellResult run(final String bootstrap, final byte[] payload, final String topic, final int acks,
        final FixedRate schedule, final boolean endToEnd, final Supplier<IdleStrategy> idles,
        final java.util.function.UnaryOperator<ProducerConfig> tweak) throws InterruptedException
    {
        final FerriteClientCell cell = new FerriteClientCell(schedule);
        final EndToEnd consumer = endToEnd ? new EndToEnd(bootstrap, topic, schedule, idles.get()) : null;
        if (consumer != null)
        {
            consumer.thread.start();
            if (!consumer.ready.await(60, TimeUnit.SECONDS))
            {
                cell.fail("the consumer had no position within 60 s");
            }
        }
        final UnsafeBuffer value = new UnsafeBuffer(ByteBuffer.allocateDirect(payload.length));
        value.putBytes(0, payload);
        final Producer producer = new Producer(tweak.apply(new ProducerConfig().bootstrapServers(bootstrap).acks(acks).lingerMs(0)
            .batchSize(64 * 1024).trace(cell.trace)), cell);
        int next = 0;
        try
        {
            final int partitions = producer.awaitPartitions(topic, 60_000);
            final IdleStrategy idle = idles.get();
            schedule.start();
            final long deadline = schedule.deadline();
            while (partitions > 0 && (next < schedule.total || producer.pending() > 0) && System.nanoTime() - deadline < 0)
            {
                int work = 0;
                final long now = System.nanoTime();
                if (cell.trace != null)
                {
                    cell.trace.loop(now);
                }
                while (next < schedule.total && schedule.due(next) - now <= 0)
                {
                    value.putLong(0, schedule.due(next));
                    value.putInt(8, next);
                    final int r = producer.send(topic, 0, null, 0, -1, value, 0, payload.length, null, -1, next);
                    if (r == Producer.BUFFER_FULL || r == Producer.METADATA_PENDING)
                    {
                        break; // again after the duty cycle; its intended time stays, so the wait is measured
                    }
                    if (r < 0)
                    {
                        cell.fail("send refused: " + r);
                    }
                    else if (cell.trace != null)
                    {
                        cell.trace.sent(next);
                    }
                    next++;
                    work++;
                }
                work += producer.doWork();
                idle.idle(work);
            }
            if (partitions <= 0)
            {
                cell.first = "the producer found no partition of " + topic + ": " + partitions;
            }
        }
        finally
        {
            producer.close(); // a record still unacknowledged completes CLIENT_CLOSED: counted failed
        }
        if (cell.trace != null)
        {
            try
            {
                cell.trace.report(ClientTrace.directory(), topic);
            }
            catch (final java.io.IOException ex)
            {
                System.out.println("trace of " + topic + " not written: " + ex);
            }
        }
        if (next < schedule.total)
        {
            cell.failed += schedule.total - next;
            cell.first = cell.first == null ? (schedule.total - next) + " records never sent" : cell.first;
        }
        if (consumer != null)
        {
            consumer.thread.join(TimeUnit.NANOSECONDS.toMillis(Math.max(1, schedule.deadline() - System.nanoTime())));
            consumer.stop = true;
            consumer.thread.join(TimeUnit.SECONDS.toMillis(10));
            final long missing = schedule.total - consumer.received.get();
            if (missing > 0)
            {
                cell.failed += missing;
                cell.first = cell.first == null ? "the consumer polled " + consumer.received.get() + " of " + schedule.total
                    + " records" + (consumer.error.get() == null ? "" : ": " + consumer.error.get()) : cell.first;
            }
        }
        return new CellResult(cell.ack, consumer == null ? null : consumer.e2e, cell.failed, cell.first);
    }

    /** The end-to-end consumer: its own thread, duty cycle and poll in one loop. */
    private static final class EndToEnd implements RecordHandler
    {
        final Histogram e2e = FixedRate.histogram();
        final AtomicLong received = new AtomicLong();
        final AtomicReference<String> error = new AtomicReference<>();
        final CountDownLatch ready = new CountDownLatch(1);
        final Thread thread;
        final FixedRate schedule;
        volatile boolean stop;

        EndToEnd(final String bootstrap, final String topic, final FixedRate schedule, final IdleStrategy idle)
        {
            this.schedule = schedule;
            this.thread = new Thread(() -> loop(bootstrap, topic, idle), "e2e-ferrite-client");
            thread.setDaemon(true);
        }

        private void loop(final String bootstrap, final String topic, final IdleStrategy idle)
        {
            try (Consumer consumer = new Consumer(new ConsumerConfig().bootstrapServers(bootstrap)
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
            {
                consumer.assign(topic, 0);
                while (!stop && received.get() < schedule.total)
                {
                    int work = consumer.doWork();
                    work += consumer.poll(this, 500);
                    if (ready.getCount() > 0 && consumer.position(topic, 0) >= 0)
                    {
                        ready.countDown(); // connected and positioned: the producer's schedule may start
                    }
                    idle.idle(work);
                }
            }
            catch (final RuntimeException ex)
            {
                error.set(SteadyProducer.describe(ex));
            }
            finally
            {
                ready.countDown();
            }
        }

        @Override
        public void onRecord(final String topic, final int partition, final Record record)
        {
            final int at = record.valueOffset();
            if (schedule.measured(record.buffer().getInt(at + 8)))
            {
                FixedRate.recordSince(e2e, record.buffer().getLong(at), System.nanoTime()); // as the application gets it
            }
            received.incrementAndGet();
        }
    }
}
