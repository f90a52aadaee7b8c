package io.ferrite.broker.logthread;

import io.ferrite.broker.replica.LeaderDuty;
import io.ferrite.log.AppendResult;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

/**
 * A log thread, as an Agrona {@link Agent}: the single writer of the partitions it owns. Its duty
 * cycle drains the append commands each network thread sent it (at most {@value #DRAIN_LIMIT} per
 * queue per cycle, so no network thread starves the others), appends, and sends each command back
 * over that network thread's return queue ({@link CommandQueues}) — at once, or in fsync durability
 * once an fsync covers the batch ({@link HeldAppends}; {@link CommandAppender} appends and decides which). Control tasks (deleting a partition's log)
 * run between appends, so nothing else ever touches a log it writes. In production a
 * {@link LogThreadRunner} runs it (an Agrona {@code AgentRunner} with {@link #idleStrategy} and
 * {@link #faults()} as the error handler); tests step it with an {@code AgentInvoker}.
 *
 * <p>A command, task or answer that throws costs only itself: the command is answered
 * KAFKA_STORAGE_ERROR and the fault counted ({@link #faults()}). A fault the thread cannot survive
 * (a {@link VirtualMachineError} other than a SIGBUS's {@link InternalError}) stops it, and its end
 * ({@link #onClose()}) answers every command it still had, queued or held, KAFKA_STORAGE_ERROR;
 * every command sent to it later is answered so at once. Being the only writer of its partitions,
 * a log thread that died silently would leave every produce queued to it waiting for ever.
 */
public final class LogThread implements Agent
{
    /** Commands taken from one network thread per cycle before the next is served. */
    private static final int DRAIN_LIMIT = 64;

    private final int id;
    private final String roleName;
    private final Completion completion;
    private final LogThreadFaults faults;
    private final CommandQueues queues;
    private final HeldAppends held;
    /** The append of a command, and whether its answer goes now or is held. */
    private final CommandAppender appender;
    /** The high watermark and ISR of the partitions it owns that this node leads with followers. */
    private final LeaderDuty leaders;
    private final ManyToOneConcurrentLinkedQueue<Runnable> tasks = new ManyToOneConcurrentLinkedQueue<>();
    /** {@link #execute} without a queue node per task, for the follower fetchers' appends: each fetcher has at most one per partition out. */
    private final ManyToOneConcurrentArrayQueue<Runnable> boundedTasks = new ManyToOneConcurrentArrayQueue<>(1024);
    /**
     * The command taken from its queue and not yet answered or held, for the duty cycle's last-resort
     * catch: a SIGBUS on a mapped segment in compiled code surfaces as an InternalError only at a
     * later safepoint, which may fall outside the per-command catch — even in a later command, which
     * then takes the error (better than a command never answered; the faulting append itself may
     * have been answered already, which only the log engine could prevent).
     */
    private AppendCommand inHand;
    private int inHandFrom;
    /** The fault the thread could not survive; set on the log thread, which then stops. */
    private Throwable fatal;
    /** The producer-id expiry of the partitions it owns, walked a few per cycle ({@link LogThreadTasks}); set before the thread starts. */
    private ProducerExpiryWalk expiry;
    /** Set by {@link #requestClose()}: the next duty cycle ends the agent. */
    private volatile boolean closeRequested;

    /** What a log thread tells the network threads. */
    public interface Completion
    {
        /** Commands came back for {@code networkThread} (they are on its return queue). */
        void completed(int networkThread);

        /** The partition's high watermark moved while fetches wait on it. */
        void highWatermarkAdvanced(io.ferrite.broker.topic.Partition partition);
    }

    public LogThread(final int id, final int networkThreads, final int queueCapacity, final Completion completion)
    {
        this.id = id;
        this.roleName = "ferrite-log-" + id;
        this.completion = completion;
        this.faults = new LogThreadFaults(id, this::stopAfter);
        this.queues = new CommandQueues(networkThreads, queueCapacity, completion, faults);
        this.held = new HeldAppends(queues, faults);
        this.leaders = new LeaderDuty(queues::wake, completion::highWatermarkAdvanced, held::answerPartition);
        this.appender = new CommandAppender(completion, held, leaders);
    }

    /** Its share of replication; touched on this thread only (install leadership with {@link #execute}), but its nudges. */
    public LeaderDuty leaders()
    {
        return leaders;
    }

