package io.ferrite.broker.group;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The group coordinator's thread, as an Agrona {@link Agent}. One {@link #doWork} pass applies what
 * the log threads answered to the coordinator's writes to {@code __consumer_offsets} and, every
 * {@value GroupTimers#TICK_MS} ms, runs the coordinator's timed work ({@link GroupTimers}: member-id
 * expiry, join deadlines, session expiry, offset retention). What a pass meets that throws — an
 * {@link Error} too — goes to {@link GroupErrors} and the agent carries on.
 *
 * <p>In production {@link #start} runs it on an {@link AgentRunner} of its own that parks while idle
 * (at most until the next tick) and is unparked when a log thread answers the coordinator
 * ({@link #wake}); a test may step it with an {@link org.agrona.concurrent.AgentInvoker} instead
 * (never both).
 */
public final class GroupAgent implements Agent, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupAgent.class);
    private static final long CLOSE_WAIT_MS = 10_000;

    private final GroupCoordinator coordinator;
    private final GroupTimers timers;
    private final GroupErrors errors = new GroupErrors();
    /** The agent's thread while it runs under its own runner (null when stepped): whom {@link #wake} unparks. */
    private volatile Thread thread;
    private AgentRunner runner;
    private long nextTickMs;

    GroupAgent(final GroupCoordinator coordinator, final GroupTimers timers)
    {
        this.coordinator = coordinator;
        this.timers = timers;
    }

    @Override
    public String roleName()
    {
        return "ferrite-group-coordinator";
    }

    /** Runs this agent on a daemon thread of its own. */
    void start()
    {
        // a few spins and yields after work (a commit's answer often follows its write within
        // microseconds), then parks growing to one tick: an idle coordinator wakes 20 times a second
        final IdleStrategy idle = new BackoffIdleStrategy(10, 10, TimeUnit.MICROSECONDS.toNanos(100),
            TimeUnit.MILLISECONDS.toNanos(GroupTimers.TICK_MS));
        runner = new AgentRunner(idle, errors, null, this);
        AgentRunner.startOnThread(runner, r ->
        {
            final Thread t = new Thread(r);
            t.setDaemon(true);
            return t;
        });
    }

    /** From any thread: makes the agent look at its sources now (a log thread answered the coordinator). */
    void wake()
    {
        final Thread t = thread;
        if (t != null)
        {
            LockSupport.unpark(t); // remembered by a park that has not begun yet: no wake-up is lost
        }
    }

    /** Errors the agent met and carried on after (each logged once per kind). */
    public long errors()
    {
        return errors.count();
    }

    @Override
    public void onStart()
    {
        thread = Thread.currentThread();
    }

    @Override
    public int doWork()
    {
        final long nowMs = System.currentTimeMillis();
        int work = 0;
        synchronized (coordinator)
        {
            try
            {
                work += coordinator.applyAnsweredWrites();
            }
            catch (final Throwable fault)
            {
                errors.onError(fault);
            }
            if (nowMs >= nextTickMs)
            {
                nextTickMs = nowMs + GroupTimers.TICK_MS;
                work++;
                try
                {
                    timers.check(nowMs);
                }
                catch (final Throwable fault)
                {
                    errors.onError(fault);
                }
            }
        }
        return work;
    }

    @Override
    public void onClose()
    {
        thread = null;
    }

    /** Stops the agent's thread. */
    @Override
    public void close()
    {
        if (runner != null)
        {
            runner.close((int)CLOSE_WAIT_MS, ignored -> LOG.warn("the group coordinator did not stop in {} ms", CLOSE_WAIT_MS));
        }
    }
}
