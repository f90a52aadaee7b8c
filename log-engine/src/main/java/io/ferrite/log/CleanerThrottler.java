package io.ferrite.log;

import io.ferrite.log.clean.CleanerThrottle;
import org.agrona.concurrent.NanoClock;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * {@code log.cleaner.io.max.bytes.per.second} with Kafka's {@code Throttler} semantics, shared by a
 * node's cleaner threads: the bytes they report are summed over a period; once a period is longer
 * than {@value #CHECK_INTERVAL_MS} ms and its rate is above the budget, the thread that closes it
 * sleeps as long as brings the period's rate down to the budget — holding the monitor, so the other
 * threads wait too and the budget is the node's, not each thread's — and a new period starts.
 */
final class CleanerThrottler implements CleanerThrottle
{
    /** The longest sleep between two looks at a thread's stop check: how long an abort or a stop waits for a throttled clean. */
    static final long STOP_CHECK_MS = 100;
    /** Kafka's cleaner throttler checks every 300 ms: shorter periods would make the sleeps jittery. */
    static final long CHECK_INTERVAL_MS = 300;
    private static final long CHECK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(CHECK_INTERVAL_MS);

    /** How the throttler waits (Thread::sleep; a test's own clock). */
    @FunctionalInterface
    interface Sleeper
    {
        void sleep(long ms) throws InterruptedException;
    }

    private final double bytesPerSecond;
    private final NanoClock clock;
    private final Sleeper sleeper;
    private long periodStartNs;
    private double observedSoFar;

    CleanerThrottler(final double bytesPerSecond, final NanoClock clock, final Sleeper sleeper)
    {
        this.bytesPerSecond = bytesPerSecond;
        this.clock = clock;
        this.sleeper = sleeper;
        this.periodStartNs = clock.nanoTime();
    }

    /** The throttle for {@code bytesPerSecond}: {@link CleanerThrottle#NONE} for Kafka's default, Double.MAX_VALUE. */
    static CleanerThrottle of(final double bytesPerSecond, final NanoClock clock)
    {
        return bytesPerSecond == Double.MAX_VALUE ? NONE : new CleanerThrottler(bytesPerSecond, clock, Thread::sleep);
    }

    @Override
    public void maybeThrottle(final long bytes) throws InterruptedException
    {
        maybeThrottle(bytes, null);
    }

    /**
     * {@link #maybeThrottle(long)} for a thread that may be told to stop: its sleep is cut into slices of
     * at most {@value #STOP_CHECK_MS} ms and ends with an InterruptedException once {@code stop} is true.
     *
     * @param stop null: one sleep, never cut short
     */
    synchronized void maybeThrottle(final long bytes, final BooleanSupplier stop) throws InterruptedException
    {
        observedSoFar += bytes;
        final long elapsedNs = clock.nanoTime() - periodStartNs;
        if (elapsedNs > CHECK_INTERVAL_NS && observedSoFar > 0)
        {
            final double rate = observedSoFar * TimeUnit.SECONDS.toNanos(1) / elapsedNs;
            if (rate > bytesPerSecond)
            {
                final double budgetPerMs = bytesPerSecond / TimeUnit.SECONDS.toMillis(1);
                final long sleepMs = Math.round(observedSoFar / budgetPerMs - TimeUnit.NANOSECONDS.toMillis(elapsedNs));
                if (stop == null && sleepMs > 0)
                {
                    sleeper.sleep(sleepMs);
                }
                for (long left = stop == null ? 0 : sleepMs; left > 0; left -= STOP_CHECK_MS)
                {
                    if (stop.getAsBoolean())
                    {
                        throw new InterruptedException("the cleaner is told to stop while its throttle holds it");
                    }
                    sleeper.sleep(Math.min(left, STOP_CHECK_MS));
                }
            }
            periodStartNs = clock.nanoTime();
            observedSoFar = 0;
        }
    }
}
