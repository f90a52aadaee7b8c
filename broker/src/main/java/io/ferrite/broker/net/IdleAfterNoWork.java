package io.ferrite.broker.net;

import org.agrona.concurrent.IdleStrategy;

/**
 * The idle strategy of an agent that waits for its own kind of wake-up (a park unparked by a
 * producer, a select ended by a connection): it waits only after a pass that found no work, then
 * clears a stray interrupt of the thread. Agrona's {@code AgentRunner} ends its run when, after such
 * a pass and its idle, it finds the thread interrupted; an agent that must not stop on an interrupt
 * (its close stops the runner's loop first) is told of it here instead ({@link #interrupted}).
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
        if (Thread.interrupted())
        {
            interrupted();
        }
    }

    @Override
    public void reset()
    {
    }

    /** Waits, boundedly, for the agent's next work. */
    protected abstract void waitForWork();

    /** The thread was interrupted (the flag is cleared): report it; the agent goes on. */
    protected abstract void interrupted();
}
