package io.ferrite.broker.coordinator;

import io.ferrite.broker.Errors;

import java.util.List;

/**
 * The outcome of a coordinator write request (OffsetCommit, DeleteGroups, OffsetDelete): what the
 * coordinator answered at once ({@code value}), final once the log threads answered its writes
 * ({@link CoordinatorLog.Write}): in flush durability once appended, in fsync durability once the group
 * fsync covers them (the log thread holds its answer until then). The agent asks {@link #complete}
 * after every pass that changed anything and at every tick; the network thread writes the response
 * from {@link #value} and {@link #outcomes} once its {@link CoordinatorCall} is published.
 */
public final class AwaitingWrites<T> implements CoordinatorCall.Outcome
{
    /**
     * How long an answer waits for its writes: Kafka's offsets.commit.timeout.ms default. After it a
     * write is answered as Kafka answers one that timed out (COORDINATOR_NOT_AVAILABLE, so the client
     * retries); when its log thread answers it later, what it wrote is applied all the same, as Kafka
     * keeps a write it timed out on.
     */
    public static final long TIMEOUT_MS = 5_000;

    private final T value;
    private final List<CoordinatorLog.Write> writes;
    private final short[] outcomes;
    private final long deadlineMs;

    public AwaitingWrites(final T value, final List<CoordinatorLog.Write> writes, final long nowMs)
    {
        this.value = value;
        this.writes = writes;
        this.outcomes = new short[writes.size()];
        this.deadlineMs = nowMs + TIMEOUT_MS;
    }

    /** On the agent: true once every write is answered or timed out, its outcome then in {@link #outcomes}. */
    @Override
    public boolean complete(final long nowMs)
    {
        for (int i = 0; i < outcomes.length; i++)
        {
            final CoordinatorLog.Write w = writes.get(i);
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
                return false;
            }
        }
        return true;
    }

    /** What the coordinator answered when it made the writes. */
    public T value()
    {
        return value;
    }

    /** For each write (in the order given) NONE or the error it ended with; final once complete. */
    public short[] outcomes()
    {
        return outcomes;
    }

    /** The first write's outcome, or {@code none} when there was no write. */
    public short firstOutcome(final short none)
    {
        return outcomes.length == 0 ? none : outcomes[0];
    }
}
