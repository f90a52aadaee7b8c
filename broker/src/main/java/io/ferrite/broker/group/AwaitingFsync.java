package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import org.agrona.MutableDirectBuffer;

import java.util.List;

/**
 * The answer to a group write (OffsetCommit, DeleteGroups, OffsetDelete) once its appends hold what
 * the durability mode promises: at once in flush durability, in fsync durability only when the group
 * fsync covers each of them. Then it is a {@link PendingResponse} the network thread polls when the
 * broker's durability listener wakes it, never blocking on the fsync.
 */
final class AwaitingFsync implements PendingResponse
{
    /**
     * How long an answer waits for its fsync: Kafka's offsets.commit.timeout.ms default. After it an
     * append is answered as Kafka answers a write that timed out (COORDINATOR_NOT_AVAILABLE, so the
     * client retries); what was appended stays applied, as Kafka keeps a write it timed out on.
     */
    static final long TIMEOUT_MS = 5_000;

    /** Writes the response, given for each append (in the order given) NONE or the error it ended with. */
    interface Answer
    {
        int write(MutableDirectBuffer out, int outOffset, short[] outcomes);
    }

    private final Answer answer;
    private final List<GroupStore.Appended> appends;
    private final short[] outcomes;
    private final long deadlineMs;

    private AwaitingFsync(final Answer answer, final List<GroupStore.Appended> appends, final long deadlineMs)
    {
        this.answer = answer;
        this.appends = appends;
        this.outcomes = new short[appends.size()];
        this.deadlineMs = deadlineMs;
    }

    /** The response now when no append waits for an fsync, else {@link RequestHandler#DEFERRED} with the connection waiting for it. */
    static int answerOrDefer(final List<GroupStore.Appended> appends, final Answer answer, final Connection connection,
        final MutableDirectBuffer out, final int outOffset, final long nowMs)
    {
        for (final GroupStore.Appended a : appends)
        {
            if (a.awaitsFsync())
            {
                connection.defer(new AwaitingFsync(answer, appends, nowMs + TIMEOUT_MS));
                return RequestHandler.DEFERRED;
            }
        }
        return answer.write(out, outOffset, new short[appends.size()]);
    }

    @Override
    public int poll(final Connection connection, final int outOffset, final long nowMs)
    {
        for (int i = 0; i < outcomes.length; i++)
        {
            final GroupStore.Appended a = appends.get(i);
            if (a.log().durableOffset() > a.lastOffset())
            {
                outcomes[i] = Errors.NONE;
            }
            else if (a.log().fsyncFailure() != null)
            {
                outcomes[i] = Errors.NOT_COORDINATOR; // never durable now: Kafka 4.4 maps a storage error on the offsets log so
            }
            else if (a.log().isClosed())
            {
                outcomes[i] = Errors.NOT_COORDINATOR; // closed before its fsync covered the append: as a write to an offline partition
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
        return answer.write(connection.out, outOffset, outcomes);
    }

    @Override
    public long deadlineMs()
    {
        return deadlineMs;
    }
}
