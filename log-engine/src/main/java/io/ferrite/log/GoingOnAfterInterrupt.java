package io.ferrite.log;

import org.agrona.concurrent.IdleStrategy;

/**
 * An agent's idle strategy that clears a stray interrupt of its thread after each idle: Agrona's
 * AgentRunner ends its run when, after an idle cycle, it finds its thread interrupted, and a stray
 * interrupt must stop none of the agents that use this (group commit least of all: every
 * fsync-durability answer waits on it; the group coordinator: every group request would meet a
 * stopped coordinator; the broker's admin agent and acceptor). The idle, where such an interrupt ends the park, clears it and tells
 * {@code interrupted}. A close still stops the agent: the runner stops its loop before it interrupts.
 */
public final class GoingOnAfterInterrupt implements IdleStrategy
{
    private final IdleStrategy idle;
    private final Runnable interrupted;

    public GoingOnAfterInterrupt(final IdleStrategy idle, final Runnable interrupted)
    {
        this.idle = idle;
        this.interrupted = interrupted;
    }

    @Override
    public void idle(final int workCount)
    {
        idle.idle(workCount);
        goOn();
    }

    @Override
    public void idle()
    {
        idle.idle();
        goOn();
    }

    @Override
    public void reset()
    {
        idle.reset();
    }

    @Override
    public String alias()
    {
        return idle.alias();
    }

    private void goOn()
    {
        if (Thread.interrupted())
        {
            interrupted.run();
        }
    }
}
