package io.ferrite.broker.logthread;

import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.jctools.queues.SpscArrayQueue;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * A log thread: the single writer of the partitions it owns. Its duty cycle drains the append
 * commands each network thread sent it (a bounded number per queue per cycle, so no network thread
 * starves the others), appends, and sends each command back over that network thread's return
 * queue — at once, or in fsync durability once an fsync covers the batch. Control tasks (deleting a
 * partition's log) run between appends, so nothing else ever touches a log it writes.
 *
 * <p>A command, task or answer that throws costs only itself: the command is answered
 * KAFKA_STORAGE_ERROR and the fault counted ({@link #faults()}). Being the only writer of its
 * partitions, a log thread that died would leave every produce queued to it waiting for ever.
 *
 * <p>Queues are JCTools SPSC rings: one in and one out per network thread. Their capacity equals the
 * network thread's pool of commands, so an offer back can never fail.
 */
public final class LogThread implements Runnable
{
    /** Commands taken from one network thread per cycle before the next is served. */
    private static final int DRAIN_LIMIT = 64;

    private final int id;
    private final SpscArrayQueue<AppendCommand>[] in;
    private final SpscArrayQueue<AppendCommand>[] out;
    private final Completion completion;
    private final int queueCapacity;
    /** Commands each network thread has out on this thread (touched only by that network thread). */
    private final int[] inFlight;
    private final IdleStrategy idle;
    private final ManyToOneConcurrentLinkedQueue<Runnable> tasks = new ManyToOneConcurrentLinkedQueue<>();
    private final List<AppendCommand> awaitingFsync = new ArrayList<>();
    private final LogThreadFaults faults;
    /**
     * The command taken from its queue and not yet answered or held, for the duty cycle's last-resort
     * catch: a SIGBUS on a mapped segment in compiled code surfaces as an InternalError only at a
     * later safepoint, which may fall outside the per-command catch — even in a later command, which
     * then takes the error (better than a command never answered; the faulting append itself may
     * have been answered already, which only the log engine could prevent).
     */
    private AppendCommand inHand;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean idling;

    /** What a log thread tells the network threads. */
    public interface Completion
    {
        /** Commands came back for {@code networkThread} (they are on its return queue). */
        void completed(int networkThread);

        /** The partition's high watermark moved while fetches wait on it. */
        void highWatermarkAdvanced(io.ferrite.broker.topic.Partition partition);
    }

    @SuppressWarnings("unchecked")
    public LogThread(final int id, final int networkThreads, final int queueCapacity, final Completion completion,
        final IdleStrategy idle)
    {
        this.id = id;
        this.completion = completion;
        this.idle = idle;
        this.queueCapacity = queueCapacity;
        this.faults = new LogThreadFaults(id);
        this.inFlight = new int[networkThreads];
        this.in = new SpscArrayQueue[networkThreads];
        this.out = new SpscArrayQueue[networkThreads];
        for (int i = 0; i < networkThreads; i++)
        {
            in[i] = new SpscArrayQueue<>(queueCapacity);
            out[i] = new SpscArrayQueue<>(queueCapacity);
        }
        this.thread = new Thread(this, "ferrite-log-" + id);
        this.thread.setDaemon(true);
    }

    public void start()
    {
        thread.start();
    }

    /**
     * From network thread {@code networkThread}: false when it already has a queue's worth of
     * commands out on this thread (back-pressure). Why count rather than rely on the in-queue: that
     * bound is what keeps the return queue from ever being full.
     */
    public boolean offer(final int networkThread, final AppendCommand command)
    {
        if (inFlight[networkThread] >= queueCapacity || !in[networkThread].offer(command))
        {
            return false;
        }
        inFlight[networkThread]++;
        VarHandle.fullFence(); // the command's store before the read of idling (see run())
        if (idling)
        {
            LockSupport.unpark(thread);
        }
        return true;
    }

    /** Commands finished for network thread {@code networkThread}, polled by it. */
    public AppendCommand poll(final int networkThread)
    {
        final AppendCommand command = out[networkThread].relaxedPoll();
        if (command != null)
        {
            inFlight[networkThread]--;
        }
        return command;
    }

    /** Whether commands for network thread {@code networkThread} wait on its return queue. */
    public boolean hasReturned(final int networkThread)
    {
        return !out[networkThread].isEmpty();
    }

    /** Makes an idle thread look at its work now (an fsync completed). */
    public void wake()
    {
        LockSupport.unpark(thread);
    }

    /** The faults this thread survived. */
    public LogThreadFaults faults()
    {
        return faults;
    }

    /** Runs {@code task} on this thread between appends. */
    public void execute(final Runnable task)
    {
        tasks.offer(task);
        LockSupport.unpark(thread);
    }

    @Override
    public void run()
    {
        while (running)
        {
            try
            {
                doWork();
            }
            catch (final Throwable fault)
            {
                final AppendCommand command = inHand;
                if (command != null)
                {
                    answerFault(command, "an append to " + command.partition.log, fault); // not if already answered
                    dropReturned(); // if it got as far as being held
                }
                else if (!LogThreadFaults.survivable(fault))
                {
                    throw fault; // already counted where it was caught, or the JVM is failing anyway
                }
                else
                {
                    faults.survive("the duty cycle", fault); // whatever the per-command guards did not catch
                }
            }
        }
    }

    private void doWork()
    {
        int work = 0;
        for (int n = 0; n < in.length; n++)
        {
            final SpscArrayQueue<AppendCommand> queue = in[n];
            for (int i = 0; i < DRAIN_LIMIT; i++)
            {
                final AppendCommand command = queue.relaxedPoll();
                if (command == null)
                {
                    break;
                }
                command.polls++;
                inHand = command;
                append(command);
                work++;
            }
        }
        if (!awaitingFsync.isEmpty())
        {
            work += completeDurable();
        }
        Runnable task;
        while ((task = tasks.poll()) != null)
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
        if (work == 0)
        {
            // publish "idling" before the last look at the queues, and offer() looks at
            // "idling" only after its command is in (with a full fence between): one of the two
            // always sees the other, so a command never waits out a park
            idling = true;
            if (!hasWork())
            {
                idle.idle(0);
            }
            idling = false;
        }
        else
        {
            idle.reset();
        }
    }

    private boolean hasWork()
    {
        for (final SpscArrayQueue<AppendCommand> queue : in)
        {
            if (!queue.isEmpty())
            {
                return true;
            }
        }
        return !tasks.isEmpty();
    }

    private void append(final AppendCommand command)
    {
        try
        {
            if (appendAndHold(command))
            {
                return;
            }
        }
        catch (final Throwable fault)
        {
            answerFault(command, "an append to " + command.partition.log, fault);
            dropReturned(); // a fault after the command was held: it went back with the fault
            return;
        }
        complete(command);
    }

    /** Appends; returns whether the answer must wait for an fsync (the command is then held). */
    private boolean appendAndHold(final AppendCommand command)
    {
        final PartitionLog log = command.partition.log;
        log.append(command.buffer, command.offset, command.length, command.result);
        final AppendResult r = command.result;
        if (log.config().fsyncDurability)
        {
            // the mode promises that nothing is acknowledged before an fsync covers it: at acks=1 as
            // at acks=all, and for a retry answered with the original's offsets too (the DUPLICATE
            // of a batch appended a moment ago; Kafka holds that answer until the high watermark,
            // here the durable offset, passes the batch). The high watermark moves after the fsync.
            if (command.acks != 0 && r.succeeded() && log.durableOffset() <= r.lastOffset)
            {
                command.held = true;
                awaitingFsync.add(command);
                inHand = null;
                return true;
            }
        }
        else if (r.status == AppendResult.OK)
        {
            log.highWatermark(r.lastOffset + 1); // one node: what is appended is committed
            if (command.partition.hasParkedFetches())
            {
                completion.highWatermarkAdvanced(command.partition);
            }
        }
        return false;
    }

    /** Answers a command whose handling threw KAFKA_STORAGE_ERROR, then counts and logs the fault. */
    private void answerFault(final AppendCommand command, final String what, final Throwable fault)
    {
        if (command.answeredPoll != command.polls) // else it went back before the fault surfaced: its answer stands
        {
            command.result.status = AppendResult.STORAGE_ERROR;
            command.result.message = what + " failed: " + fault;
            complete(command);
        }
        faults.survive(what, fault);
    }

    /**
     * Sends back the held commands an fsync now covers, in the order they came, and those whose log
     * closed with no fsync covering them — with NOT_LEADER_OR_FOLLOWER, not OK: the partition went
     * away (deleted, or the broker stopping), which is Kafka's answer to a produce waiting in
     * purgatory whose partition is no longer hosted, and what an append arriving after the close
     * gets (LOG_CLOSED). KAFKA_STORAGE_ERROR would tell the client the disk failed, which a close
     * is not. Checked in this order because close sets the flag before its own flush: a batch
     * that flush covered is answered OK.
     */
    private int completeDurable()
    {
        final int waiting = awaitingFsync.size();
        try
        {
            // answer without changing the list, then drop what went back: a fault in the middle
            // leaves the list whole, and no command in it twice
            for (int i = 0; i < waiting; i++)
            {
                final AppendCommand command = awaitingFsync.get(i);
                try
                {
                    final PartitionLog log = command.partition.log;
                    final AppendResult r = command.result;
                    if (log.durableOffset() > r.lastOffset)
                    {
                        complete(command);
                    }
                    else if (log.isClosed() && log.durableOffset() <= r.lastOffset)
                    {
                        r.status = AppendResult.LOG_CLOSED;
                        r.message = "log " + log + " closed before an fsync covered offsets " + r.firstOffset + ".." + r.lastOffset;
                        complete(command);
                    }
                }
                catch (final Throwable fault)
                {
                    answerFault(command, "the answer of a held append to " + command.partition.log, fault);
                }
            }
        }
        finally
        {
            dropReturned();
        }
        return waiting - awaitingFsync.size();
    }

    /** Removes the held commands that went back, keeping the others in order (no allocation). */
    private void dropReturned()
    {
        final int n = awaitingFsync.size();
        int kept = 0;
        for (int i = 0; i < n; i++)
        {
            final AppendCommand command = awaitingFsync.get(i);
            if (command.held)
            {
                awaitingFsync.set(kept++, command);
            }
        }
        while (awaitingFsync.size() > kept)
        {
            awaitingFsync.remove(awaitingFsync.size() - 1);
        }
    }

    private void complete(final AppendCommand command)
    {
        // marked before the offer: a fault surfacing inside the offer would lose the command, but
        // a command answered twice would corrupt its request and the network thread's count
        inHand = null;
        if (command.answeredPoll == command.polls)
        {
            return; // already sent back (a fault after its answer): never twice
        }
        command.answeredPoll = command.polls;
        command.held = false;
        out[command.networkThread].offer(command); // cannot fail: the return queue holds all a network thread has out
        try
        {
            completion.completed(command.networkThread);
        }
        catch (final Throwable fault)
        {
            // the command is back on its queue; the network thread finds it on its next turn
            faults.survive("telling network thread " + command.networkThread + " of a returned command", fault);
        }
    }

    public void close()
    {
        running = false;
        LockSupport.unpark(thread);
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
