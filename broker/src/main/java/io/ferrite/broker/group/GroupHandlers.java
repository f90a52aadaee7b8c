package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeGroupsRequestDecoder;
import io.ferrite.wire.message.DescribeGroupsResponseEncoder;
import io.ferrite.wire.message.FindCoordinatorRequestDecoder;
import io.ferrite.wire.message.FindCoordinatorResponseEncoder;
import io.ferrite.wire.message.HeartbeatRequestDecoder;
import io.ferrite.wire.message.HeartbeatResponseEncoder;
import io.ferrite.wire.message.JoinGroupRequestDecoder;
import io.ferrite.wire.message.JoinGroupResponseEncoder;
import io.ferrite.wire.message.LeaveGroupRequestDecoder;
import io.ferrite.wire.message.LeaveGroupResponseEncoder;
import io.ferrite.wire.message.ListGroupsRequestDecoder;
import io.ferrite.wire.message.ListGroupsResponseEncoder;
import io.ferrite.wire.message.OffsetFetchRequestDecoder;
import io.ferrite.wire.message.OffsetFetchResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import io.ferrite.wire.message.SyncGroupRequestDecoder;
import io.ferrite.wire.message.SyncGroupResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The group APIs, each a thin translation between the wire and {@link GroupCoordinator}: the admin
 * path, where clarity beats allocation. JoinGroup and SyncGroup answer later when the coordinator
 * makes them wait; their network thread polls the waiter when woken.
 */
public final class GroupHandlers
{
    private static final byte GROUP_KEY = 0;
    private static final byte TRANSACTION_KEY = 1;

    private GroupHandlers()
    {
    }

    /** Registers every group API on {@code apis} (each handler made on its first request). */
    public static void register(final io.ferrite.broker.api.Apis apis, final GroupCoordinator coordinator, final TopicRegistry topics,
        final int nodeId, final io.ferrite.broker.api.MetadataHandler address)
    {
        apis.registerLazily(ApiKeys.FIND_COORDINATOR, () -> new FindCoordinator(nodeId, address))
            .registerLazily(ApiKeys.JOIN_GROUP, () -> new JoinGroup(coordinator))
            .registerLazily(ApiKeys.SYNC_GROUP, () -> new SyncGroup(coordinator))
            .registerLazily(ApiKeys.HEARTBEAT, () -> new Heartbeat(coordinator))
            .registerLazily(ApiKeys.LEAVE_GROUP, () -> new LeaveGroup(coordinator))
            .registerLazily(ApiKeys.OFFSET_COMMIT, () -> new OffsetCommitHandler(coordinator, topics))
            .registerLazily(ApiKeys.OFFSET_FETCH, () -> new OffsetFetch(coordinator, topics))
            .registerLazily(ApiKeys.LIST_GROUPS, () -> new ListGroups(coordinator))
            .registerLazily(ApiKeys.DESCRIBE_GROUPS, () -> new DescribeGroups(coordinator))
            .registerLazily(ApiKeys.DELETE_GROUPS, () -> new GroupDeletionHandlers.DeleteGroups(coordinator))
            .registerLazily(ApiKeys.OFFSET_DELETE, () -> new GroupDeletionHandlers.OffsetDelete(coordinator, topics));
    }

    /**
     * FindCoordinator: this node for every group. Transaction coordinators do not exist yet, so a
     * transactional id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED (as InitProducerId does) rather than
     * an error a client would retry for ever; other key types are INVALID_REQUEST.
     */
    static final class FindCoordinator implements RequestHandler
    {
        private final int nodeId;
        private final io.ferrite.broker.api.MetadataHandler address;
        private final FindCoordinatorRequestDecoder request = new FindCoordinatorRequestDecoder();
        private final FindCoordinatorResponseEncoder response = new FindCoordinatorResponseEncoder();

        FindCoordinator(final int nodeId, final io.ferrite.broker.api.MetadataHandler address)
        {
            this.nodeId = nodeId;
            this.address = address;
        }

