package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.JoinGroupRequestDecoder;
import io.ferrite.wire.message.JoinGroupResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/** JoinGroup; answered when the rebalance completes (the agent publishes the waiter then). */
final class JoinGroupHandler extends GroupApiHandler<JoinGroupRequestDecoder>
{
    private final JoinGroupResponseEncoder response = new JoinGroupResponseEncoder();

    JoinGroupHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new JoinGroupRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<Member.Protocol> protocols = new ArrayList<>();
        final JoinGroupRequestDecoder.JoinGroupRequestProtocol p = request.protocols();
        while (p.hasNext())
        {
            p.next();
            protocols.add(new Member.Protocol(p.name(), p.metadata()));
        }
        final int rebalanceTimeout = version >= 1 ? request.rebalanceTimeoutMs() : request.sessionTimeoutMs();
        final String groupId = request.groupId();
        final String memberId = request.memberId();
        final String groupInstanceId = version >= 5 ? request.groupInstanceId() : null;
        final String clientId = connection.clientId();
        final String clientHost = clientHost(connection);
        final int sessionTimeout = request.sessionTimeoutMs();
        final String protocolType = request.protocolType();
        return submitFor(AclCodes.READ, groupId, connection, out, outOffset,
            (c, now) -> c.join(groupId, memberId, groupInstanceId, clientId, clientHost, sessionTimeout, rebalanceTimeout,
                protocolType, protocols, version >= 4, version >= 9),
            (o, at, waiter) -> write(o, at, version, waiter),
            (o, at, error) -> write(o, at, version, new GroupCoordinator.JoinWaiter(false).fail(error, memberId)));
    }

    /** Kafka reports the client's address without the port ("/127.0.0.1"). */
    private static String clientHost(final Connection connection)
    {
        final String remote = connection.remote();
        final int colon = remote.lastIndexOf(':');
        return colon > 0 ? remote.substring(0, colon) : remote;
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final GroupCoordinator.JoinWaiter waiter)
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
