package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.AtomicCounter;

/**
 * The group coordinator's figures, the ones behind Kafka 4.4's {@code kafka.server:type=group-coordinator-metrics} and
 * {@code kafka.coordinator.group:type=GroupMetadataManager} for classic groups: groups per state and committed offsets
 * (gauges, stored by the coordinator's timed refresh), offsets committed, expired and deleted and rebalances completed
 * (counts, added as they happen). Allocated at the start, broker-wide; single writer, the coordinator's agent: release
 * stores, no lock, nothing allocated.
 */
public final class GroupCounters
{
    /** Kafka's classic group states as its metrics' {@code state} tag and its NumGroups* gauges name them. */
    public static final String[] STATES = {"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"};

    /** Counters allocated at the start: one per state and five more. */
    static final int COUNT = STATES.length + 5;

    private final AtomicCounter[] groups = new AtomicCounter[STATES.length];
    private final AtomicCounter offsets;
    private final AtomicCounter commits;
    private final AtomicCounter expired;
    private final AtomicCounter deleted;
    private final AtomicCounter rebalances;

    GroupCounters(final BrokerCounters counters)
    {
        for (int s = 0; s < STATES.length; s++)
        {
            groups[s] = counters.allocate(CounterTypes.GROUPS, -1, s, "groups state=" + STATES[s]);
        }
        offsets = counters.allocate(CounterTypes.OFFSETS, -1, 0, "group offsets");
        commits = counters.allocate(CounterTypes.OFFSET_COMMITS, -1, 0, "group offsets committed");
        expired = counters.allocate(CounterTypes.OFFSETS_EXPIRED, -1, 0, "group offsets expired");
        deleted = counters.allocate(CounterTypes.OFFSETS_DELETED, -1, 0, "group offsets deleted");
        rebalances = counters.allocate(CounterTypes.REBALANCES_COMPLETED, -1, 0, "group rebalances completed");
    }

    /** The groups in state {@code state} ({@link #STATES}' index) now. */
    public void groups(final int state, final long count)
    {
        groups[state].setRelease(count);
    }

    /** The committed offsets held now. */
    public void offsets(final long count)
    {
        offsets.setRelease(count);
    }

    public void committed(final int offsetCount)
    {
        commits.getAndAddRelease(offsetCount);
    }

    public void expired(final int offsetCount)
    {
        expired.getAndAddRelease(offsetCount);
    }

    public void deleted(final int offsetCount)
    {
        deleted.getAndAddRelease(offsetCount);
    }

    public void rebalanceCompleted()
    {
        rebalances.getAndAddRelease(1);
    }
}
