package io.ferrite.broker.metrics.jmx;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * A meter over a count kept elsewhere (the mapped counters): {@code Count} is read from the counters at each query,
 * exactly; the rates are computed from samples of that count taken every {@link #TICK_SECONDS} seconds by one thread
 * ({@link #tick}), as Kafka's meters (Yammer metrics 2) tick theirs: each tick turns the events since the last one
 * into a rate over the tick and moves each exponentially weighted average towards it by {@code 1 - e^(-5 s / window)}
 * — the first tick sets them to that rate. Nothing is added to the request paths: the counters are what the network
 * threads already write. Read from any thread (the rates are volatile, written by the ticking thread only).
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
    private boolean ticked;
    private volatile double oneMinute;
    private volatile double fiveMinutes;
    private volatile double fifteenMinutes;

    /**
     * {@code count} reads the figure since the broker started (its counters start at zero): the first tick's rate counts
     * everything up to it.
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
        if (!ticked)
        {
            ticked = true;
            oneMinute = rate;
            fiveMinutes = rate;
            fifteenMinutes = rate;
            return;
        }
        oneMinute += ONE_MINUTE_ALPHA * (rate - oneMinute);
        fiveMinutes += FIVE_MINUTES_ALPHA * (rate - fiveMinutes);
        fifteenMinutes += FIFTEEN_MINUTES_ALPHA * (rate - fifteenMinutes);
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
