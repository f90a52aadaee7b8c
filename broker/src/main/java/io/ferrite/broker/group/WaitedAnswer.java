package io.ferrite.broker.group;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import org.agrona.MutableDirectBuffer;

/**
 * The answer to a request the coordinator may make wait (a JoinGroup until the rebalance completes,
 * a SyncGroup until the leader's assignment): the coordinator fills its waiter in under its lock,
 * so the network thread reads the waiter under the same lock when it polls.
 */
abstract class WaitedAnswer<W extends GroupCoordinator.Waiter> implements PendingResponse
{
    private final GroupCoordinator coordinator;
    final W waiter;
    final short version;

    WaitedAnswer(final GroupCoordinator coordinator, final W waiter, final short version)
    {
        this.coordinator = coordinator;
        this.waiter = waiter;
        this.version = version;
    }

    /** Writes the response from the waiter (called under the coordinator's lock) and returns where it ends. */
    abstract int write(MutableDirectBuffer out, int outOffset);

    @Override
    public final int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        synchronized (coordinator)
        {
            coordinator.applyAnsweredWrites(); // a SyncGroup waits for its leader's assignment to be written
            return waiter.done ? write(connection.out, outOffset) : NOT_READY;
        }
    }

    @Override
    public final long deadlineMs()
    {
        return Long.MAX_VALUE; // the coordinator always answers: by completing the rebalance or failing the member
    }

    /** The response now when the coordinator has it, else later: the connection waits for it. */
    final int answerOrDefer(final Connection connection, final int outOffset)
    {
        final int end = poll(connection, outOffset, 0);
        if (end != NOT_READY)
        {
            return end;
        }
        connection.defer(this);
        return RequestHandler.DEFERRED;
    }
}
