package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.SyncGroupRequestDecoder;
import io.ferrite.wire.message.SyncGroupResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.LinkedHashMap;
import java.util.Map;

/** SyncGroup; answered when the leader's assignment arrives (the agent publishes the waiter then). */
final class SyncGroupHandler extends GroupApiHandler<SyncGroupRequestDecoder>
{
    private final SyncGroupResponseEncoder response = new SyncGroupResponseEncoder();

    SyncGroupHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new SyncGroupRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final Map<String, byte[]> assignments = new LinkedHashMap<>();
        final SyncGroupRequestDecoder.SyncGroupRequestAssignment a = request.assignments();
        while (a.hasNext())
        {
            a.next();
            assignments.put(a.memberId(), a.assignment());
        }
        final String groupId = request.groupId();
        final int generationId = request.generationId();
        final String memberId = request.memberId();
        final String groupInstanceId = version >= 3 ? request.groupInstanceId() : null;
        final String protocolType = version >= 5 ? request.protocolType() : null;
        final String protocolName = version >= 5 ? request.protocolName() : null;
        return submitFor(AclCodes.READ, groupId, connection, out, outOffset,
            (c, now) -> c.sync(groupId, generationId, memberId, groupInstanceId, protocolType, protocolName, assignments),
            (o, at, waiter) -> write(o, at, version, waiter),
            (o, at, error) -> write(o, at, version, new GroupCoordinator.SyncWaiter().fail(error)));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final GroupCoordinator.SyncWaiter waiter)
    {
        final boolean ok = waiter.error == Errors.NONE;
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(waiter.error)
            .protocolType(ok ? waiter.protocolType : null).protocolName(ok ? waiter.protocolName : null)
            .assignment(ok ? waiter.assignment : new byte[0]);
        return outOffset + response.finish();
    }
}
