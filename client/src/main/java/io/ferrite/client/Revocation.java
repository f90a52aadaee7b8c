package io.ferrite.client;

/**
 * A member giving up its partitions before it joins again, as kafka-clients 4.4's {@code ConsumerCoordinator
 * .onJoinPrepare} with an eager assignor: each partition revoked ({@link RebalanceListener#onRevoked}), then their
 * offsets committed ({@link CommitCalls.Mode#REVOKE}). A commit that fails with a retriable error (the coordinator
 * moved or is loading, the request timed out, the connection was lost) is tried again after {@code retry.backoff.ms};
 * the positions are dropped once it succeeds, fails otherwise, or {@code max.poll.interval.ms} (the rebalance timeout)
 * after the revocation began. Single-threaded (the consumer's); allocates nothing.
 */
final class Revocation
{
    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final MemberAssignment partitions;
    private final OffsetCommitHandler done = this::onCommitDone;

    private long deadlineNs;
    private long notBeforeNs;
    private boolean commitStarted;
    private boolean commitPending;
    private short commitError;
    private boolean finished;

    Revocation(final ConsumerConfig config, final GroupOffsets group, final MemberAssignment partitions)
    {
        this.config = config;
        this.group = group;
        this.partitions = partitions;
    }

    /** Starts giving up the partitions: each revoked (the listener may stage offsets); the commit follows in doWork. */
    void start(final long nowNs)
    {
        deadlineNs = nowNs + config.maxPollIntervalMs * 1_000_000L;
        notBeforeNs = nowNs;
        commitStarted = false;
        commitPending = false;
        commitError = ClientErrors.NONE;
        finished = false;
        partitions.tell(false);
    }

    /** Whether the positions were dropped: the member may join. */
    boolean finished()
    {
        return finished;
    }

    int doWork(final long nowNs)
    {
        final boolean late = nowNs - deadlineNs >= 0;
        if (!late && commitPending)
        {
            return 0;
        }
        if (!late && commitStarted && retriable(commitError))
        {
            commitStarted = false; // kafka-clients: "Will retry it", after retry.backoff.ms
            commitError = ClientErrors.NONE;
            notBeforeNs = nowNs + config.retryBackoffNs;
            return 1;
        }
        if (!late && !commitStarted)
        {
            if (nowNs - notBeforeNs < 0 || group.commitOutstanding())
            {
                return 0; // the backoff, or the application's commit first: one commit at a time
            }
            commitStarted = true;
            commitPending = true;
            partitions.startCommit(done); // may complete now (nothing to commit)
            return 1;
        }
        group.forgetCommitCaller(done);
        partitions.drop();
        finished = true;
        return 1;
    }

    private static boolean retriable(final short e)
    {
        return e != ClientErrors.NONE && (ClientErrors.retriable(e) || e == ClientErrors.NETWORK_EXCEPTION);
    }

    private void onCommitDone(final long tag, final short error)
    {
        commitPending = false;
        commitError = error;
    }
}