        private short error(final byte keyType, final String key)
        {
            if (keyType == TRANSACTION_KEY)
            {
                return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
            }
            if (keyType != GROUP_KEY)
            {
                return Errors.INVALID_REQUEST;
            }
            return key == null || key.isEmpty() ? Errors.INVALID_REQUEST : Errors.NONE;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final byte keyType = version >= 1 ? request.keyType() : GROUP_KEY;
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (version < 4)
            {
                final short error = error(keyType, request.key());
                response.errorCode(error).errorMessage(error == Errors.NONE ? null : "The coordinator is not available.")
                    .nodeId(error == Errors.NONE ? nodeId : -1).host(error == Errors.NONE ? address.advertisedHost() : "")
                    .port(error == Errors.NONE ? address.advertisedPort() : -1);
            }
            else
            {
                final StringArrayDecoder keys = request.coordinatorKeys();
                final FindCoordinatorResponseEncoder.Coordinator c = response.coordinators(keys.elementCount());
                while (keys.hasNext())
                {
                    final String key = keys.next().value();
                    final short error = error(keyType, key);
                    c.next().key(key).nodeId(error == Errors.NONE ? nodeId : -1)
                        .host(error == Errors.NONE ? address.advertisedHost() : "")
                        .port(error == Errors.NONE ? address.advertisedPort() : -1).errorCode(error)
                        .errorMessage((CharSequence)null);
                }
            }
            return outOffset + response.finish();
        }
    }

    /** JoinGroup; answered when the rebalance completes. */
    static final class JoinGroup implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final JoinGroupRequestDecoder request = new JoinGroupRequestDecoder();

        JoinGroup(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final List<Member.Protocol> protocols = new ArrayList<>();
            final JoinGroupRequestDecoder.JoinGroupRequestProtocol p = request.protocols();
            while (p.hasNext())
            {
                p.next();
                protocols.add(new Member.Protocol(p.name(), p.metadata()));
            }
            final int rebalanceTimeout = version >= 1 ? request.rebalanceTimeoutMs() : request.sessionTimeoutMs();
            final GroupCoordinator.JoinWaiter waiter = coordinator.join(request.groupId(), request.memberId(),
                version >= 5 ? request.groupInstanceId() : null, connection.clientId(), clientHost(connection),
                request.sessionTimeoutMs(), rebalanceTimeout, request.protocolType(), protocols, version >= 4, version >= 9);
            return answerOrDefer(new Pending(coordinator, waiter, version), connection, outOffset);
        }

        private static final class Pending implements PendingResponse
        {
            private final GroupCoordinator coordinator;
            private final GroupCoordinator.JoinWaiter waiter;
            private final short version;
            private final JoinGroupResponseEncoder response = new JoinGroupResponseEncoder();

            Pending(final GroupCoordinator coordinator, final GroupCoordinator.JoinWaiter waiter, final short version)
            {
                this.coordinator = coordinator;
                this.waiter = waiter;
                this.version = version;
            }

            @Override
            public int poll(final Connection connection, final int outOffset, final long nowMs)
            {
                synchronized (coordinator)
                {
                    if (!waiter.done)
                    {
                        return NOT_READY;
                    }
                    response.wrap(connection.out, outOffset, version).throttleTimeMs(0).errorCode(waiter.error)
                        .generationId(waiter.generationId).protocolType(waiter.error == Errors.NONE ? waiter.protocolType : null)
                        .protocolName(waiter.error == Errors.NONE ? waiter.protocolName : (version >= 7 ? null : ""))
                        .leader(waiter.leaderId == null ? "" : waiter.leaderId)
                        .skipAssignment(waiter.skipAssignment).memberId(waiter.memberId);
                    final JoinGroupResponseEncoder.JoinGroupResponseMember m = response.members(waiter.members.size());
                    for (final GroupCoordinator.JoinedMember member : waiter.members)
                    {
                        m.next().memberId(member.memberId()).groupInstanceId(member.groupInstanceId()).metadata(member.metadata());
                    }
                    return outOffset + response.finish();
                }
            }