    /** {@code configured} as this thread must idle: woken when a network thread hands it a command. */
    public IdleStrategy idleStrategy(final IdleStrategy configured)
    {
        return new LogThreadIdle(configured, this);
    }

    /**
     * From network thread {@code networkThread}: false when it already has a queue's worth of
     * commands out on this thread (back-pressure). Why count rather than rely on the in-queue: that
     * bound is what keeps the return queue from ever being full. On a stopped thread the command
     * is answered at once (it is on the return queue when this returns).
     */
    public boolean offer(final int networkThread, final AppendCommand command)
    {
        return queues.offer(networkThread, command);
    }

    /** For tests: commands offered and not yet taken by this thread (approximate while it runs). */
    public int waitingCommands()
    {
        return queues.waiting();
    }

    /** Commands finished for network thread {@code networkThread}, polled by it. */
    public AppendCommand poll(final int networkThread)
    {
        return queues.poll(networkThread);
    }

    /** Whether commands for network thread {@code networkThread} wait on its return queue. */
    public boolean hasReturned(final int networkThread)
    {
        return queues.hasReturned(networkThread);
    }

    /** Makes an idle thread look at its work now (an fsync completed or failed). */
    public void wake()
    {
        queues.wake();
    }

    /** The faults this thread survived, and its error handler. */
    public LogThreadFaults faults()
    {
        return faults;
    }

    /** Whether the thread has ended (closed, or stopped by a fault it could not survive). */
    public boolean stopped()
    {
        return queues.stopped();
    }

    /** Before the thread starts: the walk that runs the producer-id expiry of its partitions when it is due. */
    void expiry(final ProducerExpiryWalk walk)
    {
        this.expiry = walk;
    }

    /** Runs {@code task} on this thread between appends (never, once the thread has stopped). */
    public void execute(final Runnable task)
    {
        tasks.offer(task);
        queues.wake();
    }

    /** {@link #execute}, allocating nothing while its bounded queue has room (a follower's append: {@code ReplicaFetcher}). */
    public void executeBounded(final Runnable task)
    {
        if (!boundedTasks.offer(task))
        {
            tasks.offer(task);
        }
        queues.wake();
    }

    /**
     * Asks the agent to end at its next duty cycle and wakes it, so that its runner's {@code close()}
     * returns as soon as {@link #onClose()} has answered what was left — rather than after the
     * runner's retry timeout, when it interrupts the thread (an interrupt closes any FileChannel
     * the thread is in, which for a log thread can be a segment's).
     */
    public void requestClose()
    {
        closeRequested = true;
        queues.wake(); // unpark is remembered: a thread not yet parked returns from its next park at once
    }

    @Override
    public String roleName()
    {
        return roleName;
    }

    @Override
    public void onStart()
    {
        queues.owner(Thread.currentThread());
    }

    @Override
    public int doWork()
    {
        if (fatal != null || closeRequested)
        {
            throw new AgentTerminationException(true); // expected: a fault handled where it was caught, or a close
        }
        try
        {
            int work = drainCommands();
            if (leaders.hasWork())
            {
                work += leaders.doWork(System.currentTimeMillis());
            }
            if (!held.isEmpty())
            {
                work += held.completeDurable();
            }
            work += runTasks();
            return expiry == null ? work : work + expiry.doWork();
        }
        catch (final Throwable fault)
        {
            // handled here, not by the runner: Agrona's AgentRunner ends its run on an Error
            // without calling onClose, which would leave every command sent here unanswered
            final AppendCommand command = inHand;
            inHand = null;
            if (command == null || queues.next(inHandFrom) == command)
            {
                faults.survive("the duty cycle", fault); // none in hand, or still queued (taken again next)
            }
            else
            {
                answerFault(queues, faults, command, LogThreadMessages.appendTo(command), fault); // not if already answered
                held.dropReturned(); // if it got as far as being held
            }
            return 1;
        }
    }

    private int drainCommands()
    {
        int work = 0;
        for (int n = 0, threads = queues.networkThreads(); n < threads; n++)
        {
            for (int i = 0; i < DRAIN_LIMIT && fatal == null; i++)
            {
                // in hand before it leaves its queue: a late fault surfacing inside the take finds it
                // (still queued: it is taken again next time; taken: it is answered)
                final AppendCommand command = queues.next(n);
                if (command == null)
                {
                    break;
                }
                command.polls++;
                if (AppendCommand.STAMP_ANSWERS)
                {
                    command.takenNs = System.nanoTime();
                }
                inHand = command;
                inHandFrom = n;
                queues.take(n);
                append(command);
                work++;
            }
        }
        return work;
    }

