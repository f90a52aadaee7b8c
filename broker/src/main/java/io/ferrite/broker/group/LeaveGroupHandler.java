package io.ferrite.broker.group;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.LeaveGroupRequestDecoder;
import io.ferrite.wire.message.LeaveGroupResponseEncoder;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/** LeaveGroup: one member (v0-2) or a batch of members, static ones by instance id (v3+). */
final class LeaveGroupHandler extends GroupApiHandler<LeaveGroupRequestDecoder>
{
    private final LeaveGroupResponseEncoder response = new LeaveGroupResponseEncoder();

    LeaveGroupHandler(final GroupCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, waker, new LeaveGroupRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final List<GroupCoordinator.MemberIdentity> leaving = new ArrayList<>();
        if (version < 3)
        {
            leaving.add(new GroupCoordinator.MemberIdentity(request.memberId(), null));
        }
        else
        {
            final LeaveGroupRequestDecoder.MemberIdentity m = request.members();
            while (m.hasNext())
            {
                m.next();
                leaving.add(new GroupCoordinator.MemberIdentity(m.memberId(), m.groupInstanceId()));
            }
        }
        final String groupId = request.groupId();
        if (groupId == null || groupId.isEmpty())
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.INVALID_GROUP_ID).members(0);
            return outOffset + response.finish();
        }
        return submitFor(AclCodes.READ, groupId, connection, out, outOffset, (c, now) -> c.leave(groupId, leaving),
            (o, at, results) -> write(o, at, version, leaving, results), (o, at, error) ->
            {
                response.wrap(o, at, version).throttleTimeMs(0).errorCode(error).members(0);
                return at + response.finish();
            });
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version,
        final List<GroupCoordinator.MemberIdentity> leaving, final List<Short> results)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (version < 3)
        {
            response.errorCode(results.get(0));
        }
        else
        {
            response.errorCode(Errors.NONE);
            final LeaveGroupResponseEncoder.MemberResponse r = response.members(leaving.size());
            for (int i = 0; i < leaving.size(); i++)
            {
                r.next().memberId(leaving.get(i).memberId()).groupInstanceId(leaving.get(i).groupInstanceId())
                    .errorCode(results.get(i));
            }
        }
        return outOffset + response.finish();
    }
}
