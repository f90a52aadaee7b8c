package io.ferrite.client;

import java.util.ArrayList;

/**
 * The consumer's calls on its group's offsets ({@link Consumer#commitAsync}, {@link Consumer#commitSync},
 * {@link Consumer#committed}): which offsets a commit takes, and the blocking calls, which run the consumer's duty
 * cycle on the caller's thread until the outcome is known, as kafka-clients' {@code commitSync} and
 * {@code committed} poll its network client. Single-threaded (the consumer's thread); {@code commitAsync} allocates
 * nothing.
 */
final class CommitCalls
{
    /** {@link #syncError} until the commit of {@link #commitSync} completes. */
    private static final short PENDING = Short.MIN_VALUE;

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

    /**
     * Sets each partition's {@link FetchPosition#committing} offset: the staged ones if any partition has one, else
     * each position (kafka-clients' {@code allConsumed}), and starts the commit; false while one is outstanding.
     */
    boolean commitAsync(final ArrayList<FetchPosition> assigned, final OffsetCommitHandler handler, final long tag)
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
        int count = 0;
        for (int i = 0; i < assigned.size(); i++)
        {
            final FetchPosition p = assigned.get(i);
            p.committing = staged ? p.commitStaged : p.state == FetchPosition.State.FETCHING ? p.position : -1;
            p.commitStaged = -1;
            count += p.committing >= 0 ? 1 : 0;
        }
        if (count == 0)
        {
            handler.onComplete(tag, ClientErrors.NONE); // nothing to commit, as kafka-clients completes an empty commit
            return true;
        }
        return group.commit(handler, tag);
    }

    void commitSync(final ArrayList<FetchPosition> assigned, final long timeoutMs)
    {
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
        syncError = PENDING;
        if (!commitAsync(assigned, syncHandler, 0))
        {
            throw new IllegalStateException("a commit is outstanding (commitAsync): one at a time");
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
        final long deadline = System.nanoTime() + timeoutMs * 1_000_000L;
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

    private void dutyCycle()
    {
        consumer.doWork();
    }
}
