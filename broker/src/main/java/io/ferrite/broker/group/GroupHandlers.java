package io.ferrite.broker.group;

import io.ferrite.broker.api.Apis;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.wire.message.ApiKeys;

/**
 * The group APIs, one handler class each, every one a thin translation between the wire and
 * {@link GroupCoordinator}: the admin path, where clarity beats allocation. Each decodes its request
 * into plain values on its network thread and hands the work to the coordinator's agent as a
 * {@link CoordinatorCall} ({@link GroupApiHandler}), deferring its answer: JoinGroup and SyncGroup are answered once the coordinator
 * fills their waiter in, OffsetCommit, DeleteGroups and OffsetDelete once the log threads answered
 * their writes to {@code __consumer_offsets} ({@link AwaitingWrites}), the others once the agent
 * ran them. FindCoordinator alone stays on the network thread (it reads the published topics).
 */
public final class GroupHandlers
{
    private GroupHandlers()
    {
    }

    /**
     * Registers every group API on {@code apis} (each handler made on its first request); {@code waker} wakes their network
     * thread; {@code verifier} (null: none) verifies
     * TxnOffsetCommit's transaction when its transactional id's coordinator is another node of a cluster.
     */
    public static void register(final Apis apis, final GroupCoordinator coordinator, final TxnCoordinator transactions,
        final TxnVerifier verifier, final TopicRegistry topics, final int nodeId, final MetadataHandler address,
        final Runnable waker)
    {
        final RemoteTxnCheck remote = verifier == null ? RemoteTxnCheck.ALONE : new RemoteTxnCheck(verifier.forOffsetCommits(), nodeId);
        apis.registerLazily(ApiKeys.FIND_COORDINATOR, () -> new FindCoordinatorHandler(coordinator, transactions, waker, nodeId, address))
            .registerLazily(ApiKeys.JOIN_GROUP, () -> new JoinGroupHandler(coordinator, waker))
            .registerLazily(ApiKeys.SYNC_GROUP, () -> new SyncGroupHandler(coordinator, waker))
            .registerLazily(ApiKeys.HEARTBEAT, () -> new HeartbeatHandler(coordinator, waker))
            .registerLazily(ApiKeys.LEAVE_GROUP, () -> new LeaveGroupHandler(coordinator, waker))
            .registerLazily(ApiKeys.OFFSET_COMMIT, () -> new OffsetCommitHandler(coordinator, topics, waker))
            .registerLazily(ApiKeys.OFFSET_FETCH, () -> new OffsetFetchHandler(coordinator, topics, waker))
            .registerLazily(ApiKeys.LIST_GROUPS, () -> new ListGroupsHandler(coordinator, waker))
            .registerLazily(ApiKeys.DESCRIBE_GROUPS, () -> new DescribeGroupsHandler(coordinator, waker))
            .registerLazily(ApiKeys.DELETE_GROUPS, () -> new DeleteGroupsHandler(coordinator, waker))
            .registerLazily(ApiKeys.OFFSET_DELETE, () -> new OffsetDeleteHandler(coordinator, topics, waker))
            .registerLazily(ApiKeys.TXN_OFFSET_COMMIT, () -> new TxnOffsetCommitHandler(coordinator, transactions, remote, topics, waker));
    }
}
