package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.JoinGroupRequestDecoder;
import io.ferrite.wire.message.JoinGroupResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/** JoinGroup; answered when the rebalance completes. */
final class JoinGroupHandler implements RequestHandler
{
    private final GroupCoordinator coordinator;
    private final JoinGroupRequestDecoder request = new JoinGroupRequestDecoder();

    JoinGroupHandler(final GroupCoordinator coordinator)
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
        return new Answer(coordinator, waiter, version).answerOrDefer(connection, outOffset);
    }

    /** Kafka reports the client's address without the port ("/127.0.0.1"). */
    private static String clientHost(final Connection connection)
    {
        final String remote = connection.remote();
        final int colon = remote.lastIndexOf(':');
        return colon > 0 ? remote.substring(0, colon) : remote;
    }

    private static final class Answer extends WaitedAnswer<GroupCoordinator.JoinWaiter>
    {
        private final JoinGroupResponseEncoder response = new JoinGroupResponseEncoder();

        Answer(final GroupCoordinator coordinator, final GroupCoordinator.JoinWaiter waiter, final short version)
        {
            super(coordinator, waiter, version);
        }

        @Override
        int write(final MutableDirectBuffer out, final int outOffset)
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(waiter.error)
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
}
