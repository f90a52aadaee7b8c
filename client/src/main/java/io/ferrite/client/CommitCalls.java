package io.ferrite.client;

import java.util.ArrayList;

/**
 * The consumer's calls on its group's offsets ({@link Consumer#commitAsync}, {@link Consumer#commitSync},
 * {@link Consumer#committed}): which offsets a commit takes, and the blocking calls, which run the consumer's duty
 * cycle on the caller's thread until the outcome is known, as kafka-clients' {@code commitSync} and
 * {@code committed} poll its network client (a cycle that did nothing is followed by {@link Thread#onSpinWait}).
 * Timeouts are milliseconds, not negative; a very long one ({@code Long.MAX_VALUE}) waits without end. Single-threaded
 * (the consumer's thread); {@code commitAsync} allocates nothing.
 */
final class CommitCalls
{
    /** {@link #syncError} until the commit of {@link #commitSync} completes. */
    private static final short PENDING = Short.MIN_VALUE;
    /** The longest wait a deadline compared with {@code System.nanoTime()} differences can hold (~146 years). */
    private static final long FOREVER_NS = Long.MAX_VALUE / 2;

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final Consumer consumer;
    private short syncError;
    private final OffsetCommitHandler syncHandler = (tag, error) -> syncError = error;

    CommitCalls(final ConsumerConfig config, final GroupOffsets group, final Consumer consumer)
    {
        this.config = config;
        this.group = group;
        this.consumer = consumer;
    }

    /** Which offsets a commit takes. */
    enum Mode
    {
        /** The staged offsets if any partition has one, else every position ({@link Consumer#commitAsync}). */
        APPLICATION,
        /** Every position: kafka-clients' auto-commit of {@code allConsumed()}. */
        POSITIONS,
        /**
         * Per partition its staged offset, else its position when auto-commit is on: the partitions given up in a
         * rebalance or on close (the listener stages offsets from {@link RebalanceListener#onRevoked}).
         */
        REVOKE,
        /** The staged offsets only: those the listener staged from {@link RebalanceListener#onRevoked}. */
        STAGED
    }

    /**
     * Sets each partition's {@link FetchPosition#committing} offset as {@code mode} says, and starts the commit; false
     * while one is outstanding. The staged offsets stay staged until a commit carrying them succeeds
     * ({@link GroupOffsets#onCommit}). With nothing to commit the handler is told NONE now.
     */
    boolean start(final ArrayList<FetchPosition> assigned, final OffsetCommitHandler handler, final long tag,
        final Mode mode)
    {
        if (group.commitOutstanding())
        {
            return false;
        }
        boolean staged = false;
        for (int i = 0; i < assigned.size(); i++)
        {
            staged |= assigned.get(i).commitStaged >= 0;
        }
        final boolean positions = mode != Mode.STAGED && (mode != Mode.REVOKE || config.autoCommit());
        int count = 0;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            final long position = positions && p.state == FetchPosition.State.FETCHING ? p.position : -1;
            p.committing = mode == Mode.APPLICATION ? (staged ? p.commitStaged : position) :
                (mode == Mode.REVOKE || mode == Mode.STAGED) && p.commitStaged >= 0 ? p.commitStaged : position;
            count += p.committing >= 0 ? 1 : 0;
        }
        if (count == 0)
        {
            handler.onComplete(tag, ClientErrors.NONE); // nothing to commit, as kafka-clients completes an empty commit
            return true;
        }
        return group.commit(handler, tag);
    }

    /**
     * A commit outstanding (a commitAsync's, or an earlier commitSync's that timed out in flight) is waited for first,
     * within the timeout, then this one is sent (kafka-clients 4.4's {@code commitOffsetsSync} waits for the pending
     * async commits first, and commits again after a timed-out commitSync).
     */
    void commitSync(final ArrayList<FetchPosition> assigned, final long timeoutMs, final Mode mode)
    {
        final long deadline = deadline(timeoutMs);
        while (group.commitOutstanding() && System.nanoTime() - deadline < 0)
        {
            dutyCycle();
        }
        syncError = PENDING;
        if (!start(assigned, syncHandler, 0, mode))
        {
            throw new OffsetCommitException(ClientErrors.REQUEST_TIMED_OUT, "Offsets of group " + group.groupId +
                " not committed within " + timeoutMs + " ms: an earlier commit (commitAsync, or a commitSync that " +
                "timed out) was still waiting for its answer");
        }
        while (true)
        {
            while (syncError == PENDING && System.nanoTime() - deadline < 0)
            {
                dutyCycle();
            }
            final short error = syncError;
            if (error == ClientErrors.NONE)
            {
                return;
            }
            if (error != PENDING && !retriable(error))
            {
                throw OffsetCommitException.of(group.groupId, error);
            }
            final long retryAt = System.nanoTime() + config.retryBackoffNs;
            if (error == PENDING || retryAt - deadline >= 0)
            {
                group.forgetCommitCaller(syncHandler);
                throw new OffsetCommitException(ClientErrors.REQUEST_TIMED_OUT, "Offsets of group " + group.groupId +
                    " not committed within " + timeoutMs + " ms (last error " + (error == PENDING ? "none" : error) + ")");
            }
            while (System.nanoTime() - retryAt < 0)
            {
                dutyCycle();
            }
            syncError = PENDING;
            group.commit(syncHandler, 0); // the same offsets (committing) again
        }
    }

    /** kafka-clients' commitSync retries a {@code RetriableException}; a lost connection is one (DisconnectException). */
    private static boolean retriable(final short error)
    {
        return ClientErrors.retriable(error) || error == ClientErrors.NETWORK_EXCEPTION;
    }

    long committed(final String topic, final int partition, final long timeoutMs)
    {
        final long deadline = deadline(timeoutMs);
        final CommittedOffsets c = group.committed;
        c.startLookup(topic, partition, System.nanoTime());
        try
        {
            while (!c.lookupDone())
            {
                if (System.nanoTime() - deadline >= 0)
                {
                    throw new OffsetCommitException(ClientErrors.REQUEST_TIMED_OUT, "The committed offset of " + topic +
                        "-" + partition + " in group " + group.groupId + " not read within " + timeoutMs + " ms");
                }
                dutyCycle();
            }
            if (c.lookupError() != ClientErrors.NONE)
            {
                throw OffsetCommitException.of(group.groupId, c.lookupError());
            }
            return c.lookupOffset();
        }
        finally
        {
            c.endLookup();
        }
    }

    /** {@code System.nanoTime()} at {@code timeoutMs} from now, saturated at {@link #FOREVER_NS}. */
    private static long deadline(final long timeoutMs)
    {
        if (timeoutMs < 0)
        {
            throw new IllegalArgumentException("timeout " + timeoutMs + " ms < 0");
        }
        return System.nanoTime() + (timeoutMs >= FOREVER_NS / 1_000_000L ? FOREVER_NS : timeoutMs * 1_000_000L);
    }

    private void dutyCycle()
    {
        if (consumer.doWork() == 0)
        {
            Thread.onSpinWait();
        }
    }
}
