package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.ListGroupsRequestDecoder;
import io.ferrite.wire.message.ListGroupsResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** ListGroups, filtered by state (v4+) and type (v5+; every group here is a classic one). */
final class ListGroupsHandler extends GroupApiHandler<ListGroupsRequestDecoder>
{
    private final ListGroupsResponseEncoder response = new ListGroupsResponseEncoder();

    ListGroupsHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new ListGroupsRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final Set<String> states = version >= 4 ? lower(request.statesFilter()) : Set.of();
        final Set<String> types = version >= 5 ? lower(request.typesFilter()) : Set.of();
        return submit(connection, out, outOffset, (c, now) -> c.list(),
            (o, at, all) -> write(o, at, version, states, types, all, connection), (o, at, error) ->
            {
                response.wrap(o, at, version).throttleTimeMs(0).errorCode(error).groups(0);
                return at + response.finish();
            });
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final Set<String> states,
        final Set<String> types, final List<GroupCoordinator.Description> all, final Connection connection)
    {
        // Kafka: every group with DESCRIBE on the cluster, else those the principal may DESCRIBE
        final boolean everyGroup = Access.cluster(connection, AclCodes.DESCRIBE);
        final List<GroupCoordinator.Description> groups = new ArrayList<>();
        for (final GroupCoordinator.Description d : all)
        {
            if ((states.isEmpty() || states.contains(d.state().toLowerCase(java.util.Locale.ROOT))) &&
                (types.isEmpty() || types.contains("classic")) && (everyGroup || Access.group(connection, AclCodes.DESCRIBE, d.groupId())))
            {
                groups.add(d);
            }
        }
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.NONE);
        final ListGroupsResponseEncoder.ListedGroup g = response.groups(groups.size());
        for (final GroupCoordinator.Description d : groups)
        {
            g.next().groupId(d.groupId()).protocolType(d.protocolType()).groupState(d.state()).groupType("classic");
        }
        return outOffset + response.finish();
    }

    private static Set<String> lower(final StringArrayDecoder values)
    {
        final Set<String> set = new HashSet<>();
        while (values.hasNext())
        {
            set.add(values.next().value().toLowerCase(java.util.Locale.ROOT));
        }
        return set;
    }
}
