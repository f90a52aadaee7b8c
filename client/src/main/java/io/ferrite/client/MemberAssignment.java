package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.LeaveGroupRequestEncoder;

import java.util.ArrayList;

/**
 * The partitions the group gave a subscribed consumer, as {@link GroupMembership} hands them over: the listener told
 * (revoked or lost), their commits before they go ({@link Revocation}), their positions dropped, and the
 * LeaveGroup of a member that goes (closing, or {@code max.poll.interval.ms} passed). Single-threaded (the consumer's).
 */
final class MemberAssignment
{
    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final Consumer consumer;
    /** The consumer's own list of assigned partitions. */
    private final ArrayList<FetchPosition> assigned;
    private final CommitCalls calls;
    private final LeaveGroupRequestEncoder leaveRequest = new LeaveGroupRequestEncoder();
    RebalanceListener listener = RebalanceListener.NONE;
    /** A LeaveGroup is in flight. */
    boolean leaving;

    MemberAssignment(final ConsumerConfig config, final GroupOffsets group, final Consumer consumer,
        final ArrayList<FetchPosition> assigned, final CommitCalls calls)
    {
        this.config = config;
        this.group = group;
        this.consumer = consumer;
        this.assigned = assigned;
        this.calls = calls;
    }

    boolean isEmpty()
    {
        return assigned.isEmpty();
    }

    /** Tells the listener of each partition held: revoked, or lost. */
    void tell(final boolean lost)
    {
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            if (lost)
            {
                listener.onLost(p.topic.name, p.partition);
            }
            else
            {
                listener.onRevoked(p.topic.name, p.partition);
            }
        }
    }

    /** A partition given by the group: assigned as {@code assign} does (its committed offset first), listener told. */
    void add(final String topic, final int partition)
    {
        consumer.assignFromGroup(topic, partition);
        listener.onAssigned(topic, partition);
    }

    /**
     * The partitions given up: positions and buffered records dropped (answers in flight for them are stale), and an
     * application's commit not sent yet failed.
     */
    void drop()
    {
        group.failUnsentCommit();
        for (int i = 0; i < assigned.size(); i++)
        {
            assigned.get(i).revoke();
        }
        assigned.clear();
    }

    /** A commit of a revocation; {@code done} is told (now, if there is nothing to commit). False if one is out. */
    boolean startCommit(final OffsetCommitHandler done, final CommitCalls.Mode mode)
    {
        return calls.start(assigned, done, 0, mode);
    }

    /** A commit on close, awaited within {@code request.timeout.ms}; a failure is dropped, as kafka-clients logs it. */
    void commitOnClose(final CommitCalls.Mode mode)
    {
        try
        {
            calls.commitSync(assigned, config.requestTimeoutNs / 1_000_000L, mode);
        }
        catch (final OffsetCommitException e)
        {
            // kafka-clients' close logs a failed commit and goes on to leave the group
        }
    }

    /**
     * Sends LeaveGroup for {@code memberId} when the coordinator is ready (kafka-clients leaves only then); a static
     * member ({@code group.instance.id}) sends none, as kafka-clients' default close and poll timeout do not.
     */
    void sendLeave(final String memberId, final String reason, final long nowNs)
    {
        final NodeConnection c = group.ready();
        if (c == null || memberId.isEmpty() || config.groupInstanceId != null)
        {
            return;
        }
        final short version = c.version(ApiKeys.LEAVE_GROUP, (short)5);
        final int body = c.begin(ApiKeys.LEAVE_GROUP, version);
        leaveRequest.wrap(c.buffer(), body, version).groupId(group.groupIdBytes, 0, group.groupIdBytes.capacity());
        if (version < 3)
        {
            leaveRequest.memberId(memberId);
        }
        else
        {
            leaveRequest.members(1).next().memberId(memberId).groupInstanceId((CharSequence)null).reason(reason);
        }
        c.commit(ApiKeys.LEAVE_GROUP, version, body + leaveRequest.finish(), this, true, nowNs);
        leaving = true;
    }

    /** Runs the consumer's duty cycle until the LeaveGroup's answer, within {@code request.timeout.ms}. */
    void awaitLeave()
    {
        final long deadline = System.nanoTime() + config.requestTimeoutNs;
        while (leaving && System.nanoTime() - deadline < 0)
        {
            if (consumer.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
    }
}
