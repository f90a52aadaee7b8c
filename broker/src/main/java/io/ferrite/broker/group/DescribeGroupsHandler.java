package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.DescribeGroupsRequestDecoder;
import io.ferrite.wire.message.DescribeGroupsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/** DescribeGroups: an unknown group is Dead (GROUP_ID_NOT_FOUND from v6, as Kafka 4 answers). */
final class DescribeGroupsHandler extends GroupApiHandler<DescribeGroupsRequestDecoder>
{
    private final DescribeGroupsResponseEncoder response = new DescribeGroupsResponseEncoder();

    DescribeGroupsHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new DescribeGroupsRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final StringArrayDecoder names = request.groups();
        final List<String> groupIds = new ArrayList<>();
        while (names.hasNext())
        {
            groupIds.add(names.next().value());
        }
        return submit(connection, out, outOffset, (c, now) ->
            {
                final List<GroupCoordinator.Description> described = new ArrayList<>(groupIds.size());
                for (final String groupId : groupIds)
                {
                    described.add(c.describe(groupId));
                }
                return described;
            }, (o, at, described) -> write(o, at, version, groupIds, described), (o, at, error) ->
            {
                response.wrap(o, at, version).throttleTimeMs(0);
                final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(groupIds.size());
                for (final String groupId : groupIds)
                {
                    g.next().errorCode(error).errorMessage((CharSequence)null).groupId(groupId).groupState("").protocolType("")
                        .protocolData("").members(0);
                    g.authorizedOperations(Integer.MIN_VALUE);
                }
                return at + response.finish();
            });
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<String> groupIds,
        final List<GroupCoordinator.Description> described)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(groupIds.size());
        for (int i = 0; i < groupIds.size(); i++)
        {
            final String groupId = groupIds.get(i);
            final GroupCoordinator.Description d = described.get(i);
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
