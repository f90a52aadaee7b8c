package io.ferrite.log;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Flushes the segments a roll sealed (see {@link LogEnvironment#flushInBackground}), on a thread apart
 * from the {@link LogScheduler}: under a flat-out writer one such fsync can take seconds, and
 * retention and checkpoints must not wait behind it ({@code RolledFlushTest}).
 *
 * <p>An {@link Agent} fed by a many-to-one queue: a writer that rolls queues its log and unparks the
 * agent; each duty cycle takes up to {@link #LOGS_PER_CYCLE} logs and flushes each once (a log rolled
 * twice meanwhile is flushed once: a flush covers every sealed segment not yet flushed), the
 * producer snapshots its rolls took forced first (their names made durable by the flush's fsync of
 * the directory, which follows). A full queue
 * makes the next cycle flush the rolled segments of every log instead, so no roll's flush is lost.
 */
final class RolledFlusher implements Agent
{
    /** Park between cycles when idle; a roll unparks at once, this only bounds a missed wake-up. */
    static final long IDLE_PARK_NS = 10_000_000L;
    /**
     * Logs asked for, bounded per cycle: one flush can take seconds, and a stop waits for the cycle in
     * hand, so a cycle takes a handful of logs, not the whole queue.
     */
    static final int LOGS_PER_CYCLE = 16;
    /** Rolls waiting: one per roll, so 1024 covers a burst of small segments rolling on many partitions. */
    private static final int QUEUE_CAPACITY = 1024;

    private final ManyToOneConcurrentArrayQueue<PartitionLog> requests = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final List<PartitionLog> round = new ArrayList<>(LOGS_PER_CYCLE);
    private final Supplier<PartitionLog[]> allLogs;
    private final AgentErrors errors;
    private volatile Thread agentThread;
    private volatile boolean overflowed;

    RolledFlusher(final Supplier<PartitionLog[]> allLogs, final AgentErrors errors)
    {
        this.allLogs = allLogs;
        this.errors = errors;
    }

    /** From a writer that rolled: the log's sealed segments are flushed soon. */
    void request(final PartitionLog log)
    {
        if (!requests.offer(log))
        {
            overflowed = true;
        }
        LockSupport.unpark(agentThread);
    }

    @Override
    public void onStart()
    {
        agentThread = Thread.currentThread();
    }

    /** Flushes the rolled segments of up to {@link #LOGS_PER_CYCLE} logs asked for. Returns how many it flushed. */
    @Override
    public int doWork()
    {
        if (overflowed)
        {
            overflowed = false;
            int flushed = 0;
            for (final PartitionLog log : allLogs.get())
            {
                flushed += flush(log);
            }
            return flushed;
        }
        round.clear();
        PartitionLog log;
        while (round.size() < LOGS_PER_CYCLE && (log = requests.poll()) != null)
        {
            if (!round.contains(log))
            {
                round.add(log);
            }
        }
        int flushed = 0;
        for (int i = 0; i < round.size(); i++)
        {
            flushed += flush(round.get(i));
        }
        round.clear();
        return flushed;
    }

    /**
     * An Error is caught too (a SIGBUS on a mapping is an InternalError): Agrona's runner would end the
     * thread on one, and every later roll's flush with it.
     */
    private int flush(final PartitionLog log)
    {
        if (log.isClosed())
        {
            return 0;
        }
        try
        {
            log.forceRolledSnapshots(); // first, as Kafka's roll flushes its producer snapshot before the segments
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            errors.onError(log, ex); // the segments are flushed all the same
        }
        try
        {
            log.flushQuietly(true);
        }
        catch (final RuntimeException | Error ex)
        {
            errors.onError(log, ex);
        }
        return 1;
    }

    @Override
    public String roleName()
    {
        return "ferrite-rolled-flusher";
    }
}
