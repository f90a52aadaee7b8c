package io.ferrite.perf.sidebyside;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.LongAdder;
import java.util.concurrent.locks.LockSupport;

/**
 * One producer on its own thread sending records numbered 0, 1, 2, ... (the key and value are the number) to
 * partition 0 of a topic at a steady rate, each at its time on a fixed schedule (a record behind its time is sent at
 * once: the schedule does not slip, and no record is skipped), until all {@code capacity} records are sent
 * ({@link #finish}) or until {@link #stop} (an open-ended schedule: {@link #ranOut} says whether it ended first).
 * Every acknowledgement's offset and time is kept by record number (the time is written first and the offset
 * publishes it: an offset >= 0 means both are there); every failure is counted by the exception the callback saw
 * (class and message).
 */
final class SteadyProducer implements AutoCloseable
{
    private final KafkaProducer<String, String> producer;
    private final String topic;
    private final long periodNanos;
    private final AtomicLongArray offsets;
    private final AtomicLongArray ackedAt;
    private final AtomicLongArray sentAt;
    private final AtomicLong sent = new AtomicLong();
    private final Map<String, LongAdder> errors = new ConcurrentHashMap<>();
    private final Thread thread;
    private volatile boolean stopping;
    private volatile String sendFailure;

    SteadyProducer(final KafkaProducer<String, String> producer, final String topic, final int perSecond, final int capacity)
    {
        this.producer = producer;
        this.topic = topic;
        this.periodNanos = TimeUnit.SECONDS.toNanos(1) / perSecond;
        this.offsets = new AtomicLongArray(capacity);
        this.ackedAt = new AtomicLongArray(capacity);
        this.sentAt = new AtomicLongArray(capacity);
        for (int i = 0; i < capacity; i++)
        {
            offsets.set(i, -1);
        }
        this.thread = new Thread(this::run, "steady-producer-" + topic);
        thread.setDaemon(true);
    }

    SteadyProducer start()
    {
        thread.start();
        return this;
    }

    private void run()
    {
        final long start = System.nanoTime();
        for (int i = 0; i < offsets.length() && !stopping; i++)
        {
            final long due = start + i * periodNanos;
            for (long wait = due - System.nanoTime(); wait > 0 && !stopping; wait = due - System.nanoTime())
            {
                LockSupport.parkNanos(wait);
            }
            final int n = i;
            final String number = Integer.toString(n);
            sentAt.set(n, System.nanoTime());
            try
            {
                producer.send(new ProducerRecord<>(topic, 0, number, number), (metadata, error) ->
                {
                    if (error == null)
                    {
                        ackedAt.set(n, System.nanoTime());
                        offsets.set(n, metadata.offset()); // publishes ackedAt[n] to readers that see the offset
                    }
                    else
                    {
                        errors.computeIfAbsent(describe(error), k -> new LongAdder()).increment();
                    }
                });
                sent.incrementAndGet();
            }
            catch (final RuntimeException ex)
            {
                // send() itself refused (max.block.ms passed waiting for metadata or buffer): counted as not sent
                errors.computeIfAbsent("send: " + describe(ex), k -> new LongAdder()).increment();
                sendFailure = ex.toString();
            }
        }
    }

    static String describe(final Throwable error)
    {
        final String message = error.getMessage() == null ? "" : ": " + error.getMessage();
        return error.getClass().getSimpleName() + (message.length() > 160 ? message.substring(0, 160) + "..." : message);
    }

    /** Stops sending, waits until every record sent is acknowledged or failed (flush, at most delivery.timeout.ms). */
    void stop() throws InterruptedException
    {
        stopping = true;
        thread.join(TimeUnit.SECONDS.toMillis(30));
        producer.flush();
    }

    /**
     * Waits until the schedule has handed all {@code capacity} records to send() (until {@code deadlineNanos}, then
     * it is stopped), then until every record sent is acknowledged or failed (flush, at most delivery.timeout.ms).
     * Whether the schedule had completed by the deadline.
     */
    boolean finish(final long deadlineNanos) throws InterruptedException
    {
        final long wait = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
        thread.join(Math.max(1, wait));
        final boolean complete = !thread.isAlive();
        stop();
        return complete;
    }

