package io.ferrite.broker.admin;

import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The {@link AdminAgent}'s commands on their way to it: a many-to-one queue that any thread offers to and the agent's
 * thread alone drains, the wake-up of that thread (parked while idle) by an offer, and what becomes of a command once
 * the agent stopped — answered at once, failed with the cause that ended the agent's thread, or after a close
 * abandoned (its waiter answers as for a timeout). Without that a command offered after the stop would wait for ever:
 * one without a deadline (Metadata's auto-creation, the offsets topic) has none at its waiter.
 */
final class AdminQueue
{
    private final ManyToOneConcurrentLinkedQueue<AdminCommand> commands = new ManyToOneConcurrentLinkedQueue<>();
    /** The agent's thread while it runs under its own runner (null when stepped): whom an offer unparks. */
    private volatile Thread consumer;
    /** Set once the agent closed or its thread ended: nothing queued will run any more ({@link #submit} checks it). */
    private volatile boolean stopped;
    /**
     * Why the agent's thread ended when an Error ended it (written before {@link #stopped}): the cause the commands it
     * will not run fail with. Null after a close: those are abandoned, as at a timeout.
     */
    private volatile Throwable death;

    /** The agent's thread, before its first look at the queue (an offer after that look unparks it). */
    void consumer(final Thread thread)
    {
        consumer = thread;
    }

    /**
     * From any thread: queues {@code command} and unparks the agent's thread. Once the agent stopped, the command is
     * answered here and now (failed, or after a close abandoned); one that slips in as the agent's thread ends is ended
     * by whichever of the two gets it first.
     */
    void submit(final AdminCommand command)
    {
        if (stopped) // before the offer too: nothing drains the queue any more, so a refused command must not stay in it
        {
            refuse(command);
            return;
        }
        commands.offer(command);
        if (stopped) // read after the offer: the stopping thread drains after setting it
        {
            refuse(command);
            return;
        }
        final Thread t = consumer; // read after the offer: see AdminAgent's Idle
        if (t != null)
        {
            LockSupport.unpark(t);
        }
    }

    /** The agent's thread: the next command, or null. */
    AdminCommand poll()
    {
        return commands.poll();
    }

    boolean isEmpty()
    {
        return commands.isEmpty();
    }

    int size()
    {
        return commands.size();
    }

    /** The cause the agent's thread ended with, or null (running, or closed). */
    Throwable death()
    {
        return death;
    }

    /**
     * The agent's thread, as it stops: nothing queued runs any more, and every command queued from now on is answered
     * at once — failed with {@code cause} (an Error ended the thread), or abandoned when it is null (a close).
     */
    void stop(final Throwable cause)
    {
        if (cause != null)
        {
            death = cause;
        }
        stopped = true;
        consumer = null;
    }

    /**
     * After {@link #stop}, on the agent's thread (the queue's only consumer): every command still queued answered as
     * {@link #submit} answers one after the stop; a throw while answering one is {@code reported}, and the others are
     * still answered.
     */
    void refuseQueued(final Consumer<Throwable> reported)
    {
        // until the queue is empty, not until a poll finds nothing: a command whose offer has just moved
        // the tail may not be linked yet, and submit only re-checks stopped after that move
        while (!commands.isEmpty())
        {
            final AdminCommand command = commands.poll();
            if (command == null)
            {
                Thread.onSpinWait();
                continue;
            }
            try
            {
                refuse(command);
            }
            catch (final Throwable fault)
            {
                reported.accept(fault);
            }
        }
    }

    /** A command the stopped agent will not run: failed after its thread died, abandoned after a close. */
    private void refuse(final AdminCommand command)
    {
        final Throwable cause = death;
        if (cause != null)
        {
            command.refuse(cause);
        }
        else
        {
            command.abandon();
        }
    }
}
