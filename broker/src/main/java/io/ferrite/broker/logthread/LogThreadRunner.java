package io.ferrite.broker.logthread;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;

/**
 * Runs a {@link LogThread} on a daemon thread of its own, named for its role, with an Agrona
 * {@link AgentRunner}. Why not the runner alone: it ends its run on any Error that reaches its
 * error handler, without the agent's {@code onClose}. The duty cycle and the idle strategy catch
 * everything, but a SIGBUS on a mapped segment surfaces as an InternalError at a later safepoint —
 * often the return into the runner's own loop — and a log thread must survive that (the fault is
 * one log's, not the JVM's). So a run that an Error ended is followed by a new runner on the same
 * thread and agent if the fault is survivable; otherwise the agent's end runs, which answers every
 * command it had and makes every later one answered at once.
 */
public final class LogThreadRunner implements AutoCloseable
{
    private static final long CLOSE_WAIT_MS = 10_000;

    private final LogThread agent;
    private final IdleStrategy idle;
    private final Thread thread;

    public LogThreadRunner(final LogThread agent, final IdleStrategy configured)
    {
        this.agent = agent;
        this.idle = agent.idleStrategy(configured);
        this.thread = new Thread(this::run, agent.roleName());
        this.thread.setDaemon(true);
    }

    public void start()
    {
        thread.start();
    }

    private void run()
    {
        while (true)
        {
            final AgentRunner runner = new AgentRunner(idle, agent.faults(), null, agent);
            try
            {
                runner.run(); // returns once the agent ended (closed, or stopped by a fault), or on an interrupt
                if (!agent.resumableAfterRun())
                {
                    return;
                }
            }
            catch (final Throwable fault) // counted and logged by the error handler already
            {
                if (!agent.resumableAfter(fault))
                {
                    return;
                }
            }
        }
    }

    /** Ends the agent (its end answers what it still had) and waits for the thread. */
    @Override
    public void close()
    {
        agent.requestClose();
        try
        {
            thread.join(CLOSE_WAIT_MS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
