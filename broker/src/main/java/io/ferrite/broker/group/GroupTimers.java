package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Map;

/**
 * The coordinator's timed work, run by its agent ({@link CoordinatorAgent}) every {@value CoordinatorAgent#TICK_MS} ms: it
 * expires the member ids given out with MEMBER_ID_REQUIRED and never used, completes the join phases
 * whose rebalance deadline (or initial delay) has passed, removes members whose session ran out,
 * and every {@code offsets.retention.check.interval.ms} expires old offsets.
 */
final class GroupTimers
{
    // under the coordinator's name, where this was logged before the coordinator was split
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

    private final Map<String, Group> groups;
    private final TxnOffsets pending;
    private final GroupCoordinator.Settings settings;
    private final CoordinatorTopic store;
    private final JoinPhase joins;
    private final SyncPhase syncs;
    private final Membership members;
    private final CoordinatorClock clock;
    private final GroupMetrics metrics;
    private long nextRetentionCheck;

    GroupTimers(final Map<String, Group> groups, final TxnOffsets pending, final GroupCoordinator.Settings settings,
        final CoordinatorTopic store, final JoinPhase joins, final SyncPhase syncs, final Membership members, final CoordinatorClock clock,
        final GroupMetrics metrics)
    {
        this.metrics = metrics;
        this.clock = clock;
        this.groups = groups;
        this.pending = pending;
        this.settings = settings;
        this.store = store;
        this.joins = joins;
        this.syncs = syncs;
        this.members = members;
    }

    /** Sets the first retention check (before the first {@link #check}); {@code now} as {@link CoordinatorClock#nowMs}. */
    void start(final long now)
    {
        nextRetentionCheck = now + settings.retentionCheckIntervalMs();
    }

    /** Session expiries, rebalance deadlines, the initial delay, and now and then offset retention ({@code now}: {@link CoordinatorClock#nowMs}). */
    void check(final long now)
    {
        for (final Group group : new ArrayList<>(groups.values()))
        {
            group.pendingMembers.values().removeIf(deadline -> deadline < now);
            if (group.is(Group.State.PREPARING_REBALANCE))
            {
                if (now >= group.rebalanceDeadline && group.initialDelayUntil <= now)
                {
                    joins.completeJoin(group, now);
                    continue;
                }
                joins.tryCompleteJoin(group, now);
            }
            syncs.expireAssignmentWrite(group, now);
            for (final Member m : new ArrayList<>(group.members.values()))
            {
                if (m.awaitingJoin == null && m.awaitingSync == null && now > m.sessionDeadline &&
                    group.members.containsKey(m.memberId))
                {
                    LOG.info("member {} of group {} expired after {} ms without a heartbeat", m.memberId, group.groupId,
                        m.sessionTimeoutMs);
                    members.removeMember(group, m, now);
                }
            }
        }
        if (now >= nextRetentionCheck)
        {
            nextRetentionCheck = now + settings.retentionCheckIntervalMs();
            // retention counts from wall times (commit timestamps, the group's state timestamp)
            GroupDeletions.expireOffsets(groups, pending, store, settings.offsetsRetentionMs(), clock.wallMs(), metrics);
        }
    }
}
