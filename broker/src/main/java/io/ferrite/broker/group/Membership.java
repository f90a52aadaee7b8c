package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.group.GroupCoordinator.MemberIdentity;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Members staying and going: Heartbeat, LeaveGroup (one member or a batch, static members by
 * instance id), and the removal of a member that left or expired, which rebalances its group. Not
 * thread-safe: every call comes on the coordinator's agent ({@link CoordinatorAgent}).
 */
final class Membership
{
    private final Map<String, Group> groups;
    private final JoinPhase joins;
    private final CoordinatorClock clock;

    Membership(final Map<String, Group> groups, final JoinPhase joins, final CoordinatorClock clock)
    {
        this.groups = groups;
        this.joins = joins;
        this.clock = clock;
    }

    /** Heartbeat: the member's session renewed, REBALANCE_IN_PROGRESS while the group rebalances. */
    short heartbeat(final String groupId, final String memberId, final String groupInstanceId,
        final int generationId)
    {
        if (groupId == null || groupId.isEmpty())
        {
            return Errors.INVALID_GROUP_ID;
        }
        final Group group = groups.get(groupId);
        if (group == null || group.is(Group.State.DEAD) || group.is(Group.State.EMPTY))
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        final short fenced = group.checkStatic(memberId, groupInstanceId);
        if (fenced != Errors.NONE)
        {
            return fenced;
        }
        final Member member = group.members.get(memberId);
        if (member == null)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        member.sessionDeadline = clock.nowMs() + member.sessionTimeoutMs;
        if (group.is(Group.State.PREPARING_REBALANCE) || group.is(Group.State.COMPLETING_REBALANCE))
        {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        return generationId == group.generationId ? Errors.NONE : Errors.ILLEGAL_GENERATION;
    }

    /** LeaveGroup: one error per member named (the request's top-level error is NONE unless the group is unknown). */
    List<Short> leave(final String groupId, final List<MemberIdentity> leaving)
    {
        final long now = clock.nowMs();
        final List<Short> results = new ArrayList<>();
        final Group group = groups.get(groupId);
        for (final MemberIdentity who : leaving)
        {
            if (group == null || group.is(Group.State.DEAD))
            {
                results.add(Errors.UNKNOWN_MEMBER_ID);
                continue;
            }
            String memberId = who.memberId();
            if (who.groupInstanceId() != null)
            {
                final String registered = group.staticMembers.get(who.groupInstanceId());
                if (registered == null)
                {
                    results.add(Errors.UNKNOWN_MEMBER_ID);
                    continue;
                }
                if (memberId != null && !memberId.isEmpty() && !memberId.equals(registered))
                {
                    results.add(Errors.FENCED_INSTANCE_ID);
                    continue;
                }
                memberId = registered;
            }
            if (group.pendingMembers.remove(memberId) != null)
            {
                results.add(Errors.NONE);
                continue;
            }
            final Member member = group.members.get(memberId);
            if (member == null)
            {
                results.add(Errors.UNKNOWN_MEMBER_ID);
                continue;
            }
            removeMember(group, member, now);
            results.add(Errors.NONE);
        }
        return results;
    }

    /** A member leaves or expires: its waiting requests fail and the group rebalances without it. */
    void removeMember(final Group group, final Member member, final long now)
    {
        group.members.remove(member.memberId);
        if (member.groupInstanceId != null)
        {
            group.staticMembers.remove(member.groupInstanceId);
        }
        if (member.awaitingJoin != null)
        {
            member.awaitingJoin.fail(Errors.UNKNOWN_MEMBER_ID, member.memberId);
        }
        if (member.awaitingSync != null)
        {
            member.awaitingSync.fail(Errors.UNKNOWN_MEMBER_ID);
        }
        switch (group.state)
        {
            case STABLE:
            case COMPLETING_REBALANCE:
                joins.prepareRebalance(group, now);
                break;
            case PREPARING_REBALANCE:
                if (group.members.isEmpty())
                {
                    joins.completeJoin(group, now);
                }
                else
                {
                    joins.tryCompleteJoin(group, now);
                }
                break;
            default:
                break;
        }
    }
}
