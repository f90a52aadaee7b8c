package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorCall;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.HeartbeatRequestDecoder;
import io.ferrite.wire.message.HeartbeatResponseEncoder;
import org.agrona.MutableDirectBuffer;

/** Heartbeat: the member's session renewed; REBALANCE_IN_PROGRESS tells it to rejoin. */
final class HeartbeatHandler extends GroupApiHandler<HeartbeatRequestDecoder>
{
    private final HeartbeatResponseEncoder response = new HeartbeatResponseEncoder();

    HeartbeatHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new HeartbeatRequestDecoder());
    }

    /**
     * The error a heartbeat refused with {@code error} is answered: while the group's partition loads, NONE, as Kafka 4.4
     * answers it ("blindly": its clients' heartbeat has no case for COORDINATOR_LOAD_IN_PROGRESS, and the member's
     * next heartbeat finds the group loaded); else {@code error}.
     */
    static short refusedAs(final short error)
    {
        return error == Errors.COORDINATOR_LOAD_IN_PROGRESS ? Errors.NONE : error;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final String groupId = request.groupId();
        final String memberId = request.memberId();
        final String groupInstanceId = version >= 3 ? request.groupInstanceId() : null;
        final int generationId = request.generationId();
        final CoordinatorCall.Refusal answer = (o, at, error) ->
        {
            response.wrap(o, at, version).throttleTimeMs(0).errorCode(error);
            return at + response.finish();
        };
        return submitFor(AclCodes.READ, groupId, connection, out, outOffset,
            (c, now) -> c.heartbeat(groupId, memberId, groupInstanceId, generationId), (o, at, error) -> answer.write(o, at, error),
            (o, at, error) -> answer.write(o, at, refusedAs(error)));
    }
}
