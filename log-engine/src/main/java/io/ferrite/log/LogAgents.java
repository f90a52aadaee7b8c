package io.ferrite.log;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Runs the log engine's background {@link Agent}s, each on a daemon thread named for its role. */
final class LogAgents
{
    private static final Logger LOG = LoggerFactory.getLogger(LogAgents.class);
    /** How long a stop waits for a duty cycle in hand (an fsync, a preallocation) before it interrupts it. */
    static final int STOP_WAIT_MS = 10_000;

    private LogAgents()
    {
    }

    /**
     * Starts {@code agent} with the error handler its own catches use too ({@link AgentErrors}) and an
     * idle strategy: a park, so that an unpark from a producer of work ends it at once.
     */
    static AgentRunner start(final Agent agent, final ErrorHandler errors, final IdleStrategy idle)
    {
        final AgentRunner runner = new AgentRunner(new GoingOnAfterInterrupt(idle, () -> LOG.warn("{} was interrupted; it goes on", agent.roleName())), errors, null, agent);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(r, agent.roleName());
            t.setDaemon(true);
            return t;
        });
        return runner;
    }

    /**
     * Stops the agent after the cycle in hand. Agrona interrupts a thread that does not end within
     * {@link #STOP_WAIT_MS}; an interrupt inside an fsync or a preallocating write closes that file
     * channel, which the log's close then reports, so the next open recovers the log.
     */
    static void stop(final AgentRunner runner)
    {
        stop(runner, STOP_WAIT_MS);
    }

    /** {@link #stop(AgentRunner)}, waiting {@code waitMs} before the interrupt. */
    static void stop(final AgentRunner runner, final int waitMs)
    {
        if (runner != null)
        {
            runner.close(waitMs, t -> LOG.warn("{} did not stop within {} ms", runner.agent().roleName(), waitMs));
        }
    }
}
