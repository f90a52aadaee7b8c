package io.ferrite.broker.metrics;

import io.ferrite.broker.metrics.RequestTimes.Stage;
import org.HdrHistogram.Histogram;

import java.util.concurrent.TimeUnit;

/**
 * The broker's request times as Kafka's {@code RequestMetrics} histograms show them (the JMX MBeans and the Prometheus
 * collector read them), per kind of request and stage, summed over the network threads. As a Yammer histogram's, the
 * count, minimum, maximum, mean and standard deviation are over every request since the start, and the percentiles
 * over recent ones: Yammer's biased reservoir weighs about the last five minutes; here they are over the requests
 * taken in the current minute and the one before ({@link #WINDOW_NS}, minutes of {@link System#nanoTime}).
 *
 * <p>A reading first takes what each thread's recorder ({@link RequestTimes}) holds since the last reading (a
 * request's time is placed in the minute it is taken in, so a kind read less than once a minute — no scrape, no JMX
 * query — places requests of earlier minutes in the current one). Its histograms are made at the first reading that
 * finds a request of that kind (none for the kinds never seen). Readers only (synchronized: the JMX and Prometheus threads); the network threads are never waited for.
 */
public final class RequestLatencies
{
    /** One histogram as Kafka's JMX reporter shows a Yammer histogram, in milliseconds. */
    public record Reading(long count, double min, double max, double mean, double stdDev, double p50, double p75,
        double p95, double p98, double p99, double p999, double sumMs)
    {
    }

    static final long WINDOW_NS = TimeUnit.MINUTES.toNanos(1);
    private static final double MICROS_PER_MS = 1000.0;
    private static final Reading NONE = new Reading(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** One kind's and stage's histograms. */
    private static final class Times
    {
        final Histogram total;
        Histogram current;
        Histogram previous;
        /** Which minute {@link #current} holds. */
        long minute;

        Times(final Stage stage, final long minute)
        {
            total = RequestTimes.histogram(stage);
            current = RequestTimes.histogram(stage);
            previous = RequestTimes.histogram(stage);
            this.minute = minute;
        }

        /** Moves to {@code now}: the current minute becomes the previous one, or both are emptied after a gap. */
        void roll(final long now)
        {
            if (now == minute)
            {
                return;
            }
            if (now == minute + 1)
            {
                final Histogram last = previous;
                previous = current;
                current = last;
            }
            else
            {
                previous.reset();
            }
            current.reset();
            minute = now;
        }
    }

    private final RequestTimes[] threads;
    /** [kind][stage] (null until first read). */
    private final Times[][] times = new Times[RequestKinds.COUNT][Stage.values().length];
    private final Histogram[] interval = new Histogram[Stage.values().length];
    private final Histogram[] recent = new Histogram[Stage.values().length];

    RequestLatencies(final RequestTimes[] threads)
    {
        this.threads = threads;
    }

    /** {@code kind}'s histogram of {@code stage} now; null for an int that is no kind. */
    public synchronized Reading read(final int kind, final Stage stage)
    {
        if (RequestKinds.name(kind) == null)
        {
            return null;
        }
        final int s = stage.ordinal();
        final long minute = Math.floorDiv(System.nanoTime(), WINDOW_NS);
        if (interval[s] == null)
        {
            interval[s] = RequestTimes.histogram(stage);
            recent[s] = RequestTimes.histogram(stage);
        }
        Times t = times[kind][s];
        if (t != null)
        {
            t.roll(minute);
        }
        for (final RequestTimes thread : threads)
        {
            thread.interval(kind, stage, interval[s]);
            if (t == null && interval[s].getTotalCount() > 0)
            {
                t = new Times(stage, minute); // made at the first request of the kind: none for kinds never seen
                times[kind][s] = t;
            }
            if (t != null)
            {
                t.total.add(interval[s]);
                t.current.add(interval[s]);
            }
        }
        if (t == null)
        {
            return NONE;
        }
        final Histogram all = t.total;
        final long count = all.getTotalCount();
        if (count == 0)
        {
            return NONE;
        }
        final Histogram r = recent[s];
        t.current.copyInto(r);
        r.add(t.previous);
        return new Reading(count, ms(all.getMinValue()), ms(all.getMaxValue()), all.getMean() / MICROS_PER_MS,
            all.getStdDeviation() / MICROS_PER_MS, ms(r, 50), ms(r, 75), ms(r, 95), ms(r, 98), ms(r, 99), ms(r, 99.9),
            all.getMean() * count / MICROS_PER_MS);
    }

    private static double ms(final Histogram h, final double percentile)
    {
        return ms(h.getValueAtPercentile(percentile));
    }

    private static double ms(final long micros)
    {
        return micros / MICROS_PER_MS;
    }
}
