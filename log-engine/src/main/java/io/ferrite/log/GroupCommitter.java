package io.ferrite.log;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;

/**
 * Group commit for one disk: appenders on any partition of the disk ask for a flush; each duty
 * cycle takes every request waiting at that moment and fsyncs each log they name once, then tells
 * the durability listener how far each log is durable. One round of fsyncs thus covers all appends
 * that arrived while the previous round ran — the cost of an fsync is shared, not paid per append.
 *
 * <p>An {@link Agent}: {@link LogManager} runs it on a thread of its own ({@link LogAgents}); a test
 * steps it with an {@code AgentInvoker}. Appenders only enqueue (a log is queued at most once at a
 * time) and unpark the agent's thread, which otherwise idles {@link #IDLE_PARK_NS} between cycles.
 */
final class GroupCommitter implements Agent
{
    /** Logs waiting for a flush; a full queue falls back to flushing every log of the disk. */
    private static final int QUEUE_CAPACITY = 4096;
    /** Park between cycles when idle; requests unpark at once, this only bounds a missed wake-up. */
    static final long IDLE_PARK_NS = 10_000_000L;

    private final String name;
    private final ManyToOneConcurrentArrayQueue<PartitionLog> requests = new ManyToOneConcurrentArrayQueue<>(QUEUE_CAPACITY);
    private final List<PartitionLog> round = new ArrayList<>();
    private final java.util.function.Supplier<Iterable<PartitionLog>> allLogs;
    /** The thread running the cycles, for appenders to wake (null before it starts: its first cycle drains). */
    private volatile Thread agentThread;
    private volatile boolean overflowed;
    private volatile long rounds;

    private final AgentErrors errors;

    GroupCommitter(final String name, final java.util.function.Supplier<Iterable<PartitionLog>> allLogs, final AgentErrors errors)
    {
        this.name = name;
        this.allLogs = allLogs;
        this.errors = errors;
    }

    /** Its error handler, for its runner: counts every failure, logs each distinct one once. */
    AgentErrors errors()
    {
        return errors;
    }

    void request(final PartitionLog log)
    {
        if (!requests.offer(log))
        {
            overflowed = true;
        }
        LockSupport.unpark(agentThread);
    }

    /** Rounds of fsync done (for tests and metrics). */
    long rounds()
    {
        return rounds;
    }

    @Override
    public void onStart()
    {
        agentThread = Thread.currentThread();
    }

    /** One round: every log asked for so far, flushed once. Returns how many logs it flushed (0: idle). */
    @Override
    public int doWork()
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
            return 0;
        }
        for (final PartitionLog log : round)
        {
            if (!log.isClosed())
            {
                try
                {
                    log.flushQuietly(false);
                }
                catch (final RuntimeException | Error ex)
                {
                    // one log's failure must not hold back the others' durability; an Error is caught
                    // here too, since Agrona's AgentRunner ends its thread on one, and with it group commit
                    errors.onError(log, ex);
                }
            }
        }
        rounds++;
        return round.size();
    }

    @Override
    public String roleName()
    {
        return name;
    }
}
