package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.SyncGroupRequestDecoder;
import io.ferrite.wire.message.SyncGroupResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.LinkedHashMap;
import java.util.Map;

/** SyncGroup; answered when the leader's assignment arrives. */
final class SyncGroupHandler implements RequestHandler
{
    private final GroupCoordinator coordinator;
    private final SyncGroupRequestDecoder request = new SyncGroupRequestDecoder();

    SyncGroupHandler(final GroupCoordinator coordinator)
    {
        this.coordinator = coordinator;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final Map<String, byte[]> assignments = new LinkedHashMap<>();
        final SyncGroupRequestDecoder.SyncGroupRequestAssignment a = request.assignments();
        while (a.hasNext())
        {
            a.next();
            assignments.put(a.memberId(), a.assignment());
        }
        final GroupCoordinator.SyncWaiter waiter = coordinator.sync(request.groupId(), request.generationId(),
            request.memberId(), version >= 3 ? request.groupInstanceId() : null, version >= 5 ? request.protocolType() : null,
            version >= 5 ? request.protocolName() : null, assignments);
        return new Answer(coordinator, waiter, version).answerOrDefer(connection, outOffset);
    }

    private static final class Answer extends WaitedAnswer<GroupCoordinator.SyncWaiter>
    {
        private final SyncGroupResponseEncoder response = new SyncGroupResponseEncoder();

        Answer(final GroupCoordinator coordinator, final GroupCoordinator.SyncWaiter waiter, final short version)
        {
            super(coordinator, waiter, version);
        }

        @Override
        int write(final MutableDirectBuffer out, final int outOffset)
        {
            final boolean ok = waiter.error == Errors.NONE;
            response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(waiter.error)
                .protocolType(ok ? waiter.protocolType : null).protocolName(ok ? waiter.protocolName : null)
                .assignment(ok ? waiter.assignment : new byte[0]);
            return outOffset + response.finish();
        }
    }
}
