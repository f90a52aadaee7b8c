package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.JoinGroupResponseDecoder;
import io.ferrite.wire.message.SyncGroupResponseDecoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * A subscribed consumer's membership of its group with the classic protocol, as kafka-clients 4.4's
 * {@code ConsumerCoordinator} with {@code group.protocol=classic} and the eager "range" assignor ({@link RangeAssignor}):
 * JoinGroup (protocol type "consumer"; the first join of a new member is answered MEMBER_ID_REQUIRED with its id and
 * joins again with it), the leader assigns and sends the assignment with its SyncGroup, every member gets its
 * partitions in SyncGroup's answer, then Heartbeat every {@code heartbeat.interval.ms} from the duty cycle. Rebalance:
 * a Heartbeat answered REBALANCE_IN_PROGRESS (or a commit so answered) makes the member give up all its partitions
 * ({@link Revocation}: with auto-commit their positions committed, then {@link RebalanceListener#onRevoked}, then the
 * offsets it staged committed, awaited within {@code max.poll.interval.ms}) before it joins again. UNKNOWN_MEMBER_ID and
 * ILLEGAL_GENERATION lose the partitions ({@link RebalanceListener#onLost}, positions dropped, nothing committed) and
 * join again, as a new member after UNKNOWN_MEMBER_ID. FENCED_INSTANCE_ID (a static member replaced by another with its
 * {@code group.instance.id}) from a Heartbeat, JoinGroup or SyncGroup loses them: {@code poll} throws
 * {@link FencedInstanceIdException} once and the next {@code poll} joins again (as a kafka-clients 4.4 consumer does,
 * fencing the other in turn); from a commit it fails the commit only. A static member sends no LeaveGroup. A JoinGroup
 * or SyncGroup answered REBALANCE_IN_PROGRESS joins again at once; coordinator errors find the coordinator again and
 * join after {@code retry.backoff.ms}. A member whose application does not call {@code poll} within
 * {@code max.poll.interval.ms} sends LeaveGroup and loses its partitions; the next {@code poll} joins again. {@link #close} revokes, and leaves. Errors that are not retriable
 * (INCONSISTENT_GROUP_PROTOCOL, GROUP_AUTHORIZATION_FAILED, ...) stop the membership: {@code poll} throws them.
 * Single-threaded (the consumer's thread): heartbeats go only from {@code doWork}, so a gap between two calls longer
 * than {@code session.timeout.ms} loses the membership (kafka-clients heartbeats from a thread of its own). A
 * heartbeat allocates nothing; a rebalance does (ids, the leader's maps).
 */
final class GroupMembership
{
    static final short MEMBER_ID_REQUIRED = 79;
    static final short FENCED_INSTANCE_ID = 82;

    enum State
    {
        /** Not subscribed, or closed. */
        UNJOINED,
        /** Giving up the partitions held (revoked, their commit awaited) before joining again. */
        PREPARING,
        JOIN_DUE,
        JOINING,
        /** The leader waits for the partition counts of the group's topics. */
        ASSIGNING,
        SYNC_DUE,
        SYNCING,
        STABLE,
        /** Left after {@code max.poll.interval.ms} without a poll: joins again at the next poll. */
        LEFT,
        /** {@link #close} runs: no heartbeat, no join, answers' group errors ignored; the commit and LeaveGroup go. */
        CLOSING,
        /** Stopped with {@link #error}. */
        FAILED
    }

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final ClusterMetadata metadata;
    private final MemberAssignment partitions;
    private final GroupHeartbeat heartbeat;
    private final RangeAssignor assignor = new RangeAssignor();
    private final JoinGroupResponseDecoder joinResponse = new JoinGroupResponseDecoder();
    private final GroupRequests requests;
    private final SyncGroupResponseDecoder syncResponse = new SyncGroupResponseDecoder();
    private final ExpandableDirectByteBuffer scratch = new ExpandableDirectByteBuffer(1024);
    private final Revocation revocation;

    private final ArrayList<String> topics = new ArrayList<>();
    /** The topics of the last JoinGroup sent: a subscribe while it was in flight joins again after it. */
    private final ArrayList<String> joinedTopics = new ArrayList<>();
    State state = State.UNJOINED;
    private String memberId = "";
    private int generation = -1;
    private short error;
    private final LeaderAssignment leader;
    private long notBeforeNs;
    private long lastPollNs;
    /** Whether this member led its last join (it assigned the partitions). */
    boolean ledLastJoin;

    GroupMembership(final ConsumerConfig config, final GroupOffsets group, final ClusterMetadata metadata,
        final MemberAssignment partitions)
    {
        this.config = config;
        this.group = group;
        this.metadata = metadata;
        this.partitions = partitions;
        this.heartbeat = new GroupHeartbeat(config, group);
        this.revocation = new Revocation(config, group, partitions);
        this.leader = new LeaderAssignment(assignor, metadata, scratch);
        this.requests = new GroupRequests(config, group, assignor, scratch);
        group.membership = this;
    }

    boolean subscribed()
    {
        return !topics.isEmpty();
    }

    /** The generation a commit carries: the member's once joined, else -1 (the "simple consumer" form). */
    int commitGeneration()
    {
        return generation;
    }

    /** The member id the coordinator gave ("" before the first join; tests compare the range assignment with it). */
    String memberId()
    {
        return memberId;
    }

    String commitMemberId()
    {
        return generation >= 0 ? memberId : "";
    }

    /** Heartbeats sent so far. */
    long heartbeatsSent()
    {
        return heartbeat.sent;
    }

    /** The instance id a commit carries: a static member's once joined, else null (as kafka-clients). */
    String commitInstanceId()
    {
        return generation >= 0 ? config.groupInstanceId : null;
    }

    /** Whether the coordinator is wanted now (to join, sync, heartbeat or leave). */
    boolean needsCoordinator()
    {
        return state != State.UNJOINED && state != State.LEFT && state != State.FAILED && state != State.ASSIGNING;
    }

    void subscribe(final List<String> newTopics, final RebalanceListener newListener, final long nowNs)
    {
        if (newTopics.isEmpty())
        {
            throw new IllegalArgumentException("no topics: unsubscribe is not supported");
        }
        topics.clear();
        topics.addAll(newTopics);
        partitions.listener = newListener;
        lastPollNs = nowNs;
        for (int i = 0; i < topics.size(); i++)
        {
            metadata.topic(topics.get(i)); // the partition counts the leader needs, and this member's fetches
        }
        if (state == State.UNJOINED || state == State.LEFT)
        {
            state = State.JOIN_DUE;
        }
        else if (state == State.STABLE)
        {
            prepare(nowNs); // a new subscription: the group rebalances (kafka-clients' requestRejoin)
        }
    }

    /**
     * The application called {@code poll}: the poll timer starts again, and a member that left joins again. False while
     * the partitions are being revoked: nothing is handed out between the revocation's commit and the drop.
     */
    boolean polled(final long nowNs)
    {
        lastPollNs = nowNs;
        if (state == State.LEFT)
        {
            state = State.JOIN_DUE;
        }
        else if (state == State.FAILED)
        {
            // fenced: thrown once, the next poll joins again, as kafka-clients 4.4 (the contract's experiment)
            state = error == FENCED_INSTANCE_ID ? State.JOIN_DUE : State.UNJOINED;
            throw ConsumerException.membershipFailed(error, group.groupId, config.groupInstanceId);
        }
        return state != State.PREPARING;
    }

    int doWork(final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        switch (state)
        {
            case STABLE:
                if (nowNs - lastPollNs > config.maxPollIntervalMs * 1_000_000L)
                {
                    // kafka-clients' heartbeat thread: "consumer poll timeout has expired", the member leaves
                    partitions.sendLeave(memberId, "consumer poll timeout has expired", nowNs);
                    lose(true);
                    state = State.LEFT;
                    return 1;
                }
                return heartbeat.doWork(group.ready(), generation, memberId, nowNs);
            case PREPARING:
                final int work = revocation.doWork(nowNs);
                if (revocation.finished())
                {
                    state = State.JOIN_DUE;
                }
                return work;
            case JOIN_DUE:
                return nowNs - notBeforeNs >= 0 ? sendJoin(nowNs) : 0;
            case ASSIGNING:
                return assignWhenKnown(nowNs);
            case SYNC_DUE:
                return sendSync(nowNs);
            default:
                return 0;
        }
    }

    /** Starts giving up the partitions ({@link Revocation}) before joining again. */
    private void prepare(final long nowNs)
    {
        state = State.PREPARING;
        revocation.start(nowNs);
    }

    /** The membership is lost: the partitions go without a commit (they may be another member's already). */
    private void lose(final boolean memberIdToo)
    {
        if (!partitions.isEmpty())
        {
            partitions.tell(true);
            partitions.drop();
        }
        resetGeneration(memberIdToo);
    }

    private void resetGeneration(final boolean memberIdToo)
    {
        generation = -1;
        memberId = memberIdToo ? "" : memberId;
    }

    void onHeartbeat(final short version, final DirectBuffer buffer, final int offset, final int limit,
        final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        final short e = heartbeat.onResponse(version, buffer, offset, limit, generation);
        if (state == State.STABLE && e != GroupHeartbeat.STALE)
        {
            onGroupError(e, assigned, nowNs);
        }
    }

    /**
     * A Heartbeat's or a commit's error while a member: rebalance, fenced (the member id kept after
     * ILLEGAL_GENERATION, as kafka-clients), or the coordinator moved. Ignored while closing, but for the coordinator.
     */
    void onGroupError(final short e, final ArrayList<FetchPosition> assigned, final long nowNs)
    {
        if (state == State.CLOSING)
        {
            if (e == ClientErrors.COORDINATOR_NOT_AVAILABLE || e == ClientErrors.NOT_COORDINATOR)
            {
                group.coordinatorUnknown();
            }
        }
        else if (e == ClientErrors.REBALANCE_IN_PROGRESS && state == State.STABLE)
        {
            prepare(nowNs);
        }
        else if (e == FENCED_INSTANCE_ID)
        {
            lose(true); // as kafka-clients' Heartbeat handler: generation and member id reset, poll throws once
            fail(e);
        }
        else if (e == ClientErrors.UNKNOWN_MEMBER_ID || e == ClientErrors.ILLEGAL_GENERATION)
        {
            if (state == State.STABLE)
            {
                lose(e != ClientErrors.ILLEGAL_GENERATION);
                state = State.JOIN_DUE;
            }
            else
            {
                resetGeneration(e != ClientErrors.ILLEGAL_GENERATION);
            }
        }
        else if (e == ClientErrors.COORDINATOR_NOT_AVAILABLE || e == ClientErrors.NOT_COORDINATOR)
        {
            group.coordinatorUnknown();
        }
    }

    private int sendJoin(final long nowNs)
    {
        final NodeConnection c = group.ready();
        if (c == null)
        {
            return 0;
        }
        final short e = requests.sendJoin(c, topics, generation, memberId, this, nowNs);
        if (e != ClientErrors.NONE)
        {
            return fail(e);
        }
        joinedTopics.clear();
        joinedTopics.addAll(topics);
        state = State.JOINING;
        return 1;
    }

    void onJoin(final short version, final DirectBuffer buffer, final int offset, final int limit, final long nowNs)
    {
        if (state != State.JOINING)
        {
            return;
        }
        joinResponse.wrap(buffer, offset, limit, version);
        final short e = joinResponse.errorCode();
        switch (e)
        {
            case ClientErrors.NONE:
                generation = joinResponse.generationId();
                memberId = joinResponse.memberId();
                ledLastJoin = memberId.equals(joinResponse.leader());
                if (ledLastJoin && !joinResponse.skipAssignment())
                {
                    leader.lead(joinResponse, buffer);
                    state = State.ASSIGNING;
                }
                else
                {
                    leader.follow();
                    state = State.SYNC_DUE;
                }
                break;
            case MEMBER_ID_REQUIRED:
                memberId = joinResponse.memberId(); // KIP-394: join again at once with the id given
                state = State.JOIN_DUE;
                break;
            default:
                joinAgain(e, nowNs);
                break;
        }
    }

    /**
     * A JoinGroup's or SyncGroup's error: REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID (a new member id) and
     * ILLEGAL_GENERATION join again at once, as kafka-clients' {@code joinGroupIfNeeded}; the rest go to
     * {@link #retryOrFail}.
     */
    private void joinAgain(final short e, final long nowNs)
    {
        if (e == ClientErrors.REBALANCE_IN_PROGRESS || e == ClientErrors.UNKNOWN_MEMBER_ID ||
            e == ClientErrors.ILLEGAL_GENERATION)
        {
            if (e != ClientErrors.REBALANCE_IN_PROGRESS)
            {
                resetGeneration(e == ClientErrors.UNKNOWN_MEMBER_ID);
            }
            state = State.JOIN_DUE;
        }
        else
        {
            retryOrFail(e, nowNs);
        }
    }

    /** Coordinator errors and COORDINATOR_LOAD_IN_PROGRESS join again after the backoff; any other error stops. */
    private void retryOrFail(final short e, final long nowNs)
    {
        if (e == ClientErrors.COORDINATOR_NOT_AVAILABLE || e == ClientErrors.NOT_COORDINATOR)
        {
            group.coordinatorUnknown();
        }
        if (ClientErrors.retriable(e) || e == ClientErrors.NETWORK_EXCEPTION)
        {
            state = State.JOIN_DUE;
            notBeforeNs = nowNs + config.retryBackoffNs;
        }
        else
        {
            fail(e);
        }
    }

    private int fail(final short e)
    {
        error = e;
        state = State.FAILED;
        return 1;
    }

    private int assignWhenKnown(final long nowNs)
    {
        if (!leader.assignWhenKnown())
        {
            return 0;
        }
        state = State.SYNC_DUE;
        return 1;
    }

    private int sendSync(final long nowNs)
    {
        final NodeConnection c = group.ready();
        if (c == null)
        {
            return 0;
        }
        requests.sendSync(c, generation, memberId, leader, this, nowNs);
        state = State.SYNCING;
        return 1;
    }

    void onSync(final short version, final DirectBuffer buffer, final int offset, final int limit, final long nowNs)
    {
        if (state != State.SYNCING)
        {
            return;
        }
        syncResponse.wrap(buffer, offset, limit, version);
        final short e = syncResponse.errorCode();
        switch (e)
        {
            case ClientErrors.NONE:
                state = State.STABLE;
                heartbeat.start(nowNs);
                leader.follow();
                for (var t = assignor.readAssignment(buffer, syncResponse.assignmentOffset(),
                    Math.max(syncResponse.assignmentLength(), 0)); t != null && t.hasNext(); )
                {
                    t.next();
                    final String topic = t.topic();
                    for (int i = 0; i < t.partitionsCount(); i++)
                    {
                        partitions.add(topic, t.partitions(i));
                    }
                }
                if (!joinedTopics.equals(topics))
                {
                    prepare(nowNs); // subscribe while the join was in flight (kafka-clients' joinedSubscription check)
                }
                break;
            default:
                joinAgain(e, nowNs);
                break;
        }
    }

    /** A request of the membership got no answer (the coordinator's connection closed or timed out). */
    void onFailure(final short apiKey, final long nowNs)
    {
        if (apiKey == ApiKeys.HEARTBEAT.id)
        {
            heartbeat.failed();
        }
        else if (apiKey == ApiKeys.LEAVE_GROUP.id)
        {
            partitions.leaving = false;
        }
        else if (state == State.JOINING || state == State.SYNCING)
        {
            retryOrFail(ClientErrors.NETWORK_EXCEPTION, nowNs);
        }
    }

    void onLeave()
    {
        partitions.leaving = false;
    }

    /**
     * The consumer closes: with auto-commit the positions are committed first (with assign() too), then a member's
     * partitions are revoked (the listener, once) and the offsets it staged committed
     * ({@link MemberAssignment#commitOnClose}), then it leaves the group and waits for LeaveGroup's answer, each within
     * {@code request.timeout.ms} (kafka-clients' close: auto-commit, {@code onPartitionsRevoked}, LeaveGroup); a
     * revocation under way is finished ({@link Revocation#close}). While it closes ({@link State#CLOSING}) no heartbeat
     * or JoinGroup is sent and a rebalance the coordinator starts meanwhile is not acted on.
     */
    void close(final boolean autoCommit)
    {
        final State was = state;
        state = State.CLOSING;
        if (autoCommit)
        {
            partitions.commitOnClose(CommitCalls.Mode.REVOKE); // first, as kafka-clients' close auto-commits first
        }
        if (was == State.STABLE || was == State.PREPARING)
        {
            revocation.close(was == State.STABLE);
        }
        if (was != State.UNJOINED && was != State.LEFT && was != State.FAILED)
        {
            partitions.sendLeave(memberId, "the consumer is being closed", System.nanoTime());
            partitions.awaitLeave();
        }
        resetGeneration(true);
        state = State.UNJOINED;
    }
}
