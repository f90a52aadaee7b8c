package io.ferrite.broker.metrics;

import io.ferrite.broker.metrics.RequestTimes.Stage;
import io.ferrite.wire.message.ApiKeys;
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
 * finds a request of that kind (none for the kinds never seen). {@code request=Fetch} ({@link RequestKinds#FETCH_ALL})
 * is the sum of the consumers' and followers' fetches, added up at each reading. Readers only (synchronized: the JMX and Prometheus threads); the network threads are never waited for.
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

    private static final Stage[] STAGES = Stage.values();

    private final RequestTimes[] threads;
    /** [kind][stage] (null until a request of the kind is found). */
    private final Times[][] times = new Times[RequestKinds.COUNT][];
    /** Scratch histograms per stage: all requests and recent ones of a reading (made at the first reading). */
    private final Histogram[] all = new Histogram[STAGES.length];
    private final Histogram[] recent = new Histogram[STAGES.length];

    RequestLatencies(final RequestTimes[] threads)
    {
        this.threads = threads;
    }

    /**
     * {@code kind}'s histogram of {@code stage} now; null for an int that is no kind. {@link RequestKinds#FETCH_ALL}:
     * the consumers' and followers' fetches together.
     */
    public synchronized Reading read(final int kind, final Stage stage)
    {
        if (RequestKinds.name(kind) == null)
        {
            return null;
        }
        final int s = stage.ordinal();
        final long minute = Math.floorDiv(System.nanoTime(), WINDOW_NS);
        if (all[s] == null)
        {
            all[s] = RequestTimes.histogram(stage);
            recent[s] = RequestTimes.histogram(stage);
        }
        all[s].reset();
        recent[s].reset();
        if (kind == RequestKinds.FETCH_ALL)
        {
            addTo(s, take(ApiKeys.FETCH.id, minute));
            addTo(s, take(RequestKinds.FETCH_FOLLOWER, minute));
        }
        else
        {
            addTo(s, take(kind, minute));
        }
        final Histogram a = all[s];
        final long count = a.getTotalCount();
        if (count == 0)
        {
            return NONE;
        }
        final Histogram r = recent[s];
        return new Reading(count, ms(a.getMinValue()), ms(a.getMaxValue()), a.getMean() / MICROS_PER_MS,
            a.getStdDeviation() / MICROS_PER_MS, ms(r, 50), ms(r, 75), ms(r, 95), ms(r, 98), ms(r, 99), ms(r, 99.9),
            a.getMean() * count / MICROS_PER_MS);
    }

    /** Adds stage {@code s} of {@code kind}'s histograms (none: nothing) to the reading's. */
    private void addTo(final int s, final Times[] kind)
    {
        if (kind != null)
        {
            all[s].add(kind[s].total);
            recent[s].add(kind[s].current);
            recent[s].add(kind[s].previous);
        }
    }

    /**
     * Takes what each thread recorded of {@code kind} since the last reading (every stage: a thread's swap takes the
     * five at once) into its histograms, moved to {@code minute}; null if no request of the kind was ever recorded.
     */
    private Times[] take(final int kind, final long minute)
    {
        Times[] t = times[kind];
        if (t != null)
        {
            for (final Times stage : t)
            {
                stage.roll(minute);
            }
        }
        for (final RequestTimes thread : threads)
        {
            final Histogram[] taken = thread.swap(kind);
            if (taken == null)
            {
                continue;
            }
            if (t == null)
            {
                t = new Times[STAGES.length]; // made at the first request of the kind: none for kinds never seen
                for (final Stage stage : STAGES)
                {
                    t[stage.ordinal()] = new Times(stage, minute);
                }
                times[kind] = t;
            }
            for (int s = 0; s < STAGES.length; s++)
            {
                t[s].total.add(taken[s]);
                t[s].current.add(taken[s]);
            }
        }
        return t;
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
