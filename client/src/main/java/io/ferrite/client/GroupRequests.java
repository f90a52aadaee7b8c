package io.ferrite.client;

import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.JoinGroupRequestEncoder;
import io.ferrite.wire.message.SyncGroupRequestEncoder;
import org.agrona.ExpandableDirectByteBuffer;

import java.util.List;

/**
 * The JoinGroup (v4 up to v9) and SyncGroup (up to v5) requests of {@link GroupMembership}, as kafka-clients 4.4's
 * classic {@code ConsumerCoordinator} writes them: protocol type "consumer", one protocol ("range") whose metadata is the
 * member's subscription, the rebalance timeout {@code max.poll.interval.ms}, and the {@code group.instance.id} of a
 * static member (JoinGroup v5+, SyncGroup v3+). Single-threaded (the consumer's).
 */
final class GroupRequests
{
    private static final short MAX_JOIN_VERSION = 9;
    private static final short MAX_SYNC_VERSION = 5;
    /** JoinGroup v4 is the first with MEMBER_ID_REQUIRED (KIP-394); v5 the first with a group instance id. */
    private static final short MIN_JOIN_VERSION = 4;
    private static final short MIN_STATIC_JOIN_VERSION = 5;
    static final String PROTOCOL_TYPE = "consumer";

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final RangeAssignor assignor;
    private final ExpandableDirectByteBuffer scratch;
    private final JoinGroupRequestEncoder joinRequest = new JoinGroupRequestEncoder();
    private final SyncGroupRequestEncoder syncRequest = new SyncGroupRequestEncoder();

    GroupRequests(final ConsumerConfig config, final GroupOffsets group, final RangeAssignor assignor,
        final ExpandableDirectByteBuffer scratch)
    {
        this.config = config;
        this.group = group;
        this.assignor = assignor;
        this.scratch = scratch;
    }

    /** Sends a JoinGroup on {@code c}: NONE, or UNSUPPORTED_VERSION when the broker's versions cannot carry it. */
    short sendJoin(final NodeConnection c, final List<String> topics, final int generation, final String memberId,
        final Object context, final long nowNs)
    {
        final short version = c.version(ApiKeys.JOIN_GROUP, MAX_JOIN_VERSION);
        if (version < (config.groupInstanceId == null ? MIN_JOIN_VERSION : MIN_STATIC_JOIN_VERSION))
        {
            return ClientErrors.UNSUPPORTED_VERSION;
        }
        final int length = assignor.writeSubscription(scratch, 0, topics, generation);
        final int body = c.begin(ApiKeys.JOIN_GROUP, version);
        joinRequest.wrap(c.buffer(), body, version).groupId(group.groupIdBytes, 0, group.groupIdBytes.capacity())
            .sessionTimeoutMs(config.sessionTimeoutMs).rebalanceTimeoutMs(config.maxPollIntervalMs).memberId(memberId)
            .groupInstanceId(config.groupInstanceId).protocolType(PROTOCOL_TYPE);
        joinRequest.protocols(1).next().name(RangeAssignor.NAME).metadata(scratch, 0, length);
        c.commit(ApiKeys.JOIN_GROUP, version, body + joinRequest.finish(), context, true, nowNs);
        return ClientErrors.NONE;
    }

    /** Sends a SyncGroup on {@code c}, with the assignments when this member leads. */
    void sendSync(final NodeConnection c, final int generation, final String memberId, final LeaderAssignment leader,
        final Object context, final long nowNs)
    {
        final short version = c.version(ApiKeys.SYNC_GROUP, MAX_SYNC_VERSION);
        final int body = c.begin(ApiKeys.SYNC_GROUP, version);
        syncRequest.wrap(c.buffer(), body, version).groupId(group.groupIdBytes, 0, group.groupIdBytes.capacity())
            .generationId(generation).memberId(memberId).groupInstanceId(config.groupInstanceId)
            .protocolType(PROTOCOL_TYPE).protocolName(RangeAssignor.NAME);
        leader.write(syncRequest);
        c.commit(ApiKeys.SYNC_GROUP, version, body + syncRequest.finish(), context, true, nowNs);
    }
}
