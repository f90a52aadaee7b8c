package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.DeleteGroupsRequestDecoder;
import io.ferrite.wire.message.DeleteGroupsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * DeleteGroups: the coordinator writes the tombstones before it forgets anything
 * ({@link GroupDeletions}); the answer goes when their log threads answered the writes
 * ({@link AwaitingWrites}). The request is decoded into plain values first, since the answer may be
 * written after the request's bytes are gone.
 */
final class DeleteGroupsHandler extends GroupApiHandler<DeleteGroupsRequestDecoder>
{
    private final DeleteGroupsResponseEncoder response = new DeleteGroupsResponseEncoder();

    DeleteGroupsHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new DeleteGroupsRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<String> groupIds = new ArrayList<>();
        final StringArrayDecoder names = request.groupsNames();
        while (names.hasNext())
        {
            groupIds.add(names.next().value());
        }
        // Kafka: a group the principal may not DELETE is GROUP_AUTHORIZATION_FAILED and left alone; the others deleted
        final List<String> allowed = new ArrayList<>();
        final int[] allowedAt = new int[groupIds.size()];
        for (int i = 0; i < groupIds.size(); i++)
        {
            allowedAt[i] = Access.group(connection, AclCodes.DELETE, groupIds.get(i)) ? allowed.size() : -1;
            if (allowedAt[i] >= 0)
            {
                allowed.add(groupIds.get(i));
            }
        }
        return submit(connection, out, outOffset, (c, now) ->
            {
                final GroupDeletions.Deleted deleted = c.deleteGroups(allowed);
                return new AwaitingWrites<>(deleted, deleted.writes(), now);
            }, (o, at, deleting) -> write(o, at, version, groupIds, i -> allowedAt[i] < 0 ? Errors.GROUP_AUTHORIZATION_FAILED
                : deleting.value().error(allowedAt[i], deleting.outcomes())),
            (o, at, error) -> write(o, at, version, groupIds, i -> allowedAt[i] < 0 ? Errors.GROUP_AUTHORIZATION_FAILED : error));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<String> groupIds,
        final java.util.function.IntUnaryOperator errorOf)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DeleteGroupsResponseEncoder.DeletableGroupResult r = response.results(groupIds.size());
        for (int i = 0; i < groupIds.size(); i++)
        {
            r.next().groupId(groupIds.get(i)).errorCode((short)errorOf.applyAsInt(i));
        }
        return outOffset + response.finish();
    }
}
