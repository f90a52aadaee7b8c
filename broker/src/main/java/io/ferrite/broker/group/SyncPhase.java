package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.group.GroupCoordinator.SyncWaiter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * The sync phase of Kafka's classic state machine: SyncGroup, and the leader's assignment that makes
 * a CompletingRebalance group Stable once its metadata is written. Not thread-safe: every call comes
 * on the coordinator's agent ({@link CoordinatorAgent}).
 */
final class SyncPhase
{
    // under the coordinator's name, where this was logged before the coordinator was split
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);

    private final Map<String, Group> groups;
    private final CoordinatorTopic store;
    private final JoinPhase joins;
    private final CoordinatorClock clock;
    private final GroupMetrics metrics;

    SyncPhase(final Map<String, Group> groups, final CoordinatorTopic store, final JoinPhase joins, final CoordinatorClock clock,
        final GroupMetrics metrics)
    {
        this.groups = groups;
        this.store = store;
        this.joins = joins;
        this.clock = clock;
        this.metrics = metrics;
    }


    /** SyncGroup; done at once unless the group waits for its leader's assignment. */
    SyncWaiter sync(final String groupId, final int generationId, final String memberId,
        final String groupInstanceId, final String protocolType, final String protocolName, final Map<String, byte[]> assignments)
    {
        final long now = clock.nowMs();
        final SyncWaiter waiter = new SyncWaiter();
        if (groupId == null || groupId.isEmpty())
        {
            return waiter.fail(Errors.INVALID_GROUP_ID);
        }
        final Group group = groups.get(groupId);
        if (group == null || group.is(Group.State.DEAD) || group.is(Group.State.EMPTY))
        {
            return waiter.fail(Errors.UNKNOWN_MEMBER_ID);
        }
        final short fenced = group.checkStatic(memberId, groupInstanceId);
        if (fenced != Errors.NONE)
        {
            return waiter.fail(fenced);
        }
        final Member member = group.members.get(memberId);
        if (member == null)
        {
            return waiter.fail(Errors.UNKNOWN_MEMBER_ID);
        }
        if (generationId != group.generationId)
        {
            return waiter.fail(Errors.ILLEGAL_GENERATION);
        }
        if ((protocolType != null && !protocolType.equals(group.protocolType)) ||
            (protocolName != null && !protocolName.equals(group.protocolName)))
        {
            return waiter.fail(Errors.INCONSISTENT_GROUP_PROTOCOL);
        }
        waiter.protocolType = group.protocolType;
        waiter.protocolName = group.protocolName;
        member.sessionDeadline = now + member.sessionTimeoutMs;
        switch (group.state)
        {
            case PREPARING_REBALANCE:
                return waiter.fail(Errors.REBALANCE_IN_PROGRESS);
            case COMPLETING_REBALANCE:
                if (member.awaitingSync != null)
                {
                    // the member's earlier SyncGroup (its client timed out and sent another, or a leader
                    // retried): Kafka 4.4 replaces that pending answer and never completes it; ended
                    // here (the client rejoins if it still reads it), or its call would wait on the agent forever
                    member.awaitingSync.fail(Errors.REBALANCE_IN_PROGRESS);
                }
                member.awaitingSync = waiter;
                if (memberId.equals(group.leaderId))
                {
                    completeSync(group, assignments, now);
                }
                return waiter;
            case STABLE:
                waiter.assignment = member.assignment;
                waiter.done = true;
                return waiter;
            default:
                return waiter.fail(Errors.UNKNOWN_MEMBER_ID);
        }
    }

    /**
     * The leader's assignment: the group's metadata is written first. As in Kafka 4.4, when that write
     * fails the members waiting in SyncGroup get its error, their assignments stay empty and the group
     * rebalances; only a written sync makes the group Stable. Until its log thread answers, the group
     * stays CompletingRebalance and the members' SyncGroups wait (a leader's repeated SyncGroup writes
     * nothing more); a rebalance meanwhile has failed them already and the answer is then dropped.
     */
    private void completeSync(final Group group, final Map<String, byte[]> assignments, final long now)
    {
        final int generation = group.generationId;
        if (group.assignmentWriting == generation)
        {
            return;
        }
        group.assignmentWriting = generation;
        group.assignmentDeadline = now + AwaitingWrites.TIMEOUT_MS;
        store.write(group.groupId, GroupRecords.groupKey(group.groupId), GroupRecords.groupValue(group),
            error -> synced(group, generation, assignments, error));
    }

    /**
     * The timer's check of a leader's assignment write still unanswered after {@link
     * AwaitingWrites#TIMEOUT_MS}: Kafka 4.4 times the SyncGroup's write out after
     * offsets.commit.timeout.ms, answers the waiting members COORDINATOR_NOT_AVAILABLE and rebalances;
     * so here, and the write's own answer, when it comes, is dropped (the group moved on).
     */
    void expireAssignmentWrite(final Group group, final long now)
    {
        if (group.is(Group.State.COMPLETING_REBALANCE) && group.assignmentWriting == group.generationId &&
            now >= group.assignmentDeadline)
        {
            LOG.warn("storing the assignment of group {} timed out after {} ms", group.groupId, AwaitingWrites.TIMEOUT_MS);
            synced(group, group.generationId, Map.of(), Errors.COORDINATOR_NOT_AVAILABLE);
        }
    }

    private void synced(final Group group, final int generation, final Map<String, byte[]> assignments, final short error)
    {
        if (group.assignmentWriting == generation)
        {
            group.assignmentWriting = -1;
        }
        if (groups.get(group.groupId) != group || group.generationId != generation || !group.is(Group.State.COMPLETING_REBALANCE))
        {
            return; // the group moved on while the write was on its way: its waiters were answered by that
        }
        final long now = clock.nowMs();
        for (final Member m : group.members.values())
        {
            final byte[] a = error == Errors.NONE ? assignments.get(m.memberId) : null;
            m.assignment = a == null ? new byte[0] : a;
            if (m.awaitingSync != null)
            {
                m.awaitingSync.assignment = m.assignment;
                m.awaitingSync.error = error;
                m.awaitingSync.done = true;
                m.awaitingSync = null;
            }
        }
        if (error == Errors.NONE)
        {
            group.transition(Group.State.STABLE, clock.wallMs());
            metrics.rebalanceCompleted(); // as Kafka's CompletedRebalances: the assignment stored, the group Stable
        }
        else
        {
            LOG.info("rebalancing group {}: storing its assignment failed ({})", group.groupId, error);
            joins.prepareRebalance(group, now);
        }
    }
}
