package io.ferrite.broker.group;

import io.ferrite.broker.metrics.GroupCounters;
import io.ferrite.broker.metrics.LagCounters;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * What the coordinator's agent writes into the broker's counters about its groups ({@link GroupCounters}, {@link
 * GroupLag}): the events as they happen (offsets committed, expired, deleted; rebalances completed) and, every
 * {@value #REFRESH_MS} ms, the gauges (groups per state, offsets held, every group's lag). Agent only; without counters
 * (a coordinator made without a broker, in tests) it does nothing. A failure of the refresh is caught, logged once and
 * counted ({@link #failures}): metrics never stop the agent's other timers (the transaction coordinator's tick runs
 * after the group coordinator's) nor a commit's completion.
 */
final class GroupMetrics
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupMetrics.class);

    /**
     * Every second: ferrite-stat's refresh, and well under Prometheus' default 15 s scrape; a refresh walks every group
     * and offset, a map lookup and two reads per offset (100 000 offsets: a few ms, on the agent, once a second).
     */
    static final long REFRESH_MS = 1000;

    private final Map<String, Group> groups;
    private final GroupLag lag;
    /** {@link GroupCounters#STATES}' index of each {@link Group.State} (by ordinal). */
    private final int[] stateIndex = new int[Group.State.values().length];
    private final long[] states = new long[GroupCounters.STATES.length];
    private final BiConsumer<String, Group> counting = (id, group) -> count(group);
    private GroupCounters counters;
    private long offsets;
    private long nextRefreshMs;
    private long failures;

    GroupMetrics(final Map<String, Group> groups, final io.ferrite.broker.topic.TopicRegistry topics)
    {
        this.groups = groups;
        this.lag = new GroupLag(groups, topics);
        for (final Group.State s : Group.State.values())
        {
            stateIndex[s.ordinal()] = List.of(GroupCounters.STATES).indexOf(s.label);
        }
    }

    /** Where the figures go (before the agent starts). */
    void counters(final LagCounters lagCounters, final GroupCounters groupCounters)
    {
        lag.counters(lagCounters);
        this.counters = groupCounters;
    }

    /** Each tick of the agent ({@code nowMs} monotonic): the gauges and lags every {@link #REFRESH_MS}. */
    void tick(final long nowMs)
    {
        if (counters == null || nowMs < nextRefreshMs)
        {
            return;
        }
        nextRefreshMs = nowMs + REFRESH_MS;
        try
        {
            Arrays.fill(states, 0);
            offsets = 0;
            groups.forEach(counting);
            for (int s = 0; s < states.length; s++)
            {
                counters.groups(s, states[s]);
            }
            counters.offsets(offsets);
            lag.refreshAll();
        }
        catch (final RuntimeException e)
        {
            failed(e);
        }
    }

    /** Refreshes that threw (agent only; for tests). */
    long failures()
    {
        return failures;
    }

    private void failed(final RuntimeException e)
    {
        if (failures++ == 0)
        {
            LOG.error("the consumer groups' metrics refresh failed (logged the first time only; the figures may be stale)", e);
        }
    }

    private void count(final Group group)
    {
        states[stateIndex[group.state.ordinal()]]++;
        offsets += group.offsets.size();
    }

    /** A commit of {@code offsetCount} offsets of {@code groupId} was stored. */
    void committed(final String groupId, final int offsetCount)
    {
        if (counters != null)
        {
            try
            {
                counters.committed(offsetCount);
                lag.committed(groupId);
            }
            catch (final RuntimeException e)
            {
                failed(e);
            }
        }
    }

    /**
     * A TxnOffsetCommit of {@code offsetCount} offsets is written: counted in offset-commit-rate/-count as Kafka 4.4's
     * {@code commitTransactionalOffset} counts them, at the request, whether the transaction commits or aborts (the lag
     * follows at the next refresh, once a commit marker made them the group's).
     */
    void txnCommitted(final int offsetCount)
    {
        if (counters != null)
        {
            counters.committed(offsetCount);
        }
    }

    /** {@code offsetCount} offsets expired (their tombstones written). */
    void expired(final int offsetCount)
    {
        if (counters != null)
        {
            counters.expired(offsetCount);
        }
    }

    /** {@code offsetCount} offsets deleted by OffsetDelete (their tombstones written). */
    void deleted(final int offsetCount)
    {
        if (counters != null)
        {
            counters.deleted(offsetCount);
        }
    }

    /** A group's rebalance completed: its leader's assignment stored, the group Stable. */
    void rebalanceCompleted()
    {
        if (counters != null)
        {
            counters.rebalanceCompleted();
        }
    }
}
