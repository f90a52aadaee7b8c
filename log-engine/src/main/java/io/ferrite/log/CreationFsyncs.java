package io.ferrite.log;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

/**
 * The last step of a creation batch ({@link LogCreation}) for each new partition, given as a
 * {@link PartitionFiles}: its files fsynced or written, then its directory fsynced. Two or three
 * fsyncs a partition, which a file system serves far faster several at a time than one after another
 * (ext4 commits the fsyncs waiting together in one journal commit): a batch of more than one
 * partition runs them on up to {@value #THREADS} threads of the log manager's (one instance per
 * manager, used by one creation at a time, as {@code createLogs} is; its threads started with the
 * first batch, ended after {@value #KEEP_ALIVE_S} s without one and by {@link #close}: a thread per
 * partition of every batch, started and ended, cost a thread-local allocation buffer each — 10 000
 * partitions left 165 MB more of the heap touched). Each thread only touches the directory of the
 * partition it finishes, which nothing else sees before the batch is published. Returns, or throws
 * the first failure, only once every step it started has ended, so that a failed batch is never
 * removed under a step still writing into it.
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

    /**
     * Runs {@code step} and the directory fsync for every partition of {@code made}. An interrupt of
     * the caller's thread meanwhile is taken and noted in {@code interrupted[0]}, thrown or not: the
     * batch's own fsyncs after this (or its removal's) would fail on it; the caller restores it when
     * it is done.
     */
    void finish(final PartitionLog[] made, final int from, final PartitionFiles step, final boolean[] interrupted)
        throws IOException
    {
        if (made.length <= 1)
        {
            for (int i = 0; i < made.length; i++)
            {
                finishOne(made[i], from + i, step);
            }
            return;
        }
        final List<Future<Void>> steps = new ArrayList<>(made.length);
        Throwable notStarted = null;
        try
        {
            for (int i = 0; i < made.length; i++)
            {
                final PartitionLog log = made[i];
                final int partition = from + i;
                steps.add(pool.submit(() ->
                {
                    finishOne(log, partition, step);
                    return null;
                }));
            }
        }
        catch (final Throwable ex)
        {
            notStarted = ex; // a thread that could not be started (a limit on threads): what started is waited for
        }
        awaitAll(steps, notStarted, interrupted);
    }

    private static void finishOne(final PartitionLog log, final int partition, final PartitionFiles step) throws IOException
    {
        step.write(log.dir(), partition);
        DurableFile.fsyncDirectory(log.dir());
    }

    /**
     * Waits for every step, through interrupts (noted in {@code interrupted[0]}); throws the first
     * failure, the others suppressed, an {@link IOException} for anything but an unchecked one.
     */
    private static void awaitAll(final List<Future<Void>> steps, final Throwable notStarted, final boolean[] interrupted)
        throws IOException
    {
        Throwable first = notStarted;
        for (final Future<Void> step : steps)
        {
            while (true)
            {
                try
                {
                    step.get();
                    break;
                }
                catch (final InterruptedException ex)
                {
                    interrupted[0] = true;
                }
                catch (final ExecutionException ex)
                {
                    if (first == null)
                    {
                        first = ex.getCause();
                    }
                    else
                    {
                        first.addSuppressed(ex.getCause());
                    }
                    break;
                }
            }
        }
        if (first instanceof IOException io)
        {
            throw io;
        }
        if (first instanceof RuntimeException runtime)
        {
            throw runtime;
        }
        if (first != null)
        {
            throw new IOException("a partition's creation did not finish: " + first, first);
        }
    }
}
