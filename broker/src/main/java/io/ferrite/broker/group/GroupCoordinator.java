package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The coordinator of every group on this node: Kafka's classic group protocol (JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup and the Empty / PreparingRebalance / CompletingRebalance / Stable
 * / Dead state machine), committed offsets and their persistence in {@code __consumer_offsets}.
 *
 * <p>Group work is off the produce path: it runs on the network threads that receive group
 * requests and on this coordinator's timer thread, under one lock, and writes {@code
 * __consumer_offsets} itself (no log thread serving user partitions ever waits for it; that topic
 * refuses client produce, so the lock makes the coordinator its single writer). Requests that wait
 * (a JoinGroup until the rebalance completes, a SyncGroup until the leader's assignment) get a
 * waiter that their network thread polls; whatever completes waiters wakes the network threads.
 *
 * <p>After a restart groups come back from the log with their offsets, generation and protocol
 * type, but empty: their members find themselves unknown at their next heartbeat and rejoin, and
 * resume from the committed offsets. (Kafka also restores the members; here that costs one
 * rebalance per group after a restart.) {@link GroupStore} writes and replays the topic.
 */
public final class GroupCoordinator implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupCoordinator.class);
    public static final String OFFSETS_TOPIC = "__consumer_offsets";
    private static final int NO_GENERATION = -1;

    /** How a group behaves: Kafka's broker settings for groups and offsets. */
    public record Settings(int minSessionTimeoutMs, int maxSessionTimeoutMs, int initialRebalanceDelayMs, int maxSize,
        long offsetsRetentionMs, long retentionCheckIntervalMs, int offsetsTopicPartitions, int offsetsTopicSegmentBytes,
        int offsetMetadataMaxBytes)
    {
    }

    /** A member as the leader's JoinGroup response lists it. */
    public record JoinedMember(String memberId, String groupInstanceId, byte[] metadata)
    {
    }

    /** The answer to a JoinGroup, filled in when the rebalance completes (read under the coordinator's lock). */
    public static final class JoinWaiter
    {
        public boolean done;
        public short error;
        public int generationId = NO_GENERATION;
        public String protocolType;
        public String protocolName;
        public String leaderId = "";
        public String memberId = "";
        public boolean skipAssignment;
        public List<JoinedMember> members = List.of();
        final boolean skipAssignmentSupported;

        JoinWaiter(final boolean skipAssignmentSupported)
        {
            this.skipAssignmentSupported = skipAssignmentSupported;
        }

        JoinWaiter fail(final short code, final String member)
        {
            error = code;
            memberId = member == null ? "" : member;
            done = true;
            return this;
        }
    }

    /** The answer to a SyncGroup, filled in when the leader's assignment arrives. */
    public static final class SyncWaiter
    {
        public boolean done;
        public short error;
        public byte[] assignment = new byte[0];
        public String protocolType;
        public String protocolName;

        SyncWaiter fail(final short code)
        {
            error = code;
            done = true;
            return this;
        }
    }

    /** A member named in LeaveGroup. */
    public record MemberIdentity(String memberId, String groupInstanceId)
    {
    }

    /** A group as ListGroups and DescribeGroups report it. */
    public record Description(String groupId, String state, String protocolType, String protocolData, List<MemberDescription> members)
    {
    }

    public record MemberDescription(String memberId, String groupInstanceId, String clientId, String clientHost, byte[] metadata,
        byte[] assignment)
    {
    }

    /** A committed offset as OffsetFetch answers it. */
    public record Committed(long offset, int leaderEpoch, String metadata)
    {
    }

    private final TopicRegistry topics;
    private final Settings settings;
    private final Runnable wakeNetworkThreads;
    private final Map<String, Group> groups = new HashMap<>();
    private final ScheduledExecutorService timer;
    private final GroupStore store;
    private long nextRetentionCheck;
    /** Tests only: run inside an OffsetCommit's lock hold (null in production). */
    volatile OffsetCommits.Hooks commitHooks;

    public GroupCoordinator(final TopicRegistry topics, final Settings settings, final Runnable wakeNetworkThreads)
    {
        this.topics = topics;
        this.settings = settings;
        this.wakeNetworkThreads = wakeNetworkThreads;
        this.store = new GroupStore(topics, settings);
        this.timer = Executors.newSingleThreadScheduledExecutor(r ->
        {
            final Thread t = new Thread(r, "ferrite-group-coordinator");
            t.setDaemon(true);
            return t;
        });
    }

    /** Loads the groups from {@code __consumer_offsets} (when it exists) and starts the timer. */
    public synchronized void start()
    {
        final int records = store.load(groups);
        if (records > 0)
        {
            LOG.info("loaded {} groups from {} records of {}", groups.size(), records, OFFSETS_TOPIC);
        }
        nextRetentionCheck = System.currentTimeMillis() + settings.retentionCheckIntervalMs();
        timer.scheduleWithFixedDelay(this::tick, 50, 50, TimeUnit.MILLISECONDS);
    }

    @Override
    public void close()
    {
        timer.shutdownNow();
    }

    // ------------------------------------------------------------------------------------------
    // membership
    // ------------------------------------------------------------------------------------------

    /** JoinGroup; the waiter may be done at once (an error, MEMBER_ID_REQUIRED, a static rejoin). */
    public synchronized JoinWaiter join(final String groupId, final String memberId, final String groupInstanceId,
        final String clientId, final String clientHost, final int sessionTimeoutMs, final int rebalanceTimeoutMs,
        final String protocolType, final List<Member.Protocol> protocols, final boolean requireKnownMemberId,
        final boolean skipAssignmentSupported)
    {
        final long now = System.currentTimeMillis();
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
            group.stateTimestamp = now;
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
        final short fenced = checkStatic(group, memberId, groupInstanceId);
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
        wakeNetworkThreads.run();
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

    private void prepareRebalance(final Group group, final long now)
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
            wakeNetworkThreads.run();
        }
        if (group.is(Group.State.EMPTY) && settings.initialRebalanceDelayMs() > 0)
        {
            group.initialDelayUntil = now + settings.initialRebalanceDelayMs();
            group.initialDelayLimit = now + Math.max(group.maxRebalanceTimeoutMs(), settings.initialRebalanceDelayMs());
        }
        group.rebalanceDeadline = now + group.maxRebalanceTimeoutMs();
        group.transition(Group.State.PREPARING_REBALANCE, now);
        tryCompleteJoin(group, now);
    }

    private void tryCompleteJoin(final Group group, final long now)
    {
        if (group.is(Group.State.PREPARING_REBALANCE) && group.initialDelayUntil <= now && group.hasAllMembersJoined())
        {
            completeJoin(group, now);
        }
    }

    /** Ends the join phase: a new generation, the protocol chosen, every waiting member answered. */
    private void completeJoin(final Group group, final long now)
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
            group.transition(Group.State.EMPTY, now);
            writeGroup(group);
            return;
        }
        group.protocolName = group.selectProtocol();
        if (group.leaderId == null || !group.members.containsKey(group.leaderId))
        {
            group.leaderId = group.members.keySet().iterator().next();
        }
        group.transition(Group.State.COMPLETING_REBALANCE, now);
        for (final Member m : group.members.values())
        {
            fillJoin(group, m, m.awaitingJoin);
            m.awaitingJoin = null;
            m.sessionDeadline = now + m.sessionTimeoutMs;
        }
        wakeNetworkThreads.run();
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

    /** Null when the static identity fits, else FENCED_INSTANCE_ID (or UNKNOWN_MEMBER_ID for an unknown instance). */
    static short checkStatic(final Group group, final String memberId, final String groupInstanceId)
    {
        if (groupInstanceId == null)
        {
            return Errors.NONE;
        }
        final String registered = group.staticMembers.get(groupInstanceId);
        if (registered == null)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        return registered.equals(memberId) ? Errors.NONE : Errors.FENCED_INSTANCE_ID;
    }

    /** SyncGroup; done at once unless the group waits for its leader's assignment. */
    public synchronized SyncWaiter sync(final String groupId, final int generationId, final String memberId,
        final String groupInstanceId, final String protocolType, final String protocolName, final Map<String, byte[]> assignments)
    {
        final long now = System.currentTimeMillis();
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
        final short fenced = checkStatic(group, memberId, groupInstanceId);
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
     * rebalances; only a written sync makes the group Stable.
     */
    private void completeSync(final Group group, final Map<String, byte[]> assignments, final long now)
    {
        final short error = store.write(group.groupId, GroupRecords.groupKey(group.groupId), GroupRecords.groupValue(group));
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
        wakeNetworkThreads.run();
        if (error == Errors.NONE)
        {
            group.transition(Group.State.STABLE, now);
        }
        else
        {
            LOG.info("rebalancing group {}: storing its assignment failed ({})", group.groupId, error);
            prepareRebalance(group, now);
        }
    }

    public synchronized short heartbeat(final String groupId, final String memberId, final String groupInstanceId,
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
        final short fenced = checkStatic(group, memberId, groupInstanceId);
        if (fenced != Errors.NONE)
        {
            return fenced;
        }
        final Member member = group.members.get(memberId);
        if (member == null)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        member.sessionDeadline = System.currentTimeMillis() + member.sessionTimeoutMs;
        if (group.is(Group.State.PREPARING_REBALANCE) || group.is(Group.State.COMPLETING_REBALANCE))
        {
            return Errors.REBALANCE_IN_PROGRESS;
        }
        return generationId == group.generationId ? Errors.NONE : Errors.ILLEGAL_GENERATION;
    }

    /** LeaveGroup: one error per member named (the request's top-level error is NONE unless the group is unknown). */
    public synchronized List<Short> leave(final String groupId, final List<MemberIdentity> leaving)
    {
        final long now = System.currentTimeMillis();
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

    private void removeMember(final Group group, final Member member, final long now)
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
        wakeNetworkThreads.run();
        switch (group.state)
        {
            case STABLE:
            case COMPLETING_REBALANCE:
                prepareRebalance(group, now);
                break;
            case PREPARING_REBALANCE:
                if (group.members.isEmpty())
                {
                    completeJoin(group, now);
                }
                else
                {
                    tryCompleteJoin(group, now);
                }
                break;
            default:
                break;
        }
    }

    /** Session expiries, rebalance deadlines, the initial delay, and now and then offset retention. */
    private synchronized void tick()
    {
        try
        {
            final long now = System.currentTimeMillis();
            for (final Group group : new ArrayList<>(groups.values()))
            {
                group.pendingMembers.values().removeIf(deadline -> deadline < now);
                if (group.is(Group.State.PREPARING_REBALANCE))
                {
                    if (now >= group.rebalanceDeadline && group.initialDelayUntil <= now)
                    {
                        completeJoin(group, now);
                        continue;
                    }
                    tryCompleteJoin(group, now);
                }
                for (final Member m : new ArrayList<>(group.members.values()))
                {
                    if (m.awaitingJoin == null && m.awaitingSync == null && now > m.sessionDeadline &&
                        group.members.containsKey(m.memberId))
                    {
                        LOG.info("member {} of group {} expired after {} ms without a heartbeat", m.memberId, group.groupId,
                            m.sessionTimeoutMs);
                        removeMember(group, m, now);
                    }
                }
            }
            if (now >= nextRetentionCheck)
            {
                nextRetentionCheck = now + settings.retentionCheckIntervalMs();
                GroupDeletions.expireOffsets(groups, store, settings.offsetsRetentionMs(), now);
            }
        }
        catch (final RuntimeException ex)
        {
            LOG.error("group coordinator timer failed", ex);
        }
    }

    // ------------------------------------------------------------------------------------------
    // offsets
    // ------------------------------------------------------------------------------------------

    /**
     * OffsetCommit in one lock hold: the member and generation checked, {@code offsets} (the
     * partitions that passed their own checks) appended as one batch, and stored only once appended.
     */
    synchronized OffsetCommits.Result commitOffsets(final String groupId, final int generationId, final String memberId,
        final String groupInstanceId, final short version, final Map<Group.TopicPartition, Group.Offset> offsets)
    {
        return OffsetCommits.commit(groups, store, groupId, generationId, memberId, groupInstanceId, version, offsets,
            commitHooks);
    }

    public int offsetMetadataMaxBytes()
    {
        return settings.offsetMetadataMaxBytes();
    }

    /** The committed offset of a partition, or null. */
    public synchronized Committed committed(final String groupId, final String topic, final int partition)
    {
        final Group group = groups.get(groupId);
        final Group.Offset o = group == null ? null : group.offsets.get(new Group.TopicPartition(topic, partition));
        return o == null ? null : new Committed(o.offset(), o.leaderEpoch(), o.metadata());
    }

    /** Every committed offset of a group, by topic then partition (sorted). */
    public synchronized Map<String, Map<Integer, Committed>> committed(final String groupId)
    {
        final Map<String, Map<Integer, Committed>> all = new java.util.TreeMap<>();
        final Group group = groups.get(groupId);
        if (group != null)
        {
            for (final Map.Entry<Group.TopicPartition, Group.Offset> e : group.offsets.entrySet())
            {
                final Group.Offset o = e.getValue();
                all.computeIfAbsent(e.getKey().topic(), k -> new java.util.TreeMap<>())
                    .put(e.getKey().partition(), new Committed(o.offset(), o.leaderEpoch(), o.metadata()));
            }
        }
        return all;
    }

    // ------------------------------------------------------------------------------------------
    // administration
    // ------------------------------------------------------------------------------------------

    public synchronized List<Description> list()
    {
        final List<Description> list = new ArrayList<>();
        for (final Group g : groups.values())
        {
            if (!g.is(Group.State.DEAD))
            {
                list.add(new Description(g.groupId, g.state.label, g.protocolType == null ? "" : g.protocolType, "", List.of()));
            }
        }
        return list;
    }

    /** A group's description, or null when there is no such group. */
    public synchronized Description describe(final String groupId)
    {
        final Group g = groups.get(groupId);
        if (g == null || g.is(Group.State.DEAD))
        {
            return null;
        }
        final List<MemberDescription> members = new ArrayList<>();
        final boolean stable = g.is(Group.State.STABLE);
        for (final Member m : g.members.values())
        {
            members.add(new MemberDescription(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
                g.protocolName == null ? new byte[0] : m.metadata(g.protocolName), stable ? m.assignment : new byte[0]));
        }
        return new Description(g.groupId, g.state.label, g.protocolType == null ? "" : g.protocolType,
            stable && g.protocolName != null ? g.protocolName : "", members);
    }

    /** DeleteGroups: the Empty groups among {@code groupIds} deleted, their tombstones written first (see {@link GroupDeletions}). */
    synchronized GroupDeletions.Deleted deleteGroups(final List<String> groupIds)
    {
        return GroupDeletions.deleteGroups(groups, store, groupIds);
    }

    /** OffsetDelete: the request's error, else an error per partition in {@code results}. */
    synchronized GroupDeletions.OffsetsDeleted deleteOffsets(final String groupId, final Collection<Group.TopicPartition> partitions,
        final Map<Group.TopicPartition, Short> results)
    {
        return GroupDeletions.deleteOffsets(groups, store, groupId, partitions, results);
    }

    private void writeGroup(final Group group)
    {
        write(group.groupId, GroupRecords.groupKey(group.groupId), GroupRecords.groupValue(group));
    }

    private void write(final String groupId, final byte[] key, final byte[] value)
    {
        store.write(groupId, key, value);
    }
}
