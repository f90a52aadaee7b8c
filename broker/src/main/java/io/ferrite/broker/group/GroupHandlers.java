package io.ferrite.broker.group;

import io.ferrite.broker.api.Apis;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.wire.message.ApiKeys;

/**
 * The group APIs, one handler class each, every one a thin translation between the wire and
 * {@link GroupCoordinator}: the admin path, where clarity beats allocation. JoinGroup and SyncGroup
 * answer later when the coordinator makes them wait ({@link WaitedAnswer}); OffsetCommit,
 * DeleteGroups and OffsetDelete answer once the log threads answered their writes to
 * {@code __consumer_offsets} ({@link AwaitingWrites}).
 */
public final class GroupHandlers
{
    private GroupHandlers()
    {
    }

    /** Registers every group API on {@code apis} (each handler made on its first request); {@code waker} wakes their network thread. */
    public static void register(final Apis apis, final GroupCoordinator coordinator, final TopicRegistry topics,
        final int nodeId, final MetadataHandler address, final Runnable waker)
    {
        apis.registerLazily(ApiKeys.FIND_COORDINATOR, () -> new FindCoordinatorHandler(coordinator, waker, nodeId, address))
            .registerLazily(ApiKeys.JOIN_GROUP, () -> new JoinGroupHandler(coordinator))
            .registerLazily(ApiKeys.SYNC_GROUP, () -> new SyncGroupHandler(coordinator))
            .registerLazily(ApiKeys.HEARTBEAT, () -> new HeartbeatHandler(coordinator))
            .registerLazily(ApiKeys.LEAVE_GROUP, () -> new LeaveGroupHandler(coordinator))
            .registerLazily(ApiKeys.OFFSET_COMMIT, () -> new OffsetCommitHandler(coordinator, topics))
            .registerLazily(ApiKeys.OFFSET_FETCH, () -> new OffsetFetchHandler(coordinator, topics))
            .registerLazily(ApiKeys.LIST_GROUPS, () -> new ListGroupsHandler(coordinator))
            .registerLazily(ApiKeys.DESCRIBE_GROUPS, () -> new DescribeGroupsHandler(coordinator))
            .registerLazily(ApiKeys.DELETE_GROUPS, () -> new DeleteGroupsHandler(coordinator))
            .registerLazily(ApiKeys.OFFSET_DELETE, () -> new OffsetDeleteHandler(coordinator, topics));
    }
}
