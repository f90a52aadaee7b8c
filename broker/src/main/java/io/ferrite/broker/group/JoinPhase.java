package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.broker.coordinator.CoordinatorClock;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.group.GroupCoordinator.JoinWaiter;
import io.ferrite.broker.group.GroupCoordinator.JoinedMember;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * The join phase of Kafka's classic state machine: JoinGroup (new, known and static members), the
 * start of a rebalance (PreparingRebalance) and its completion — a new generation, the protocol
 * chosen, the leader named, every waiting member answered (CompletingRebalance), or Empty when no one
 * rejoined. Not thread-safe: every call comes on the coordinator's agent ({@link CoordinatorAgent}).
 */
final class JoinPhase
{
    private final Map<String, Group> groups;
    private final GroupCoordinator.Settings settings;
    private final CoordinatorTopic store;
    private final CoordinatorClock clock;

    JoinPhase(final Map<String, Group> groups, final GroupCoordinator.Settings settings, final CoordinatorTopic store,
        final CoordinatorClock clock)
    {
        this.groups = groups;
        this.settings = settings;
        this.store = store;
        this.clock = clock;
    }

    /** JoinGroup; the waiter may be done at once (an error, MEMBER_ID_REQUIRED, a static rejoin). */
    JoinWaiter join(final String groupId, final String memberId, final String groupInstanceId,
        final String clientId, final String clientHost, final int sessionTimeoutMs, final int rebalanceTimeoutMs,
        final String protocolType, final List<Member.Protocol> protocols, final boolean requireKnownMemberId,
        final boolean skipAssignmentSupported)
    {
        final long now = clock.nowMs();
        final JoinWaiter waiter = new JoinWaiter(skipAssignmentSupported);
        if (groupId == null || groupId.isEmpty())
        {
            return waiter.fail(Errors.INVALID_GROUP_ID, memberId);
        }
        if (sessionTimeoutMs < settings.minSessionTimeoutMs() || sessionTimeoutMs > settings.maxSessionTimeoutMs())
        {
            return waiter.fail(Errors.INVALID_SESSION_TIMEOUT, memberId);
        }
        Group group = groups.get(groupId);
        final boolean unknownMember = memberId == null || memberId.isEmpty();
        if (group == null || group.is(Group.State.DEAD))
        {
            if (!unknownMember)
            {
                return waiter.fail(Errors.UNKNOWN_MEMBER_ID, memberId);
            }
            group = new Group(groupId);
            group.stateTimestamp = clock.wallMs();
            groups.put(groupId, group);
        }
        if (!group.supportsProtocols(protocolType, protocols))
        {
            return waiter.fail(Errors.INCONSISTENT_GROUP_PROTOCOL, memberId);
        }
        if (unknownMember)
        {
            return joinUnknownMember(group, groupInstanceId, clientId, clientHost, sessionTimeoutMs, rebalanceTimeoutMs,
                protocolType, protocols, requireKnownMemberId, waiter, now);
        }
        return joinKnownMember(group, memberId, groupInstanceId, clientId, clientHost, sessionTimeoutMs, rebalanceTimeoutMs,
            protocolType, protocols, waiter, now);
    }

    private JoinWaiter joinUnknownMember(final Group group, final String groupInstanceId, final String clientId,
        final String clientHost, final int sessionTimeoutMs, final int rebalanceTimeoutMs, final String protocolType,
        final List<Member.Protocol> protocols, final boolean requireKnownMemberId, final JoinWaiter waiter, final long now)
    {
        final String newMemberId = (groupInstanceId != null ? groupInstanceId : clientId) + "-" + UUID.randomUUID();
        if (groupInstanceId != null)
        {
            final String existing = group.staticMembers.get(groupInstanceId);
            if (existing != null)
            {
                return rejoinStaticMember(group, existing, newMemberId, clientId, clientHost, protocolType, protocols,
                    sessionTimeoutMs, rebalanceTimeoutMs, waiter, now);
            }
            if (group.members.size() >= settings.maxSize())
            {
                return waiter.fail(Errors.GROUP_MAX_SIZE_REACHED, "");
            }
            final Member member = new Member(newMemberId, groupInstanceId, clientId, clientHost, rebalanceTimeoutMs,
                sessionTimeoutMs, protocolType, protocols);
            group.staticMembers.put(groupInstanceId, newMemberId);
            return addMemberAndRebalance(group, member, waiter, now);
        }
        if (group.members.size() + group.pendingMembers.size() >= settings.maxSize())
        {
            return waiter.fail(Errors.GROUP_MAX_SIZE_REACHED, "");
        }
        if (requireKnownMemberId)
        {
            // Kafka's KIP-394: the member id comes back first, the member joins with it next
            group.pendingMembers.put(newMemberId, now + sessionTimeoutMs); // expires if it never joins with it
            return waiter.fail(Errors.MEMBER_ID_REQUIRED, newMemberId);
        }
        final Member member = new Member(newMemberId, null, clientId, clientHost, rebalanceTimeoutMs, sessionTimeoutMs,
            protocolType, protocols);
        return addMemberAndRebalance(group, member, waiter, now);
    }

