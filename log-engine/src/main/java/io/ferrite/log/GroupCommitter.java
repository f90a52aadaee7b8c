package io.ferrite.log;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Group commit for one disk: appenders on any partition of the disk ask for a flush; this thread
 * takes every request waiting at that moment and fsyncs each log they name once, then tells the
 * durability listener how far each log is durable. One round of fsyncs thus covers all appends
 * that arrived while the previous round ran — the cost of an fsync is shared, not paid per append.
 *
 * <p>Appenders only enqueue (a log is queued at most once at a time) and unpark this thread.
 */
final class GroupCommitter implements AutoCloseable, Runnable
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupCommitter.class);
    /** Logs waiting for a flush; a full queue falls back to flushing every log of the disk. */
    private static final int QUEUE_CAPACITY = 4096;
    /** Park between checks when idle; requests unpark at once, this only bounds a missed wake-up. */
    private static final long IDLE_PARK_NS = 10_000_000L;

    private final ManyToOneConcurrentArrayQueue<PartitionLog> requests = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final List<PartitionLog> round = new ArrayList<>();
    private final java.util.function.Supplier<Iterable<PartitionLog>> allLogs;
    private final Thread thread;
    private volatile boolean overflowed;
    private volatile boolean running = true;
    private volatile long rounds;

    GroupCommitter(final String name, final java.util.function.Supplier<Iterable<PartitionLog>> allLogs)
    {
        this.allLogs = allLogs;
        this.thread = new Thread(this, name);
        this.thread.setDaemon(true);
    }

    void start()
    {
        thread.start();
    }

    void request(final PartitionLog log)
    {
        if (!requests.offer(log))
        {
            overflowed = true;
        }
        LockSupport.unpark(thread);
    }

    /** Rounds of fsync done (for tests and metrics). */
    long rounds()
    {
        return rounds;
    }

    @Override
    public void run()
    {
        while (running)
        {
            round.clear();
            requests.drainTo(round, QUEUE_CAPACITY);
            if (overflowed)
            {
                overflowed = false;
                for (final PartitionLog log : allLogs.get())
                {
                    round.add(log);
                }
            }
            if (round.isEmpty())
            {
                LockSupport.parkNanos(this, IDLE_PARK_NS);
                continue;
            }
            for (final PartitionLog log : round)
            {
                if (!log.isClosed())
                {
                    try
                    {
                        log.flushQuietly();
                    }
                    catch (final RuntimeException ex)
                    {
                        LOG.error("flush of {} failed", log, ex);
                    }
                }
            }
            rounds++;
        }
    }

    @Override
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