            @Override
            public long deadlineMs()
            {
                return Long.MAX_VALUE; // the coordinator always answers: by completing the rebalance or failing the member
            }
        }
    }

    /** SyncGroup; answered when the leader's assignment arrives. */
    static final class SyncGroup implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final SyncGroupRequestDecoder request = new SyncGroupRequestDecoder();

        SyncGroup(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final Map<String, byte[]> assignments = new LinkedHashMap<>();
            final SyncGroupRequestDecoder.SyncGroupRequestAssignment a = request.assignments();
            while (a.hasNext())
            {
                a.next();
                assignments.put(a.memberId(), a.assignment());
            }
            final GroupCoordinator.SyncWaiter waiter = coordinator.sync(request.groupId(), request.generationId(),
                request.memberId(), version >= 3 ? request.groupInstanceId() : null, version >= 5 ? request.protocolType() : null,
                version >= 5 ? request.protocolName() : null, assignments);
            return answerOrDefer(new Pending(coordinator, waiter, version), connection, outOffset);
        }

        private static final class Pending implements PendingResponse
        {
            private final GroupCoordinator coordinator;
            private final GroupCoordinator.SyncWaiter waiter;
            private final short version;
            private final SyncGroupResponseEncoder response = new SyncGroupResponseEncoder();

            Pending(final GroupCoordinator coordinator, final GroupCoordinator.SyncWaiter waiter, final short version)
            {
                this.coordinator = coordinator;
                this.waiter = waiter;
                this.version = version;
            }

            @Override
            public int poll(final Connection connection, final int outOffset, final long nowMs)
            {
                synchronized (coordinator)
                {
                    if (!waiter.done)
                    {
                        return NOT_READY;
                    }
                    final boolean ok = waiter.error == Errors.NONE;
                    response.wrap(connection.out, outOffset, version).throttleTimeMs(0).errorCode(waiter.error)
                        .protocolType(ok ? waiter.protocolType : null).protocolName(ok ? waiter.protocolName : null)
                        .assignment(ok ? waiter.assignment : new byte[0]);
                    return outOffset + response.finish();
                }
            }

            @Override
            public long deadlineMs()
            {
                return Long.MAX_VALUE;
            }
        }
    }

    static final class Heartbeat implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final HeartbeatRequestDecoder request = new HeartbeatRequestDecoder();
        private final HeartbeatResponseEncoder response = new HeartbeatResponseEncoder();

        Heartbeat(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final short error = coordinator.heartbeat(request.groupId(), request.memberId(),
                version >= 3 ? request.groupInstanceId() : null, request.generationId());
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(error);
            return outOffset + response.finish();
        }
    }

    static final class LeaveGroup implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final LeaveGroupRequestDecoder request = new LeaveGroupRequestDecoder();
        private final LeaveGroupResponseEncoder response = new LeaveGroupResponseEncoder();

        LeaveGroup(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final List<GroupCoordinator.MemberIdentity> leaving = new ArrayList<>();
            if (version < 3)
            {
                leaving.add(new GroupCoordinator.MemberIdentity(request.memberId(), null));
            }
            else
            {
                final LeaveGroupRequestDecoder.MemberIdentity m = request.members();
                while (m.hasNext())
                {
                    m.next();
                    leaving.add(new GroupCoordinator.MemberIdentity(m.memberId(), m.groupInstanceId()));
                }
            }
            final String groupId = request.groupId();
            if (groupId == null || groupId.isEmpty())
            {
                response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.INVALID_GROUP_ID).members(0);
                return outOffset + response.finish();
            }
            final List<Short> results = coordinator.leave(groupId, leaving);
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (version < 3)
            {
                response.errorCode(results.get(0));
            }
            else
            {
                response.errorCode(Errors.NONE);
                final LeaveGroupResponseEncoder.MemberResponse r = response.members(leaving.size());
                for (int i = 0; i < leaving.size(); i++)
                {
                    r.next().memberId(leaving.get(i).memberId()).groupInstanceId(leaving.get(i).groupInstanceId())
                        .errorCode(results.get(i));
                }
            }
            return outOffset + response.finish();
        }
    }

    /** OffsetFetch, one group (v1-7) or several (v8+); no committed offset is -1 with an empty metadata. */
    static final class OffsetFetch implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final TopicRegistry topics;
        private final OffsetFetchRequestDecoder request = new OffsetFetchRequestDecoder();
        private final OffsetFetchResponseEncoder response = new OffsetFetchResponseEncoder();

        OffsetFetch(final GroupCoordinator coordinator, final TopicRegistry topics)
        {
            this.coordinator = coordinator;
            this.topics = topics;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (version < 8)
            {
                final String groupId = request.groupId();
                final OffsetFetchRequestDecoder.OffsetFetchRequestTopic t = request.topics();
                if (t.isNullArray())
                {
                    final Map<String, Map<Integer, GroupCoordinator.Committed>> all = coordinator.committed(groupId);
                    final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(all.size());
                    for (final Map.Entry<String, Map<Integer, GroupCoordinator.Committed>> e : all.entrySet())
                    {
                        final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(e.getKey())
                            .partitions(e.getValue().size());
                        for (final Map.Entry<Integer, GroupCoordinator.Committed> c : e.getValue().entrySet())
                        {
                            rp.next().partitionIndex(c.getKey()).committedOffset(c.getValue().offset())
                                .committedLeaderEpoch(c.getValue().leaderEpoch()).metadata(c.getValue().metadata())
                                .errorCode(Errors.NONE);
                        }
                    }
                }
                else
                {
                    final OffsetFetchResponseEncoder.OffsetFetchResponseTopic rt = response.topics(t.elementCount());
                    while (t.hasNext())
                    {
                        t.next();
                        final String name = t.name();
                        final OffsetFetchResponseEncoder.OffsetFetchResponsePartition rp = rt.next().name(name)
                            .partitions(t.partitionIndexesCount());
                        for (int i = 0; i < t.partitionIndexesCount(); i++)
                        {
                            final int partition = t.partitionIndexes(i);
                            final GroupCoordinator.Committed c = coordinator.committed(groupId, name, partition);
                            rp.next().partitionIndex(partition).committedOffset(c == null ? -1 : c.offset())
                                .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                                .errorCode(Errors.NONE);
                        }
                    }
                }
                response.errorCode(Errors.NONE);
                return outOffset + response.finish();
            }
            final OffsetFetchRequestDecoder.OffsetFetchRequestGroup g = request.groups();
            final OffsetFetchResponseEncoder.OffsetFetchResponseGroup rg = response.groups(g.elementCount());
            while (g.hasNext())
            {
                g.next();
                final String groupId = g.groupId();
                rg.next().groupId(groupId);
                final OffsetFetchRequestDecoder.OffsetFetchRequestTopics t = g.topics();
                if (t.isNullArray())
                {
                    final Map<String, Map<Integer, GroupCoordinator.Committed>> all = coordinator.committed(groupId);
                    final OffsetFetchResponseEncoder.OffsetFetchResponseTopics rt = rg.topics(all.size());
                    for (final Map.Entry<String, Map<Integer, GroupCoordinator.Committed>> e : all.entrySet())
                    {
                        rt.next();
                        if (version >= 10)
                        {
                            final Topic topic = topics.topic(e.getKey());
                            rt.topicId(topic == null ? 0 : topic.idMostSignificantBits, topic == null ? 0 : topic.idLeastSignificantBits);
                        }
                        else
                        {
                            rt.name(e.getKey());
                        }
                        final OffsetFetchResponseEncoder.OffsetFetchResponsePartitions rp = rt.partitions(e.getValue().size());
                        for (final Map.Entry<Integer, GroupCoordinator.Committed> c : e.getValue().entrySet())
                        {
                            rp.next().partitionIndex(c.getKey()).committedOffset(c.getValue().offset())
                                .committedLeaderEpoch(c.getValue().leaderEpoch()).metadata(c.getValue().metadata())
                                .errorCode(Errors.NONE);
                        }
                    }
                }
                else
                {
                    final OffsetFetchResponseEncoder.OffsetFetchResponseTopics rt = rg.topics(t.elementCount());
                    while (t.hasNext())
                    {
                        t.next();
                        rt.next();
                        final String name;
                        if (version >= 10)
                        {
                            final Topic topic = topics.topic(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                            name = topic == null ? null : topic.name;
                            rt.topicId(t.topicIdMostSignificantBits(), t.topicIdLeastSignificantBits());
                        }
                        else
                        {
                            name = t.name();
                            rt.name(name);
                        }
                        final OffsetFetchResponseEncoder.OffsetFetchResponsePartitions rp = rt.partitions(t.partitionIndexesCount());
                        for (int i = 0; i < t.partitionIndexesCount(); i++)
                        {
                            final int partition = t.partitionIndexes(i);
                            final GroupCoordinator.Committed c = name == null ? null : coordinator.committed(groupId, name, partition);
                            rp.next().partitionIndex(partition).committedOffset(c == null ? -1 : c.offset())
                                .committedLeaderEpoch(c == null ? -1 : c.leaderEpoch()).metadata(c == null ? "" : c.metadata())
                                .errorCode(name == null ? Errors.UNKNOWN_TOPIC_ID : Errors.NONE);
                        }
                    }
                }
                rg.errorCode(groupId == null || groupId.isEmpty() ? Errors.INVALID_GROUP_ID : Errors.NONE);
            }
            return outOffset + response.finish();
        }
    }

    static final class ListGroups implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final ListGroupsRequestDecoder request = new ListGroupsRequestDecoder();
        private final ListGroupsResponseEncoder response = new ListGroupsResponseEncoder();

        ListGroups(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final Set<String> states = version >= 4 ? lower(request.statesFilter()) : Set.of();
            final Set<String> types = version >= 5 ? lower(request.typesFilter()) : Set.of();
            final List<GroupCoordinator.Description> groups = new ArrayList<>();
            for (final GroupCoordinator.Description d : coordinator.list())
            {
                if ((states.isEmpty() || states.contains(d.state().toLowerCase(java.util.Locale.ROOT))) &&
                    (types.isEmpty() || types.contains("classic")))
                {
                    groups.add(d);
                }
            }
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.NONE);
            final ListGroupsResponseEncoder.ListedGroup g = response.groups(groups.size());
            for (final GroupCoordinator.Description d : groups)
            {
                g.next().groupId(d.groupId()).protocolType(d.protocolType()).groupState(d.state()).groupType("classic");
            }
            return outOffset + response.finish();
        }

        private static Set<String> lower(final StringArrayDecoder values)
        {
            final Set<String> set = new HashSet<>();
            while (values.hasNext())
            {
                set.add(values.next().value().toLowerCase(java.util.Locale.ROOT));
            }
            return set;
        }
    }

    /** DescribeGroups: an unknown group is Dead (GROUP_ID_NOT_FOUND from v6, as Kafka 4 answers). */
    static final class DescribeGroups implements RequestHandler
    {
        private final GroupCoordinator coordinator;
        private final DescribeGroupsRequestDecoder request = new DescribeGroupsRequestDecoder();
        private final DescribeGroupsResponseEncoder response = new DescribeGroupsResponseEncoder();

        DescribeGroups(final GroupCoordinator coordinator)
        {
            this.coordinator = coordinator;
        }

        @Override
        public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
            final MutableDirectBuffer out, final int outOffset, final Connection connection)
        {
            request.wrap(in, offset, limit, version);
            final StringArrayDecoder names = request.groups();
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(names.elementCount());
            while (names.hasNext())
            {
                final String groupId = names.next().value();
                final GroupCoordinator.Description d = coordinator.describe(groupId);
                g.next();
                if (d == null)
                {
                    final boolean notFound = version >= 6;
                    g.errorCode(notFound ? Errors.GROUP_ID_NOT_FOUND : Errors.NONE)
                        .errorMessage(notFound ? "Group " + groupId + " not found." : null)
                        .groupId(groupId).groupState("Dead").protocolType("").protocolData("").members(0);
                }
                else
                {
                    g.errorCode(Errors.NONE).errorMessage((CharSequence)null).groupId(groupId).groupState(d.state())
                        .protocolType(d.protocolType()).protocolData(d.protocolData());
                    final DescribeGroupsResponseEncoder.DescribedGroupMember m = g.members(d.members().size());
                    for (final GroupCoordinator.MemberDescription md : d.members())
                    {
                        m.next().memberId(md.memberId()).groupInstanceId(md.groupInstanceId()).clientId(md.clientId())
                            .clientHost(md.clientHost()).memberMetadata(md.metadata()).memberAssignment(md.assignment());
                    }
                }
                g.authorizedOperations(Integer.MIN_VALUE);
            }
            return outOffset + response.finish();
        }
    }

    /** The response now when the coordinator has it, else later: the connection waits for it. */
    static int answerOrDefer(final PendingResponse pending, final Connection connection, final int outOffset)
    {
        final int end = pending.poll(connection, outOffset, 0);
        if (end != PendingResponse.NOT_READY)
        {
            return end;
        }
        connection.defer(pending);
        return RequestHandler.DEFERRED;
    }

    /** Kafka reports the client's address without the port ("/127.0.0.1"). */
    private static String clientHost(final Connection connection)
    {
        final String remote = connection.remote();
        final int colon = remote.lastIndexOf(':');
        return colon > 0 ? remote.substring(0, colon) : remote;
    }
}