    private JoinWaiter joinKnownMember(final Group group, final String memberId, final String groupInstanceId,
        final String clientId, final String clientHost, final int sessionTimeoutMs, final int rebalanceTimeoutMs,
        final String protocolType, final List<Member.Protocol> protocols, final JoinWaiter waiter, final long now)
    {
        if (group.pendingMembers.remove(memberId) != null)
        {
            final Member member = new Member(memberId, groupInstanceId, clientId, clientHost, rebalanceTimeoutMs,
                sessionTimeoutMs, protocolType, protocols);
            return addMemberAndRebalance(group, member, waiter, now);
        }
        final short fenced = group.checkStatic(memberId, groupInstanceId);
        if (fenced != Errors.NONE)
        {
            return waiter.fail(fenced, memberId);
        }
        final Member member = group.members.get(memberId);
        if (member == null || group.is(Group.State.EMPTY) || group.is(Group.State.DEAD))
        {
            return waiter.fail(Errors.UNKNOWN_MEMBER_ID, memberId);
        }
        member.sessionTimeoutMs = sessionTimeoutMs;
        member.rebalanceTimeoutMs = rebalanceTimeoutMs;
        switch (group.state)
        {
            case PREPARING_REBALANCE:
                updateMemberAndAwait(group, member, protocols, waiter);
                tryCompleteJoin(group, now);
                return waiter;
            case COMPLETING_REBALANCE:
                if (member.sameProtocols(protocols))
                {
                    // the join response was lost: the same answer again
                    fillJoin(group, member, waiter);
                    return waiter;
                }
                updateMemberAndAwait(group, member, protocols, waiter);
                prepareRebalance(group, now);
                return waiter;
            case STABLE:
                if (member.memberId.equals(group.leaderId) || !member.sameProtocols(protocols))
                {
                    updateMemberAndAwait(group, member, protocols, waiter);
                    prepareRebalance(group, now);
                    return waiter;
                }
                fillJoin(group, member, waiter);
                return waiter;
            default:
                return waiter.fail(Errors.UNKNOWN_MEMBER_ID, memberId);
        }
    }

    /** A static member back with a new member id: it takes the old one's place and, if nothing changed, its assignment. */
    private JoinWaiter rejoinStaticMember(final Group group, final String oldMemberId, final String newMemberId,
        final String clientId, final String clientHost, final String protocolType, final List<Member.Protocol> protocols, final int sessionTimeoutMs, final int rebalanceTimeoutMs,
        final JoinWaiter waiter, final long now)
    {
        final Member member = group.members.remove(oldMemberId);
        if (member.awaitingJoin != null)
        {
            member.awaitingJoin.fail(Errors.FENCED_INSTANCE_ID, oldMemberId);
            member.awaitingJoin = null;
        }
        if (member.awaitingSync != null)
        {
            member.awaitingSync.fail(Errors.FENCED_INSTANCE_ID);
            member.awaitingSync = null;
        }
        member.memberId = newMemberId;
        // Kafka keeps the replaced member's client id and host (checked against Kafka 4.4)
        member.sessionTimeoutMs = sessionTimeoutMs;
        member.rebalanceTimeoutMs = rebalanceTimeoutMs;
        member.sessionDeadline = now + sessionTimeoutMs;
        group.members.put(newMemberId, member);
        group.staticMembers.put(member.groupInstanceId, newMemberId);
        final boolean wasLeader = oldMemberId.equals(group.leaderId);
        if (wasLeader)
        {
            group.leaderId = newMemberId;
        }
        if (group.is(Group.State.STABLE) && member.sameSubscription(group.protocolType, protocols) &&
            (!wasLeader || waiter.skipAssignmentSupported))
        {
            member.protocols = protocols;
            // no rebalance: the same generation, and its assignment at the next SyncGroup
            fillJoin(group, member, waiter);
            if (wasLeader)
            {
                waiter.skipAssignment = true;
            }
            return waiter;
        }
        updateMemberAndAwait(group, member, protocols, waiter);
        member.protocolType = protocolType;
        prepareRebalance(group, now);
        return waiter;
    }

