package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.StructDecoder;
import org.agrona.MutableDirectBuffer;

/**
 * A group API handler: a {@link CoordinatorApiHandler} on the group coordinator. FindCoordinator is
 * not one: it stays on the network thread.
 */
abstract class GroupApiHandler<Q extends StructDecoder> extends CoordinatorApiHandler<GroupCoordinator, Q>
{
    GroupApiHandler(final GroupCoordinator coordinator, final Runnable waker, final Q request)
    {
        super(coordinator, coordinator.agent(), waker, request);
    }

    /**
     * {@link #submit} for one group's request: GROUP_AUTHORIZATION_FAILED (its {@code refusal}) without {@code operation}
     * ({@code acl.AclCodes}) on the group, as Kafka's KafkaApis checks it first; refused (its {@code refusal}) NOT_COORDINATOR or
     * COORDINATOR_LOAD_IN_PROGRESS when, in a cluster, this node does not coordinate {@code groupId} or
     * still loads its partition ({@link GroupOwnership}); on a single node never.
     */
    protected final <R> int submitFor(final byte operation, final String groupId, final Connection connection, final MutableDirectBuffer out,
        final int outOffset, final CoordinatorCall.Work<GroupCoordinator, R> work, final CoordinatorCall.Writer<R> writer,
        final CoordinatorCall.Refusal refusal)
    {
        if (!Access.group(connection, operation, groupId))
        {
            return refusal.write(out, outOffset, Errors.GROUP_AUTHORIZATION_FAILED); // Kafka's check, before the coordinator's
        }
        return CoordinatorCall.submit(agent, coordinator, connection, waker, out, outOffset,
            () -> coordinator.ownership().error(groupId), work, writer, refusal);
    }
}
