package io.ferrite.broker.metrics.jmx;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A meter over a count kept elsewhere (the mapped counters): {@code Count} is read from the counters at each query,
 * exactly; the rates are computed from samples of that count taken every {@link #TICK_SECONDS} seconds by one thread
 * ({@link #tick}), as Kafka's meters (Yammer metrics 2) tick theirs: each tick turns the events since the last one
 * into a rate over the tick and moves each exponentially weighted average towards it by {@code 1 - e^(-5 s / window)}
 * — the first rate sets them. Nothing is added to the request paths: the counters are what the network threads
 * already write. Read from any thread (the rates are volatile, written by the ticking thread only).
 *
 * <p>When the averages start: Kafka makes a meter at its first event (a topic's {@code MessagesInPerSec} at its first
 * produce), so its first tick, 5 s later, is the rate over the first 5 s of traffic. This meter exists before its
 * events (from the topic's creation, or the broker's start), and its ticks do not line up with the traffic's start.
 * Ticked as Kafka's from its making, a first tick before the traffic would set the averages to 0, from which the
 * one-minute average takes {@code 60 s * ln 100 = 276 s} of steady traffic to come within 1% of it; a first tick a
 * second into the traffic would take one second's events as five's, as far off. So the ticks before the first event
 * leave the averages unset; the first tick that sees events sets them to its rate (a burst within one tick shows as
 * Kafka's first tick shows it, and decays as Kafka's); when the next tick sees events too, the traffic goes on and the
 * averages start again from that tick, the first whole one.
 *
 * <p>And over their first whole ticks the averages are the mean of the ticks' rates (each tick's weight
 * {@code max(1 / n, 1 - e^(-5 s / window))} for the n-th: 12 ticks for the one-minute average, 60 and 180 for the
 * others), where Kafka's start from the first tick's rate alone: one 5-second rate is off by several percent on a
 * loaded machine (a stall of the producer or of this thread moves events into the next tick), and Kafka's one-minute
 * rate keeps {@code e^(-t / 60 s)} of that error, still a third of it 70 s later, where a mean over consecutive ticks
 * keeps none (what one tick misses the next one counts). Steady traffic reads its rate from the first whole tick on.
 */
final class Meter implements MeterMBean
{
    /** Kafka's meters tick every 5 seconds. */
    static final int TICK_SECONDS = 5;
    private static final double ONE_MINUTE_ALPHA = alpha(1);
    private static final double FIVE_MINUTES_ALPHA = alpha(5);
    private static final double FIFTEEN_MINUTES_ALPHA = alpha(15);

    private final LongSupplier count;
    private final String eventType;
    private final long startNanos;
    private long lastCount;
    /** A tick saw events: the averages are set (by that tick alone while {@link #wholeTicks} is 0). */
    private boolean started;
    /** The ticks averaged since the first whole tick of traffic (saturating); 0: none yet. */
    private int wholeTicks;
    private volatile double oneMinute;
    private volatile double fiveMinutes;
    private volatile double fifteenMinutes;

    /**
     * {@code count} reads the figure since the broker started (its counters start at zero); {@code nowNanos} is the
     * start of {@link #getMeanRate}'s lifetime.
     */
    Meter(final LongSupplier count, final String eventType, final long nowNanos)
    {
        this.count = count;
        this.eventType = eventType;
        this.startNanos = nowNanos;
    }

    private static double alpha(final int minutes)
    {
        return 1 - Math.exp(-TICK_SECONDS / 60.0 / minutes);
    }

    /** One sample of the count, {@link #TICK_SECONDS} after the previous one (the ticking thread only). */
    void tick()
    {
        final long now = count.getAsLong();
        final double rate = Math.max(0, now - lastCount) / (double)TICK_SECONDS;
        lastCount = now;
        if (!started || wholeTicks == 0 && rate > 0)
        {
            // before the first events (0), the first tick with events (maybe part of a tick's), or the first whole one
            wholeTicks = started ? 1 : 0;
            started = now > 0;
            oneMinute = rate;
            fiveMinutes = rate;
            fifteenMinutes = rate;
            return;
        }
        // a tick after a burst that ended within the first one: decaying from it as Kafka's, no mean to take
        wholeTicks = wholeTicks == 0 ? Integer.MAX_VALUE : wholeTicks + (wholeTicks == Integer.MAX_VALUE ? 0 : 1);
        oneMinute += weight(ONE_MINUTE_ALPHA) * (rate - oneMinute);
        fiveMinutes += weight(FIVE_MINUTES_ALPHA) * (rate - fiveMinutes);
        fifteenMinutes += weight(FIFTEEN_MINUTES_ALPHA) * (rate - fifteenMinutes);
    }

    /** The weight of this tick's rate: the mean's {@code 1 / n} over the first ticks, then {@code alpha}. */
    private double weight(final double alpha)
    {
        return Math.max(alpha, 1.0 / wholeTicks);
    }

    @Override
    public long getCount()
    {
        return count.getAsLong();
    }

    @Override
    public double getMeanRate()
    {
        final long count = getCount();
        final double seconds = (System.nanoTime() - startNanos) / 1e9;
        return count == 0 || seconds <= 0 ? 0.0 : count / seconds;
    }

    @Override
    public double getOneMinuteRate()
    {
        return oneMinute;
    }

    @Override
    public double getFiveMinuteRate()
    {
        return fiveMinutes;
    }

    @Override
    public double getFifteenMinuteRate()
    {
        return fifteenMinutes;
    }

    @Override
    public TimeUnit getRateUnit()
    {
        return TimeUnit.SECONDS;
    }

    @Override
    public String getEventType()
    {
        return eventType;
    }
}
