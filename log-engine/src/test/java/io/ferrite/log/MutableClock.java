package io.ferrite.log;

import org.agrona.concurrent.EpochClock;

/** A clock tests move by hand. */
final class MutableClock implements EpochClock
{
    private volatile long now;

    MutableClock(final long now)
    {
        this.now = now;
    }

    @Override
    public long time()
    {
        return now;
    }

    void advance(final long ms)
    {
        now += ms;
    }
}
