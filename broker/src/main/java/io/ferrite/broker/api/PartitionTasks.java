package io.ferrite.broker.api;

import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Partition;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A request answered by tasks run on the log threads that own its partitions (each the single writer
 * of its partitions' state): one {@link Task} per partition, run between that thread's appends, and
 * the response deferred — its connection only — until every task ran and the last one woke the
 * network thread, or every task not run yet belongs to a log thread that has stopped (and so never
 * will run it: {@link #write} answers those partitions with its storage error). DeleteRecords and
 * DescribeProducers have this shape.
 */
public abstract class PartitionTasks implements PendingResponse
{
    /** The request's version and topic names, in request order (the response's order). */
    protected final short version;
    protected final String[] names;
    private final LogThread[] logThreads;
    private final Runnable waker;
    private final AtomicInteger remaining = new AtomicInteger();
    private final List<Task> tasks = new ArrayList<>();

    /** {@code waker}: the network thread's wake-up, run by the log thread that ran the last task. */
    protected PartitionTasks(final LogThread[] logThreads, final Runnable waker, final short version, final String[] names)
    {
        this.version = version;
        this.names = names;
        this.logThreads = logThreads;
        this.waker = waker;
    }

    /** One partition's work, run on its log thread by {@link #run}; {@link #answered} once it ran. */
    public abstract static class Task implements Runnable
    {
        protected final Partition partition;
        private PartitionTasks request;
        /** Set (release) after what the task answers, read (acquire) by the network thread. */
        private volatile boolean done;

        protected Task(final Partition partition)
        {
            this.partition = partition;
        }

        /** On the partition's log thread: sets what the partition answers. */
        protected abstract void runOnOwner();

        @Override
        public final void run()
        {
            try
            {
                runOnOwner();
            }
            finally
            {
                done = true;
                if (request.remaining.decrementAndGet() == 0)
                {
                    request.waker.run();
                }
            }
        }

        /** Whether what it answers may be read: it ran, or was never sent (no partition: answered by the network thread). */
        public final boolean answered()
        {
            return partition == null || done;
        }
    }

    /** Adds a partition's task (before {@link #start}). */
    public final void add(final Task task)
    {
        task.request = this;
        tasks.add(task);
    }

    /**
     * On the network thread: sends every task to its log thread and defers the response to them, or,
     * with none added, writes it at once; returns as {@link RequestHandler#handle}.
     */
    public final int start(final Connection connection, final MutableDirectBuffer out, final int outOffset)
    {
        if (tasks.isEmpty())
        {
            return write(out, outOffset);
        }
        remaining.set(tasks.size());
        connection.defer(this);
        for (final Task task : tasks)
        {
            logThreads[task.partition.owner].execute(task);
        }
        return RequestHandler.DEFERRED;
    }

    /** Writes the response: a task not {@link Task#answered} belongs to a stopped log thread. */
    protected abstract int write(MutableDirectBuffer out, int outOffset);

    @Override
    public final int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        return remaining.get() == 0 || onlyStoppedLeft() ? write(connection.out, outOffset) : NOT_READY;
    }

    private boolean onlyStoppedLeft()
    {
        for (final Task task : tasks)
        {
            if (!task.done && !logThreads[task.partition.owner].stopped())
            {
                return false;
            }
        }
        return true;
    }

    @Override
    public final long deadlineMs()
    {
        return Long.MAX_VALUE; // each task ends, or its log thread stops
    }
}