    /** Waits until {@code n} records have been handed to send(); false at {@code deadlineNanos}. */
    boolean awaitSent(final long n, final long deadlineNanos) throws InterruptedException
    {
        while (sent.get() < n && thread.isAlive())
        {
            if (System.nanoTime() - deadlineNanos > 0)
            {
                return false;
            }
            Thread.sleep(5);
        }
        return sent.get() >= n;
    }

    /** Whether the schedule reached its last record (an open-ended run then sent nothing more until {@link #stop}). */
    boolean ranOut()
    {
        return sentAt.get(offsets.length() - 1) != 0;
    }

    /** The highest offset acknowledged of a record acknowledged at or after {@code nanos}, or -1. */
    long highestOffsetAcknowledgedFrom(final long nanos)
    {
        long highest = -1;
        for (int i = 0; i < offsets.length(); i++)
        {
            final long offset = offsets.get(i);
            if (offset >= 0 && ackedAt.get(i) - nanos >= 0)
            {
                highest = Math.max(highest, offset);
            }
        }
        return highest;
    }

    long sent()
    {
        return sent.get();
    }

    /** The offset record {@code n} was acknowledged at, or -1. */
    long offset(final int n)
    {
        return offsets.get(n);
    }

    int capacity()
    {
        return offsets.length();
    }

    long acknowledged()
    {
        long acked = 0;
        for (int i = 0; i < offsets.length(); i++)
        {
            acked += offsets.get(i) >= 0 ? 1 : 0;
        }
        return acked;
    }

    /** How many records were acknowledged, of those sent after {@code nanos}. */
    long acknowledgedOfSentAfter(final long nanos)
    {
        return sentAndAcknowledgedBetween(nanos, Long.MAX_VALUE)[1];
    }

    /** {records handed to send() in (from, to], of them acknowledged} (System.nanoTime() values). */
    long[] sentAndAcknowledgedBetween(final long from, final long to)
    {
        long sentThen = 0;
        long acked = 0;
        for (int i = 0; i < offsets.length(); i++)
        {
            final long at = sentAt.get(i);
            if (at != 0 && at - from > 0 && to - at >= 0)
            {
                sentThen++;
                acked += offsets.get(i) >= 0 ? 1 : 0;
            }
        }
        return new long[] {sentThen, acked};
    }

    /** How many acknowledgements arrived in (from, to], whenever their records were sent. */
    long acknowledgementsBetween(final long from, final long to)
    {
        long acked = 0;
        for (int i = 0; i < offsets.length(); i++)
        {
            final long at = ackedAt.get(i);
            acked += offsets.get(i) >= 0 && at - from > 0 && to - at >= 0 ? 1 : 0;
        }
        return acked;
    }

    /**
     * The earliest acknowledgement after {@code nanos} of a record sent after {@code nanos} (so answered by a
     * broker that was alive then), or -1: {ack time, record number}.
     */
    long[] firstAcknowledgedSentAfter(final long nanos)
    {
        long best = Long.MAX_VALUE;
        long record = -1;
        for (int i = 0; i < offsets.length(); i++)
        {
            if (offsets.get(i) >= 0 && sentAt.get(i) > nanos && ackedAt.get(i) < best)
            {
                best = ackedAt.get(i);
                record = i;
            }
        }
        return record < 0 ? new long[] {-1, -1} : new long[] {best, record};
    }

    /** The earliest acknowledgement received after {@code nanos}, whichever record (sent before the kill too), or -1. */
    long firstAcknowledgementAfter(final long nanos)
    {
        long best = Long.MAX_VALUE;
        for (int i = 0; i < offsets.length(); i++)
        {
            if (offsets.get(i) >= 0 && ackedAt.get(i) > nanos)
            {
                best = Math.min(best, ackedAt.get(i));
            }
        }
        return best == Long.MAX_VALUE ? -1 : best;
    }

    Map<String, Long> errors()
    {
        final Map<String, Long> out = new TreeMap<>();
        errors.forEach((k, v) -> out.put(k, v.sum()));
        return out;
    }

    String sendFailure()
    {
        return sendFailure;
    }

    long[] acknowledgedOffsets()
    {
        final long[] out = new long[offsets.length()];
        Arrays.setAll(out, offsets::get);
        return out;
    }

    @Override
    public void close()
    {
        stopping = true;
        producer.close(java.time.Duration.ofSeconds(10));
    }
}
