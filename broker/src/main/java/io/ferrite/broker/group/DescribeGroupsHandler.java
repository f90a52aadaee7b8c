package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeGroupsRequestDecoder;
import io.ferrite.wire.message.DescribeGroupsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** DescribeGroups: an unknown group is Dead (GROUP_ID_NOT_FOUND from v6, as Kafka 4 answers). */
final class DescribeGroupsHandler implements RequestHandler
{
    private final GroupCoordinator coordinator;
    private final DescribeGroupsRequestDecoder request = new DescribeGroupsRequestDecoder();
    private final DescribeGroupsResponseEncoder response = new DescribeGroupsResponseEncoder();

    DescribeGroupsHandler(final GroupCoordinator coordinator)
    {
        this.coordinator = coordinator;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final StringArrayDecoder names = request.groups();
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(names.elementCount());
        while (names.hasNext())
        {
            final String groupId = names.next().value();
            final GroupCoordinator.Description d = coordinator.describe(groupId);
            g.next();
            if (d == null)
            {
                final boolean notFound = version >= 6;
                g.errorCode(notFound ? Errors.GROUP_ID_NOT_FOUND : Errors.NONE)
                    .errorMessage(notFound ? "Group " + groupId + " not found." : null)
                    .groupId(groupId).groupState("Dead").protocolType("").protocolData("").members(0);
            }
            else
            {
                g.errorCode(Errors.NONE).errorMessage((CharSequence)null).groupId(groupId).groupState(d.state())
                    .protocolType(d.protocolType()).protocolData(d.protocolData());
                final DescribeGroupsResponseEncoder.DescribedGroupMember m = g.members(d.members().size());
                for (final GroupCoordinator.MemberDescription md : d.members())
                {
                    m.next().memberId(md.memberId()).groupInstanceId(md.groupInstanceId()).clientId(md.clientId())
                        .clientHost(md.clientHost()).memberMetadata(md.metadata()).memberAssignment(md.assignment());
                }
            }
            g.authorizedOperations(Integer.MIN_VALUE);
        }
        return outOffset + response.finish();
    }
}
