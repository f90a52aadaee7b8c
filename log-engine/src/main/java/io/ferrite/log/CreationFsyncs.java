package io.ferrite.log;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The steps of a creation batch ({@link LogCreation}) run for every new partition at once: its directory made, its log
 * opened and its files fsynced or written (a {@link PartitionFiles}), then, once all are, its directory fsynced. A file
 * system serves these far faster several at a time than one after another (ext4 commits the fsyncs waiting together in
 * one journal commit, a directory whose entries a commit already covered costs next to nothing, and a file creation
 * that waits behind a commit waits with the others, not before them), so a batch of more than one partition runs them on up
 * to {@value #THREADS} threads of the log manager's (one instance per manager, used by one creation at a time, as
 * {@code createLogs} is; its threads started with the first batch, ended after {@value #KEEP_ALIVE_S} s without one
 * and by {@link #close}: a thread per partition of every batch, started and ended, cost a thread-local allocation
 * buffer each — 10 000 partitions left 165 MB more of the heap touched). Each step only touches the directory of its
 * partition, which nothing else sees before the batch is published. {@link #run} returns only once every step it
 * started has ended, so that a failed topic is never removed under a step still writing into it.
 */
final class CreationFsyncs implements AutoCloseable
{
    /**
     * How many partitions are finished at a time: on ext4 under load, 200 topics of 10 partitions took
     * 2.8-4.4 ms a partition one at a time, 2.3-2.4 ms with 8 threads, 1.7-2.1 ms with 16.
     */
    static final int THREADS = 16;
    /** How long an idle thread waits for the next batch before it ends. */
    static final long KEEP_ALIVE_S = 30;

    private final java.util.concurrent.ThreadPoolExecutor pool = new java.util.concurrent.ThreadPoolExecutor(THREADS, THREADS,
        KEEP_ALIVE_S, java.util.concurrent.TimeUnit.SECONDS, new java.util.concurrent.LinkedBlockingQueue<>(), task ->
        {
            final Thread thread = new Thread(task, "ferrite-creation-fsync");
            thread.setDaemon(true);
            return thread;
        });

    CreationFsyncs()
    {
        pool.allowCoreThreadTimeOut(true);
    }

    /** Ends the threads (the manager's close). */
    @Override
    public void close()
    {
        pool.shutdown();
    }

    /** One step of a batch, for item {@code i}. */
    @FunctionalInterface
    interface Step
    {
        void run(int i) throws IOException;
    }

    /**
     * Runs {@code step} for items 0 to {@code count - 1}, on the threads when more than one, and returns once every
     * one started has ended: each item's failure (null where it ended well; an item never started, when a thread could
     * not be, fails with that cause). An interrupt of the caller's thread meanwhile is taken and noted in
     * {@code interrupted[0]}: the batch's own fsyncs after this (or its removal's) would fail on it; the caller restores
     * it when it is done.
     */
    Exception[] run(final int count, final Step step, final boolean[] interrupted)
    {
        if (count == 1)
        {
            final Exception[] failures = new Exception[1];
            failures[0] = failureOf(() ->
            {
                step.run(0);
                return null;
            });
            return failures;
        }
        return runOnThreads(count, step, interrupted);
    }

    /**
     * As {@link #run}, but on the threads even for one item, so that an interrupt of the caller's thread meanwhile is
     * noted rather than failing the item (a log directory's fsync, whose failure fails every topic of the batch).
     */
    Exception[] runOnThreads(final int count, final Step step, final boolean[] interrupted)
    {
        final Exception[] failures = new Exception[count];
        final List<Future<Void>> steps = new ArrayList<>(count);
        try
        {
            for (int i = 0; i < count; i++)
            {
                final int item = i;
                steps.add(pool.submit(() ->
                {
                    step.run(item);
                    return null;
                }));
            }
        }
        catch (final Throwable ex) // a thread that could not be started (a limit on threads): what started is waited for
        {
            for (int i = steps.size(); i < count; i++)
            {
                failures[i] = asException(ex);
            }
        }
        awaitAll(steps, failures, interrupted);
        return failures;
    }

    private static Exception failureOf(final Callable<Void> step)
    {
        try
        {
            step.call();
            return null;
        }
        catch (final Throwable ex)
        {
            return asException(ex);
        }
    }

    /** An IOException for anything but an Exception (an Error of a step: the creation fails, the agent goes on). */
    private static Exception asException(final Throwable ex)
    {
        return ex instanceof Exception e ? e : new IOException("a partition's creation did not finish: " + ex, ex);
    }

    /** Waits for every step, through interrupts (noted in {@code interrupted[0]}); each one's failure into {@code failures}. */
    private static void awaitAll(final List<Future<Void>> steps, final Exception[] failures, final boolean[] interrupted)
    {
        for (int i = 0; i < steps.size(); i++)
        {
            while (true)
            {
                try
                {
                    steps.get(i).get();
                    break;
                }
                catch (final InterruptedException ex)
                {
                    interrupted[0] = true;
                }
                catch (final ExecutionException ex)
                {
                    failures[i] = asException(ex.getCause());
                    break;
                }
            }
        }
    }
}
