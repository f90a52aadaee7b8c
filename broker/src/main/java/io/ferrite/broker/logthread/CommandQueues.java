package io.ferrite.broker.logthread;

import io.ferrite.log.AppendResult;
import org.jctools.queues.SpscArrayQueue;

import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The queues between the network threads and one log thread: a JCTools SPSC ring in and one out per
 * network thread. Their capacity equals the network thread's pool of commands, so an offer back can
 * never fail.
 *
 * <p>Who may touch what: network thread {@code n} offers to {@code in[n]} and polls {@code out[n]};
 * the log thread polls every {@code in} and offers to every {@code out} — until it has
 * {@link #stop stopped}. From then on the log thread touches no queue again and each network thread
 * owns both of its queues: what it finds in its in-queue (a command offered while the log thread
 * was stopping) and every later command it offers, it answers itself with the stopped thread's
 * answer. Without that, a command sent to a dead log thread would wait for ever.
 */
final class CommandQueues
{
    private final SpscArrayQueue<AppendCommand>[] in;
    private final SpscArrayQueue<AppendCommand>[] out;
    private final int capacity;
    private static final int INTS_PER_LINE = 16;
    /**
     * Commands each network thread has out on this thread (touched only by that network thread), at
     * {@link #slot}: one cache line apart, so network threads counting side by side do not share a
     * line (adjacent ints would make every count a cache miss on the other thread's core).
     */
    private final int[] inFlight;
    private final LogThread.Completion completion;
    private final LogThreadFaults faults;
    /** The log thread while it runs (null under an AgentInvoker, whose caller needs no wake-up). */
    private volatile Thread owner;
    private volatile boolean idling;
    /** Set once the log thread has answered all it had and let go of the queues. */
    private volatile boolean stopped;
    private int stoppedStatus;
    private String stoppedMessage;

    @SuppressWarnings("unchecked")
    CommandQueues(final int networkThreads, final int capacity, final LogThread.Completion completion, final LogThreadFaults faults)
    {
        this.capacity = capacity;
        this.completion = completion;
        this.faults = faults;
        this.inFlight = new int[(networkThreads + 1) * INTS_PER_LINE]; // a line before the first slot too: the array's header
        this.in = new SpscArrayQueue[networkThreads];
        this.out = new SpscArrayQueue[networkThreads];
        for (int i = 0; i < networkThreads; i++)
        {
            in[i] = new SpscArrayQueue<>(capacity);
            out[i] = new SpscArrayQueue<>(capacity);
        }
    }

    private static int slot(final int networkThread)
    {
        return (networkThread + 1) * INTS_PER_LINE;
    }

    int networkThreads()
    {
        return in.length;
    }

    // ---- network thread side ----

    /** Commands waiting on the in-queues (see {@link LogThread#waitingCommands}). */
    int waiting()
    {
        int n = 0;
        for (final SpscArrayQueue<AppendCommand> q : in)
        {
            n += q.size();
        }
        return n;
    }

    /** See {@link LogThread#offer}. */
    boolean offer(final int networkThread, final AppendCommand command)
    {
        if (inFlight[slot(networkThread)] >= capacity)
        {
            return false;
        }
        if (stopped)
        {
            inFlight[slot(networkThread)]++;
            answerForStopped(networkThread, command);
            return true;
        }
        if (!in[networkThread].offer(command))
        {
            return false;
        }
        inFlight[slot(networkThread)]++;
        VarHandle.fullFence(); // the command's store before the read of idling (see LogThreadIdle)
        if (idling)
        {
            LockSupport.unpark(owner);
        }
        return true;
    }

    /** See {@link LogThread#poll}. */
    AppendCommand poll(final int networkThread)
    {
        if (stopped)
        {
            takeOver(networkThread);
        }
        final AppendCommand command = out[networkThread].relaxedPoll();
        if (command != null)
        {
            inFlight[slot(networkThread)]--;
        }
        return command;
    }

    /** See {@link LogThread#hasReturned}. */
    boolean hasReturned(final int networkThread)
    {
        if (stopped)
        {
            takeOver(networkThread);
        }
        return !out[networkThread].isEmpty();
    }

    /** Answers what slipped into the in-queue while the log thread stopped: the network thread owns both queues now. */
    private void takeOver(final int networkThread)
    {
        AppendCommand command;
        while ((command = in[networkThread].relaxedPoll()) != null)
        {
            answerForStopped(networkThread, command);
        }
    }

    private void answerForStopped(final int networkThread, final AppendCommand command)
    {
        takeOver(networkThread); // older commands first
        command.polls++;
        command.answeredPoll = command.polls;
        command.held = false;
        refuse(command.result, stoppedStatus, stoppedMessage);
        out[networkThread].offer(command);
    }

    /** An answer for a command that was not appended (a pooled command's result holds its last use). */
    private static void refuse(final AppendResult result, final int status, final String message)
    {
        result.status = status;
        result.message = message;
        result.firstOffset = -1;
        result.lastOffset = -1;
        result.logStartOffset = -1;
        result.recordIndex = -1;
    }

    // ---- log thread side ----

    void owner(final Thread thread)
    {
        owner = thread;
    }

    void wake()
    {
        LockSupport.unpark(owner);
    }

    void idling(final boolean idling)
    {
        this.idling = idling;
    }

    AppendCommand take(final int networkThread)
    {
        return in[networkThread].relaxedPoll();
    }

    /** The command {@link #take} would take next, left in the queue. */
    AppendCommand next(final int networkThread)
    {
        return in[networkThread].relaxedPeek();
    }

    /**
     * Whether this take of the command has been sent back: marked, and its return queue moved past
     * where the offer was to go. A late fault (a SIGBUS's InternalError, at a later safepoint) can
     * surface between the mark and the offer; the mark alone then left the command unanswered.
     * Log thread only (the return queues' producer).
     */
    boolean answered(final AppendCommand command)
    {
        return command.answeredPoll == command.polls && out[command.networkThread].currentProducerIndex() > command.answerOfferedAt;
    }

    boolean anyQueued()
    {
        for (final SpscArrayQueue<AppendCommand> queue : in)
        {
            if (!queue.isEmpty())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Sends {@code command} back, unless it already went back for this take: a fault anywhere on
     * the log thread (a SIGBUS's InternalError surfaces late, at any instruction) must never send a
     * command back twice — its request would count it twice and its pool hold it twice. Marked
     * before the offer: a fault inside the offer would lose the command, which is the lesser harm.
     */
    void answer(final AppendCommand command)
    {
        if (answered(command))
        {
            return;
        }
        final SpscArrayQueue<AppendCommand> back = out[command.networkThread];
        // marked before the offer: once offered, the command is the network thread's
        command.answeredPoll = command.polls;
        command.answerOfferedAt = back.currentProducerIndex();
        command.held = false;
        if (AppendCommand.STAMP_ANSWERS)
        {
            command.answeredNs = System.nanoTime();
        }
        back.offer(command); // cannot fail: the return queue holds all a network thread has out
        try
        {
            completion.completed(command.networkThread);
        }
        catch (final Throwable fault)
        {
            // the command is back on its queue; the network thread finds it on its next turn
            faults.survive(LogThreadMessages.returnedCommand(command.networkThread), fault);
        }
    }

    /**
     * The log thread's last act: answers every command still queued to it with {@code status},
     * then lets go of the queues (each network thread answers what it finds or sends from then on
     * the same way) and wakes every network thread, so that what slipped in meanwhile is answered too.
     */
    void stop(final int status, final String message)
    {
        stoppedStatus = status;
        stoppedMessage = message;
        for (int n = 0; n < in.length; n++)
        {
            AppendCommand command;
            while ((command = in[n].relaxedPoll()) != null)
            {
                command.polls++;
                refuse(command.result, status, message);
                answer(command);
            }
        }
        stopped = true; // publishes the answer fields and the queues' indexes with it
        for (int n = 0; n < in.length; n++)
        {
            try
            {
                completion.completed(n);
            }
            catch (final Throwable fault)
            {
                faults.survive("telling network thread " + n + " the log thread stopped", fault);
            }
        }
    }

    boolean stopped()
    {
        return stopped;
    }
}