    private JoinWaiter addMemberAndRebalance(final Group group, final Member member, final JoinWaiter waiter, final long now)
    {
        if (group.members.isEmpty())
        {
            group.protocolType = member.protocolType;
        }
        member.awaitingJoin = waiter;
        member.sessionDeadline = now + member.sessionTimeoutMs;
        group.members.put(member.memberId, member);
        if (group.leaderId == null)
        {
            group.leaderId = member.memberId;
        }
        if (group.is(Group.State.PREPARING_REBALANCE))
        {
            if (group.initialDelayUntil > now)
            {
                group.initialDelayUntil = Math.min(now + settings.initialRebalanceDelayMs(), group.initialDelayLimit);
            }
            group.rebalanceDeadline = Math.max(group.rebalanceDeadline, now + member.rebalanceTimeoutMs);
            tryCompleteJoin(group, now);
        }
        else
        {
            prepareRebalance(group, now);
        }
        return waiter;
    }

    private static void updateMemberAndAwait(final Group group, final Member member, final List<Member.Protocol> protocols,
        final JoinWaiter waiter)
    {
        if (member.awaitingJoin != null && member.awaitingJoin != waiter)
        {
            member.awaitingJoin.fail(Errors.UNKNOWN_MEMBER_ID, member.memberId); // superseded by this join
        }
        member.protocols = protocols;
        member.awaitingJoin = waiter;
    }

    /** Starts a rebalance (or restarts one): members awaiting their sync are told to rejoin. */
    void prepareRebalance(final Group group, final long now)
    {
        if (group.is(Group.State.COMPLETING_REBALANCE))
        {
            for (final Member m : group.members.values())
            {
                if (m.awaitingSync != null)
                {
                    m.awaitingSync.fail(Errors.REBALANCE_IN_PROGRESS);
                    m.awaitingSync = null;
                }
            }
        }
        if (group.is(Group.State.EMPTY) && settings.initialRebalanceDelayMs() > 0)
        {
            group.initialDelayUntil = now + settings.initialRebalanceDelayMs();
            group.initialDelayLimit = now + Math.max(group.maxRebalanceTimeoutMs(), settings.initialRebalanceDelayMs());
        }
        group.rebalanceDeadline = now + group.maxRebalanceTimeoutMs();
        group.transition(Group.State.PREPARING_REBALANCE, clock.wallMs());
        tryCompleteJoin(group, now);
    }

    void tryCompleteJoin(final Group group, final long now)
    {
        if (group.is(Group.State.PREPARING_REBALANCE) && group.initialDelayUntil <= now && group.hasAllMembersJoined())
        {
            completeJoin(group, now);
        }
    }

    /** Ends the join phase: a new generation, the protocol chosen, every waiting member answered. */
    void completeJoin(final Group group, final long now)
    {
        // members that did not rejoin in time leave the group
        for (final Iterator<Member> it = group.members.values().iterator(); it.hasNext(); )
        {
            final Member m = it.next();
            if (m.awaitingJoin == null)
            {
                it.remove();
                if (m.groupInstanceId != null)
                {
                    group.staticMembers.remove(m.groupInstanceId);
                }
            }
        }
        group.pendingMembers.clear();
        group.initialDelayUntil = 0;
        group.generationId++;
        if (group.members.isEmpty())
        {
            group.protocolName = null;
            group.leaderId = null;
            group.transition(Group.State.EMPTY, clock.wallMs());
            store.write(group.groupId, GroupRecords.groupKey(group.groupId), GroupRecords.groupValue(group), error ->
            {
                // nobody waits for it: a group left Empty is kept in memory either way, as before
            });
            return;
        }
        group.protocolName = group.selectProtocol();
        if (group.leaderId == null || !group.members.containsKey(group.leaderId))
        {
            group.leaderId = group.members.keySet().iterator().next();
        }
        group.transition(Group.State.COMPLETING_REBALANCE, clock.wallMs());
        for (final Member m : group.members.values())
        {
            fillJoin(group, m, m.awaitingJoin);
            m.awaitingJoin = null;
            m.sessionDeadline = now + m.sessionTimeoutMs;
        }
    }

    private static void fillJoin(final Group group, final Member member, final JoinWaiter waiter)
    {
        waiter.error = Errors.NONE;
        waiter.generationId = group.generationId;
        waiter.protocolType = group.protocolType;
        waiter.protocolName = group.protocolName;
        waiter.leaderId = group.leaderId;
        waiter.memberId = member.memberId;
        if (member.memberId.equals(group.leaderId))
        {
            final List<JoinedMember> list = new ArrayList<>();
            for (final Member m : group.members.values())
            {
                list.add(new JoinedMember(m.memberId, m.groupInstanceId, m.metadata(group.protocolName)));
            }
            waiter.members = list;
        }
        waiter.done = true;
    }
}
