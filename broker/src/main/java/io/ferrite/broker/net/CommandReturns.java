package io.ferrite.broker.net;

import io.ferrite.broker.logthread.AppendCommand;
import io.ferrite.broker.logthread.LogThread;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.Selector;

/**
 * The way back from the log threads to one network thread: the return queues it drains and the
 * wake-up a log thread gives after putting commands on them. A busy network thread drains the
 * queues before it selects again, so a log thread wakes it only while it blocks (or is about to
 * block) in select, and under load most returned commands cost no system call ({@code
 * Selector.wakeup} is an eventfd write under a lock the selecting thread also takes). And it wakes
 * it once per pass, not once per command: the first log thread to see the network thread selecting
 * clears the flag as it wakes it, so the other commands of its duty cycle, and those other log
 * threads return meanwhile, cost a fence and a read each; the network thread sets the flag again
 * only before its next blocking select.
 *
 * <p>Threading: {@link #signal} from any log thread; everything else on the network thread.
 */
final class CommandReturns
{
    private static final VarHandle SELECTING;
    private static final VarHandle WAKEUPS;

    static
    {
        try
        {
            SELECTING = MethodHandles.lookup().findVarHandle(CommandReturns.class, "selecting", boolean.class);
            WAKEUPS = MethodHandles.lookup().findVarHandle(CommandReturns.class, "wakeups", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final int networkThread;
    private final Selector selector;
    private LogThread[] logThreads = new LogThread[0];
    /**
     * Set while the network thread is in (or about to enter) a blocking select and nobody has woken
     * it yet: only then must it be woken.
     */
    private volatile boolean selecting;
    /** Selector wake-ups the log threads gave (read by tests and metrics). */
    private volatile long wakeups;

    CommandReturns(final int networkThread, final Selector selector)
    {
        this.networkThread = networkThread;
        this.selector = selector;
    }

    void logThreads(final LogThread[] logThreads)
    {
        this.logThreads = logThreads;
    }

    /** From a log thread, after it put commands on this network thread's return queue. */
    void signal()
    {
        VarHandle.fullFence(); // the command's store before the read of selecting (see arm())
        // read before the CAS: while the network thread is busy a returned command costs no CAS
        if (selecting && SELECTING.compareAndSet(this, true, false))
        {
            WAKEUPS.getAndAdd(this, 1L);
            selector.wakeup();
        }
    }

    /**
     * Before a blocking select: publishes "selecting", then takes a last look at the return queues
     * and answers whether commands wait (then the select must not block). {@link #signal} reads the
     * flag only after its command is queued, with a full fence on both sides: one of the two always
     * sees the other, so a returned command never waits out a select timeout.
     */
    boolean arm()
    {
        selecting = true;
        VarHandle.fullFence();
        return waiting();
    }

    /** After the select returned (woken or not): commands now wait for the drain, not for a wake-up. */
    void disarm()
    {
        selecting = false;
    }

    private boolean waiting()
    {
        for (final LogThread logThread : logThreads)
        {
            if (logThread.hasReturned(networkThread))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Hands each returned command to its request; returns how many. Bounded without a limit of its
     * own: a return queue holds at most what this thread has out on that log thread (its capacity).
     */
    int drain()
    {
        int n = 0;
        for (final LogThread logThread : logThreads)
        {
            AppendCommand command;
            while ((command = logThread.poll(networkThread)) != null)
            {
                command.request.appended(command);
                n++;
            }
        }
        return n;
    }

    long wakeups()
    {
        return wakeups;
    }
}
