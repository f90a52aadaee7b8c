package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorClock;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.NanoClock;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The system clocks moved on by hand: a test steps a broker's coordinators past a timeout ({@link #step}) instead of
 * waiting it out, or holds them still ({@link #pause}) through what a loaded machine may make long (a restart). Both
 * readings move together (the wall one for what a coordinator keeps, the monotonic one for its deadlines:
 * {@link CoordinatorClock}). Thread-safe.
 */
final class SteppedClock implements EpochClock, NanoClock
{
    private final AtomicLong offsetNs = new AtomicLong();
    /** While paused: the monotonic reading held; Long.MIN_VALUE when running. */
    private volatile long pausedNs = Long.MIN_VALUE;
    /** While paused: the wall reading held. */
    private volatile long pausedMs;

    /** Moves both readings on by {@code by}. */
    synchronized void step(final Duration by)
    {
        if (pausedNs != Long.MIN_VALUE)
        {
            throw new IllegalStateException("stepped while paused");
        }
        offsetNs.addAndGet(by.toNanos());
    }

    /** Holds both readings where they are until {@link #resume}. */
    synchronized void pause()
    {
        pausedMs = time();
        pausedNs = nanoTime();
    }

    /** Goes on from the readings held by {@link #pause}: the time paused never passed, for the coordinators. */
    synchronized void resume()
    {
        if (pausedNs == Long.MIN_VALUE)
        {
            throw new IllegalStateException("resumed while running");
        }
        final long held = pausedNs;
        offsetNs.addAndGet(held - (System.nanoTime() + offsetNs.get()));
        pausedNs = Long.MIN_VALUE;
    }

    @Override
    public long time()
    {
        return pausedNs != Long.MIN_VALUE ? pausedMs : System.currentTimeMillis() + offsetNs.get() / 1_000_000L;
    }

    @Override
    public long nanoTime()
    {
        final long held = pausedNs;
        return held != Long.MIN_VALUE ? held : System.nanoTime() + offsetNs.get();
    }

    /** A coordinators' clock reading this one (a broker's start takes a new one: it holds the agent's readings). */
    CoordinatorClock coordinatorClock()
    {
        return new CoordinatorClock(this, this);
    }
}
