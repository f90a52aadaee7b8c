package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import org.agrona.MutableDirectBuffer;

import java.util.List;

/**
 * The answer to a group write (OffsetCommit, DeleteGroups, OffsetDelete) once the log threads
 * answered its writes ({@link GroupStore.Write}): in flush durability once appended, in fsync
 * durability once the group fsync covers them (the log thread holds its answer until then). Until
 * then it is a {@link PendingResponse} the network thread polls when a log thread's answer to the
 * coordinator wakes it; each poll applies the answers that came back (under the coordinator's
 * lock), never waiting for them.
 */
final class AwaitingWrites implements PendingResponse
{
    /**
     * How long an answer waits for its writes: Kafka's offsets.commit.timeout.ms default. After it a
     * write is answered as Kafka answers one that timed out (COORDINATOR_NOT_AVAILABLE, so the client
     * retries); when its log thread answers it later, what it wrote is applied all the same, as Kafka
     * keeps a write it timed out on.
     */
    static final long TIMEOUT_MS = 5_000;

    /** Writes the response, given for each write (in the order given) NONE or the error it ended with. */
    interface Answer
    {
        int write(MutableDirectBuffer out, int outOffset, short[] outcomes);
    }

    private final GroupCoordinator coordinator;
    private final Answer answer;
    private final List<GroupStore.Write> writes;
    private final short[] outcomes;
    private final long deadlineMs;

    private AwaitingWrites(final GroupCoordinator coordinator, final Answer answer, final List<GroupStore.Write> writes,
        final long deadlineMs)
    {
        this.coordinator = coordinator;
        this.answer = answer;
        this.writes = writes;
        this.outcomes = new short[writes.size()];
        this.deadlineMs = deadlineMs;
    }

    /** The response now when every write is answered, else {@link RequestHandler#DEFERRED} with the connection waiting for it. */
    static int answerOrDefer(final GroupCoordinator coordinator, final List<GroupStore.Write> writes, final Answer answer,
        final Connection connection, final MutableDirectBuffer out, final int outOffset, final long nowMs)
    {
        final AwaitingWrites waiting = new AwaitingWrites(coordinator, answer, writes, nowMs + TIMEOUT_MS);
        final int end = waiting.poll(out, outOffset, nowMs);
        if (end != NOT_READY)
        {
            return end;
        }
        connection.defer(waiting);
        return RequestHandler.DEFERRED;
    }

    @Override
    public int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        return poll(connection.out, outOffset, nowMs);
    }

    private int poll(final MutableDirectBuffer out, final int outOffset, final long nowMs)
    {
        synchronized (coordinator)
        {
            coordinator.applyAnsweredWrites();
            for (int i = 0; i < outcomes.length; i++)
            {
                final GroupStore.Write w = writes.get(i);
                if (w.done)
                {
                    outcomes[i] = w.error;
                }
                else if (nowMs >= deadlineMs)
                {
                    outcomes[i] = Errors.COORDINATOR_NOT_AVAILABLE;
                }
                else
                {
                    return NOT_READY;
                }
            }
        }
        return answer.write(out, outOffset, outcomes);
    }

    @Override
    public long deadlineMs()
    {
        return deadlineMs;
    }
}