    private int runTasks()
    {
        int work = 0;
        Runnable task;
        while (fatal == null && ((task = boundedTasks.poll()) != null || (task = tasks.poll()) != null))
        {
            try
            {
                task.run();
            }
            catch (final Throwable fault)
            {
                faults.survive("a task", fault);
            }
            work++;
        }
        return work;
    }

    /**
     * The end of the thread, closed or stopped by a fault: the held commands an fsync already
     * covers are answered OK, every other held or queued command — and, through the queues, every
     * later one — KAFKA_STORAGE_ERROR after a fault, NOT_LEADER_OR_FOLLOWER (LOG_CLOSED) after a
     * close (the broker stopping: a client tries again elsewhere, as for a partition moved away).
     */
    @Override
    public void onClose()
    {
        if (queues.stopped())
        {
            return; // ended already (see runnerEnded)
        }
        if (fatal == null && !closeRequested)
        {
            return; // not an end: Agrona ends a run on an interrupt; LogThreadRunner runs the agent on (resumableAfterRun)
        }
        final Throwable cause = fatal;
        final int status = cause == null ? AppendResult.LOG_CLOSED : AppendResult.STORAGE_ERROR;
        final String message = cause == null ? "log thread " + id + " stopped" :
            "log thread " + id + " stopped after a fault it cannot survive: " + cause;
        inHand = null;
        try
        {
            held.completeDurable();
        }
        finally
        {
            try
            {
                held.answerAll(status, message);
            }
            finally
            {
                queues.stop(status, message);
            }
        }
    }

    /**
     * Whether the runner may run this agent again after {@code fault} ended its run: Agrona's
     * AgentRunner rethrows an Error that reached its error handler and ends the run without
     * calling {@link #onClose()}. If not, the agent's end runs here (on the runner's thread).
     */
    boolean resumableAfter(final Throwable fault)
    {
        if (queues.stopped())
        {
            return false;
        }
        if (fatal == null && !closeRequested && LogThreadFaults.survivable(fault))
        {
            return true;
        }
        if (fatal == null && !closeRequested)
        {
            fatal = fault;
        }
        onClose();
        return false;
    }

    /**
     * Whether the runner may run this agent again after its run ended without a fault: only a close
     * or a fault ends a log thread; the other way Agrona's AgentRunner ends a run is an interrupt of
     * its thread (a task, a library call), which must not take the single writer of these partitions
     * down. The interrupt is cleared and counted as a fault.
     */
    boolean resumableAfterRun()
    {
        if (queues.stopped() || fatal != null || closeRequested)
        {
            return false;
        }
        final boolean interrupted = Thread.interrupted();
        faults.onError(new IllegalStateException("log thread " + id + (interrupted ? " was interrupted" :
            " ended its run for no reason it knows") + "; it goes on"));
        return true;
    }

    /** Called back by {@link LogThreadFaults} (on this thread) for a fault the thread cannot survive. */
    private void stopAfter(final Throwable fault)
    {
        if (fatal == null)
        {
            fatal = fault;
        }
    }

    void idling(final boolean idling)
    {
        queues.idling(idling);
    }

    boolean hasWork()
    {
        return queues.anyQueued() || !tasks.isEmpty() || !boundedTasks.isEmpty() || closeRequested || (expiry != null && expiry.hasWork());
    }

    private void append(final AppendCommand command)
    {
        try
        {
            if (appender.appendAndHold(command))
            {
                inHand = null; // held: answered later, by the held appends
                return;
            }
        }
        catch (final Throwable fault)
        {
            inHand = null;
            answerFault(queues, faults, command, LogThreadMessages.appendTo(command), fault);
            held.dropReturned(); // a fault after the command was held: it went back with the fault
            return;
        }
        queues.answer(command);
        inHand = null; // after the answer: a late fault surfacing inside it finds the command in hand (seen: at its offer)
    }

    /** Answers a command whose handling threw KAFKA_STORAGE_ERROR, then counts and logs the fault. */
    static void answerFault(final CommandQueues queues, final LogThreadFaults faults, final AppendCommand command,
        final String what, final Throwable fault)
    {
        if (!queues.answered(command)) // else it went back before the fault surfaced: its answer stands
        {
            command.result.status = AppendResult.STORAGE_ERROR;
            command.result.message = what + " failed: " + fault;
            queues.answer(command);
        }
        faults.survive(what, fault);
    }
}
