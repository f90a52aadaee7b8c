package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.wire.message.StructDecoder;

/**
 * A group API handler: a {@link CoordinatorApiHandler} on the group coordinator. FindCoordinator is
 * not one: it stays on the network thread.
 */
abstract class GroupApiHandler<Q extends StructDecoder> extends CoordinatorApiHandler<GroupCoordinator, Q>
{
    GroupApiHandler(final GroupCoordinator coordinator, final Runnable waker, final Q request)
    {
        super(coordinator, coordinator.agent(), waker, request);
    }
}
