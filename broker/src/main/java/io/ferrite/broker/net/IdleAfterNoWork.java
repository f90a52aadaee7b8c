package io.ferrite.broker.net;

import org.agrona.concurrent.IdleStrategy;

/**
 * The idle strategy of an agent that waits for its own kind of wake-up (a park unparked by a
 * producer, a select ended by a connection): it waits only after a pass that found no work. An agent
 * that must not stop on a stray interrupt wraps it in log-engine's {@code GoingOnAfterInterrupt}.
 */
public abstract class IdleAfterNoWork implements IdleStrategy
{
    @Override
    public final void idle(final int workCount)
    {
        if (workCount == 0)
        {
            idle();
        }
    }

    @Override
    public final void idle()
    {
        waitForWork();
    }

    @Override
    public void reset()
    {
    }

    /** Waits, boundedly, for the agent's next work. */
    protected abstract void waitForWork();
}
