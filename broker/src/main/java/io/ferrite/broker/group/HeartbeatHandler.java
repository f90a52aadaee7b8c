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
    private final HeartbeatRequestDecoder request = new HeartbeatRequestDecoder();
    private final HeartbeatResponseEncoder response = new HeartbeatResponseEncoder();

    HeartbeatHandler(final GroupCoordinator coordinator)
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
