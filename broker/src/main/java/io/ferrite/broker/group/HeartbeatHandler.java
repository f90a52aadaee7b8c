package io.ferrite.broker.group;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.HeartbeatRequestDecoder;
import io.ferrite.wire.message.HeartbeatResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Heartbeat: the member's session renewed; REBALANCE_IN_PROGRESS tells it to rejoin. */
final class HeartbeatHandler implements RequestHandler
{
    private final GroupCoordinator coordinator;
    private final Runnable waker;
    private final HeartbeatRequestDecoder request = new HeartbeatRequestDecoder();
    private final HeartbeatResponseEncoder response = new HeartbeatResponseEncoder();

    HeartbeatHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        this.coordinator = coordinator;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final String groupId = request.groupId();
        final String memberId = request.memberId();
        final String groupInstanceId = version >= 3 ? request.groupInstanceId() : null;
        final int generationId = request.generationId();
        final GroupCall.Refusal answer = (o, at, error) ->
        {
            response.wrap(o, at, version).throttleTimeMs(0).errorCode(error);
            return at + response.finish();
        };
        return GroupCall.submit(coordinator, connection, waker, out, outOffset,
            (c, now) -> c.heartbeat(groupId, memberId, groupInstanceId, generationId), (o, at, error) -> answer.write(o, at, error),
            answer);
    }
}
