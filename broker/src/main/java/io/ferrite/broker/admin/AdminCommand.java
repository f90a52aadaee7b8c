package io.ferrite.broker.admin;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One piece of topic administration (create, add partitions, delete, change configs) handed by a
 * network thread to the {@link AdminAgent}, which runs it and hands the result back: the command
 * holds its inputs and outcome, and the network thread's {@link AdminAnswer} writes the response
 * from it once it is {@link #isDone done}.
 *
 * <p>Its life: QUEUED, then either RUNNING and DONE (the agent took it in time and ran it to the
 * end) or EXPIRED (its deadline passed before the agent took it: it never runs, so an answer of
 * REQUEST_TIMED_OUT is true — nothing was done). A command the agent's thread had in hand when it
 * died, or will never take because it died, is DONE as {@link #failed} (UNKNOWN_SERVER_ERROR), or EXPIRED
 * when recording that failure threw for one it never ran. The network thread expires a command at its
 * deadline with a CAS that loses to the agent's taking it, and the agent does not take a command
 * whose deadline has passed: as Kafka's controller fails an event still queued at its deadline.
 * Once RUNNING it runs to the end (the outcome then is the real one), like a controller event.
 *
 * <p>Threading: {@link #run} on the agent only (and {@link #failed}, but for a command refused by a dead
 * agent: on the submitting thread); {@link #isDone}, {@link #expire} on any thread.
 * The outcome fields a subclass writes in {@link #run} are published by the release store of DONE.
 */
public abstract class AdminCommand
{
    private static final int QUEUED = 0;
    private static final int RUNNING = 1;
    private static final int DONE = 2;
    private static final int EXPIRED = 3;
    private static final VarHandle STATE;

    static
    {
        try
        {
            STATE = MethodHandles.lookup().findVarHandle(AdminCommand.class, "state", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Epoch ms after which the command is no longer taken (Long.MAX_VALUE: never expires). */
    final long deadlineMs;
    /** Makes the network thread that waits for the answer look at it (its selector's wake-up). */
    private final Runnable waker;
    @SuppressWarnings("unused") // through STATE
    private volatile int state;

    protected AdminCommand(final long deadlineMs, final Runnable waker)
    {
        this.deadlineMs = deadlineMs;
        this.waker = waker;
    }

    /** The work, on the admin agent: writes the topic registry and the outcome fields. */
    protected abstract void run();

    /** The work threw (a defect or an I/O failure not handled in {@link #run}): record the outcome. */
    protected abstract void failed(Throwable cause);

    /** The agent ran it (and its outcome fields are visible). */
    public final boolean isDone()
    {
        return (int)STATE.getAcquire(this) == DONE;
    }

    /** Whether it expired: it never ran and never will. */
    public final boolean isExpired()
    {
        return (int)STATE.getAcquire(this) == EXPIRED;
    }

    /**
     * From the waiting network thread at the deadline: expires the command unless the agent took it
     * already. True when it is expired (now or before), false when it runs or ran.
     */
    public final boolean expire()
    {
        return STATE.compareAndSet(this, QUEUED, EXPIRED) || isExpired();
    }

    public final long deadlineMs()
    {
        return deadlineMs;
    }

    /** On the agent: takes it to run, or expires it when its deadline passed. False: do not run it. */
    final boolean take(final long nowMs)
    {
        if (nowMs >= deadlineMs)
        {
            if (STATE.compareAndSet(this, QUEUED, EXPIRED))
            {
                waker.run();
            }
            return false;
        }
        return STATE.compareAndSet(this, QUEUED, RUNNING);
    }

    /** On the agent: the command will not run (the agent is closing); its waiter answers as for a timeout. */
    final void abandon()
    {
        if (STATE.compareAndSet(this, QUEUED, EXPIRED))
        {
            waker.run();
        }
    }

    /** On the agent, after {@link #run}: publishes the outcome and wakes the waiting network thread. */
    final void finish()
    {
        STATE.setRelease(this, DONE);
        waker.run();
    }

    /**
     * Any thread, once the agent's thread died: the command will not run; unless its waiter expired it
     * meanwhile, it is taken here (one CAS: the dying thread and a late submitter may both try) and
     * ends as {@link #failed} with {@code cause}.
     */
    final void refuse(final Throwable cause)
    {
        if (STATE.compareAndSet(this, QUEUED, RUNNING))
        {
            try
            {
                failed(cause);
            }
            catch (final Throwable ex)
            {
                // it never ran, and its outcome is half written (a planned topic reads as created): answered as
                // for a timeout, which is true — nothing was done
                STATE.setRelease(this, EXPIRED);
                waker.run();
                throw ex;
            }
            finish();
        }
    }

    /**
     * On the agent's thread, for the command it took and did not see to its end (a throw left the pass
     * between the two): ended as {@link #failed} with {@code cause} unless its outcome was recorded
     * ({@code outcomeRecorded}: {@link #run} or {@link #failed} returned), published, and its waiter
     * woken — again, if it ended already: the wake is then what threw.
     */
    final void endAtLast(final boolean outcomeRecorded, final Throwable cause)
    {
        if (outcomeRecorded || isDone())
        {
            finish();
        }
        else
        {
            endFailed(cause);
        }
    }

    private void endFailed(final Throwable cause)
    {
        try
        {
            failed(cause);
        }
        finally
        {
            finish(); // answered even if recording the failure threw: a half-written outcome beats a waiter left for ever
        }
    }
}
