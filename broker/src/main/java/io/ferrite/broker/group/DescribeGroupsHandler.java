package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.DescribeGroupsRequestDecoder;
import io.ferrite.wire.message.DescribeGroupsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * DescribeGroups: an unknown group is Dead (GROUP_ID_NOT_FOUND from v6, as Kafka 4 answers); in a cluster a group not
 * coordinated here now is NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS. A group the principal may not DESCRIBE is
 * GROUP_AUTHORIZATION_FAILED; {@code include_authorized_operations} (v3+) reports a described group's operations as Kafka 4.4.
 */
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
        final boolean operations = version >= 3 && request.includeAuthorizedOperations();
        return submit(connection, out, outOffset, (c, now) -> describe(c, groupIds),
            (o, at, described) -> write(o, at, version, groupIds, described, connection, operations), (o, at, error) ->
            {
                response.wrap(o, at, version).throttleTimeMs(0);
                final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(groupIds.size());
                for (final String groupId : groupIds)
                {
                    refused(g.next(), groupId, error);
                    g.authorizedOperations(Integer.MIN_VALUE);
                }
                return at + response.finish();
            });
    }

    /** What the agent read: each group's description (null: none), or the error it is refused with (NONE: not refused). */
    record Described(List<GroupCoordinator.Description> groups, short[] errors)
    {
    }

    /**
     * On the agent: each group described, or, in a cluster, refused NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS when
     * this node does not coordinate it now ({@link GroupOwnership}), as Kafka answers per group (the Admin retries it).
     */
    static Described describe(final GroupCoordinator c, final List<String> groupIds)
    {
        final List<GroupCoordinator.Description> described = new ArrayList<>(groupIds.size());
        final short[] errors = new short[groupIds.size()];
        for (int i = 0; i < groupIds.size(); i++)
        {
            errors[i] = c.ownership().error(groupIds.get(i));
            described.add(errors[i] == Errors.NONE ? c.describe(groupIds.get(i)) : null);
        }
        return new Described(described, errors);
    }

    private static void refused(final DescribeGroupsResponseEncoder.DescribedGroup g, final String groupId, final short error)
    {
        g.errorCode(error).errorMessage((CharSequence)null).groupId(groupId).groupState("").protocolType("").protocolData("")
            .members(0);
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final List<String> groupIds,
        final Described read, final Connection connection, final boolean operations)
    {
        final List<GroupCoordinator.Description> described = read.groups();
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        final DescribeGroupsResponseEncoder.DescribedGroup g = response.groups(groupIds.size());
        for (int i = 0; i < groupIds.size(); i++)
        {
            final String groupId = groupIds.get(i);
            final GroupCoordinator.Description d = described.get(i);
            g.next();
            // Kafka: a group the principal may not DESCRIBE is GROUP_AUTHORIZATION_FAILED, the others described
            final short error = Access.group(connection, AclCodes.DESCRIBE, groupId) ? read.errors()[i] : Errors.GROUP_AUTHORIZATION_FAILED;
            final boolean notFound = d == null && version >= 6;
            if (error != Errors.NONE)
            {
                refused(g, groupId, error);
            }
            else if (d == null)
            {
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
            // Kafka 4.4 reports the operations of a group answered without an error, when asked
            g.authorizedOperations(operations && error == Errors.NONE && !notFound ?
                Access.authorizedOperations(connection, AclCodes.GROUP, groupId) : Integer.MIN_VALUE);
        }
        return outOffset + response.finish();
    }
}
