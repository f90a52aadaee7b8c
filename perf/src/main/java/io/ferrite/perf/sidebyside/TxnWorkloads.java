package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.producer.Callback;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * The transactional workloads (issue 12), with kafka-clients 4.4, against whichever broker {@code w}
 * reaches: a producer with a {@code transactional.id} writing {@code perTxn} records of 1 KiB per
 * transaction, each transaction ended by {@code commitTransaction()}.
 */
final class TxnWorkloads
{
    /**
     * One transactional run: records/s and MB/s over the measured transactions (from the first
     * {@code beginTransaction()} to the last commit's return), the latency of each
     * {@code commitTransaction()} in us, the latency of the {@code flush()} before it, the measured
     * transactions, and the records of every committed transaction (warm-up included: what the topic holds).
     */
    record Run(double recordsPerSecond, double megabytesPerSecond, Histogram commitMicros, Histogram flushMicros,
        int transactions, int records)
    {
    }

    private final Workloads w;

    TxnWorkloads(final Workloads w)
    {
        this.w = w;
    }

    /**
     * {@code warmup} transactions (not measured: the coordinator's first load, the connections, the JIT),
     * then {@code measured} transactions of {@code perTxn} records each. Before each commit the
     * producer is flushed, so that the commit's latency is the transaction's end alone (EndTxn and
     * what the broker makes it wait for), not the produce of the transaction's last batch; the
     * flush's latency is kept beside it. The producer is the throughput workload's (batch.size 64 KiB,
     * linger.ms 5, no compression) with {@code transactional.id} (so idempotent, acks=all).
     */
    Run transactional(final String topic, final String transactionalId, final int perTxn, final int warmup, final int measured)
    {
        return transactional(topic, transactionalId, perTxn, warmup, measured, 0, () -> { });
    }

    /**
     * As {@link #transactional(String, String, int, int, int)}, with each transaction begun on a schedule
     * {@code intervalNanos} apart (0: at once after the previous one's commit): the same offered load on
     * either broker, so the commit latency of a paced run compares the two at equal work, not at each one's
     * own saturation. A transaction whose start the previous one made late begins at once. {@code measuredStart}
     * runs once between the last warm-up transaction and the first measured one, before the clock and the
     * schedule start (the runner reads the broker's request times there).
     */
    Run transactional(final String topic, final String transactionalId, final int perTxn, final int warmup, final int measured,
        final long intervalNanos, final Runnable measuredStart)
    {
        final Histogram commits = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        final Histogram flushes = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
        final AtomicLong failed = new AtomicLong();
        final AtomicReference<Exception> first = new AtomicReference<>();
        final Callback callback = (m, e) ->
        {
            if (e != null && failed.getAndIncrement() == 0)
            {
                first.set(e);
            }
        };
        final Properties props = w.producerProps("all", "none", 5);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        int done = 0;
        int committedTxns = 0; // warm-up included: what the topic holds, for the reads after
        long start = System.nanoTime();
        long end = start;
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(props))
        {
            producer.initTransactions();
            for (int t = 0; t < warmup + measured; t++)
            {
                if (t == warmup)
                {
                    measuredStart.run();
                }
                if (t == 0 || t == warmup)
                {
                    start = System.nanoTime(); // the schedule's origin too: the warm-up's, then the measured run's
                }
                if (intervalNanos > 0)
                {
                    final long due = start + (t < warmup ? t : t - warmup) * intervalNanos;
                    for (long wait = due - System.nanoTime(); wait > 0; wait = due - System.nanoTime())
                    {
                        LockSupport.parkNanos(wait);
                    }
                }
                producer.beginTransaction();
                for (int i = 0; i < perTxn; i++)
                {
                    producer.send(new ProducerRecord<>(topic, w.payload), callback);
                }
                final long flushStart = System.nanoTime();
                producer.flush();
                final long commitStart = System.nanoTime();
                producer.commitTransaction();
                final long committed = System.nanoTime();
                committedTxns++;
                if (t >= warmup)
                {
                    flushes.recordValue((commitStart - flushStart) / 1000);
                    commits.recordValue((committed - commitStart) / 1000);
                    done++;
                }
            }
            end = System.nanoTime();
        }
        catch (final RuntimeException ex)
        {
            failed.incrementAndGet(); // KafkaException, ProducerFencedException...: the run stops at it
            first.compareAndSet(null, ex);
            end = System.nanoTime();
        }
        w.report(topic + " transactional " + perTxn + " per transaction", failed.get(), first.get());
        final double seconds = Math.max(1e-9, (end - start) / 1e9);
        final long records = (long) done * perTxn;
        return new Run(records / seconds, records * (double) Workloads.RECORD_BYTES / 1e6 / seconds, commits, flushes, done,
            committedTxns * perTxn);
    }
}
