package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorClock;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The system clocks moved on by hand: a test steps a broker's coordinators past a timeout ({@link #step}) instead of
 * waiting it out. Both readings move together (the wall one for what a coordinator keeps, the monotonic one for its
 * deadlines: {@link CoordinatorClock}). Thread-safe.
 */
final class SteppedClock implements EpochClock, NanoClock
{
    private final AtomicLong offsetNs = new AtomicLong();

    /** Moves both readings on by {@code by}. */
    void step(final Duration by)
    {
        offsetNs.addAndGet(by.toNanos());
    }

    @Override
    public long time()
    {
        return System.currentTimeMillis() + offsetNs.get() / 1_000_000L;
    }

    @Override
    public long nanoTime()
    {
        return System.nanoTime() + offsetNs.get();
    }

    /** A coordinators' clock reading this one (a broker's start takes a new one: it holds the agent's readings). */
    CoordinatorClock coordinatorClock()
    {
        return new CoordinatorClock(this, this);
    }
}
