package io.ferrite.log;

import org.agrona.concurrent.Agent;

import java.util.function.Supplier;

/**
 * Keeps the active segments' next pages allocated and touched ahead of their writers (mapped
 * strategy), so that an append is a memory copy, not a page fault or a block allocation. Why a
 * thread and not the writer: allocating 1 MiB costs around a millisecond, which is the tail
 * latency an append would otherwise see once per MiB.
 *
 * <p>An {@link Agent}: one cycle is one look at every log; {@link LogBackgroundWork} runs it,
 * parking {@link #PERIOD_NS} between cycles.
 */
final class Preallocator implements Agent
{
    /** How often the preallocator looks: 1 MiB of lookahead lasts several ms even at 200 MB/s. */
    static final long PERIOD_NS = 1_000_000L;

    /**
     * Index files made ahead of their first entry per cycle ({@link Segment#makeIndexFilesAhead}): a
     * creation can cost a millisecond, and many partitions reaching their first entry together must
     * not hold back every log's lookahead; what this does not reach in time, the writer makes itself.
     */
    static final int FILE_CREATIONS_PER_CYCLE = 2;

    /** The logs as an array: iterating it allocates nothing (the map's iterators would). */
    private final Supplier<PartitionLog[]> logs;
    private final AgentErrors errors;

    Preallocator(final Supplier<PartitionLog[]> logs, final AgentErrors errors)
    {
        this.logs = logs;
        this.errors = errors;
    }

    /**
     * One look at every log. Returns 0 whatever it did: the pace is the period, not the work (how
     * much a log gets ahead follows what its writer wrote between two looks), so every cycle ends in
     * the idle strategy's park.
     */
    @Override
    public int doWork()
    {
        int creations = FILE_CREATIONS_PER_CYCLE;
        for (final PartitionLog log : logs.get())
        {
            try
            {
                log.preallocate();
                if (creations > 0)
                {
                    creations -= log.makeIndexFilesAhead();
                }
            }
            catch (final RuntimeException | InternalError ex)
            {
                // a SIGBUS touching a page (a file cut under its mapping) is an InternalError: that
                // log's writer meets the fault itself; the agent goes on for every other log. A
                // failure each millisecond is counted each time and logged once (AgentErrors)
                errors.onError(log, ex);
            }
        }
        return 0;
    }

    @Override
    public String roleName()
    {
        return "ferrite-preallocator";
    }
}
