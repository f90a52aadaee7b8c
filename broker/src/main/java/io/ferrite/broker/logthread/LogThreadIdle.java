package io.ferrite.broker.logthread;

import org.agrona.concurrent.IdleStrategy;

/**
 * The configured idle strategy of a log thread, made safe to park in: a network thread handing
 * over a command unparks the log thread only when it says it is idling, so "idling" is published
 * before the last look at the queues, and {@link LogThread#offer} looks at it only after its command
 * is in (with a full fence between): one of the two always sees the other, so a command never waits
 * out a park (up to 10 ms with the {@code park} strategy).
 */
final class LogThreadIdle implements IdleStrategy
{
    private final IdleStrategy configured;
    private final LogThread thread;

    LogThreadIdle(final IdleStrategy configured, final LogThread thread)
    {
        this.configured = configured;
        this.thread = thread;
    }

    @Override
    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            configured.reset();
            return;
        }
        idle();
    }

    @Override
    public void idle()
    {
        thread.idling(true);
        try
        {
            if (!thread.hasWork())
            {
                configured.idle();
            }
        }
        catch (final Throwable fault)
        {
            // a SIGBUS's InternalError can surface here, after the duty cycle that took it; the
            // runner would end its run on it (see LogThreadRunner)
            thread.faults().survive("idling", fault);
        }
        finally
        {
            thread.idling(false);
        }
    }

    @Override
    public void reset()
    {
        configured.reset();
    }

    @Override
    public String alias()
    {
        return "log-thread(" + configured.alias() + ")";
    }
}
