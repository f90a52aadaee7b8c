package io.ferrite.client;

/**
 * A member giving up its partitions before it joins again, in the order of kafka-clients 4.4's
 * {@code ConsumerCoordinator.onJoinPrepare} with an eager assignor ({@code javap}): with auto-commit, the positions are
 * committed first ({@code maybeAutoCommitOffsetsAsync}, awaited; {@link CommitCalls.Mode#REVOKE}, so offsets the
 * application staged before go instead of its positions), then each partition is revoked
 * ({@link RebalanceListener#onRevoked}: a listener that reads the committed offsets there sees the positions), then the
 * offsets the listener staged are committed ({@link CommitCalls.Mode#STAGED}: what a kafka-clients listener does with
 * {@code commitSync} in {@code onPartitionsRevoked}; no request when it staged none). A commit that fails with a
 * retriable error (the coordinator moved or is loading, the request timed out, the connection was lost) is tried again
 * after {@code retry.backoff.ms}; another failure goes on to the next step, as kafka-clients "will continue to join
 * group". All within {@code max.poll.interval.ms} (the rebalance timeout) from the start: once it passes, a commit
 * still waiting is given up and the rest goes on without commits (the listener is still told, as kafka-clients tells
 * it after its join-prepare timer expired). The positions are dropped last. Single-threaded (the consumer's);
 * allocates nothing.
 */
final class Revocation
{
    private enum Step
    {
        /** With auto-commit: the positions committed before the listener is told. */
        COMMIT_POSITIONS,
        /** After the listener: the offsets it staged committed. */
        COMMIT_STAGED,
        DONE
    }

    private final ConsumerConfig config;
    private final GroupOffsets group;
    private final MemberAssignment partitions;
    private final OffsetCommitHandler done = this::onCommitDone;

    private Step step = Step.DONE;
    private long deadlineNs;
    private long notBeforeNs;
    private boolean commitStarted;
    private boolean commitPending;
    private short commitError;

    Revocation(final ConsumerConfig config, final GroupOffsets group, final MemberAssignment partitions)
    {
        this.config = config;
        this.group = group;
        this.partitions = partitions;
    }

    /** Starts giving up the partitions: the commits and the listener follow in doWork (the listener now, without auto-commit). */
    void start(final long nowNs)
    {
        deadlineNs = nowNs + config.maxPollIntervalMs * 1_000_000L;
        startCommit(nowNs);
        if (config.autoCommit())
        {
            step = Step.COMMIT_POSITIONS;
        }
        else
        {
            step = Step.COMMIT_STAGED;
            partitions.tell(false);
        }
    }

    /**
     * The consumer closes while the member holds its partitions ({@code stable}) or gives them up: the listener is told
     * unless the revocation told it already (its auto-commit still out), and the offsets it staged are committed, as
     * kafka-clients' close always revokes what it still holds. The revocation ends.
     */
    void close(final boolean stable)
    {
        if (stable || step == Step.COMMIT_POSITIONS)
        {
            partitions.tell(false);
        }
        if (stable || step != Step.DONE)
        {
            partitions.commitOnClose(CommitCalls.Mode.STAGED); // nothing staged: no request
        }
        group.forgetCommitCaller(done);
        step = Step.DONE;
    }

    /** Whether the positions were dropped: the member may join. */
    boolean finished()
    {
        return step == Step.DONE;
    }

    int doWork(final long nowNs)
    {
        if (step == Step.DONE)
        {
            return 0;
        }
        final CommitCalls.Mode mode = step == Step.COMMIT_POSITIONS ? CommitCalls.Mode.REVOKE : CommitCalls.Mode.STAGED;
        final int work = commit(nowNs, mode);
        if (work <= 0)
        {
            return -work;
        }
        group.forgetCommitCaller(done); // a commit given up at the deadline: its late answer tells no one
        if (step == Step.COMMIT_POSITIONS && group.membership.commitGeneration() < 0)
        {
            // lost instead when the commit's answer reset the generation (UNKNOWN_MEMBER_ID...), as onJoinPrepare
            // checks the generation again after its auto-commit; nothing more is committed after onPartitionsLost
            partitions.tell(true);
            partitions.drop();
            step = Step.DONE;
        }
        else if (step == Step.COMMIT_POSITIONS)
        {
            step = Step.COMMIT_STAGED;
            startCommit(nowNs);
            partitions.tell(false);
        }
        else
        {
            partitions.drop();
            step = Step.DONE;
        }
        return 1;
    }

    private void startCommit(final long nowNs)
    {
        notBeforeNs = nowNs;
        commitStarted = false;
        commitPending = false;
        commitError = ClientErrors.NONE;
    }

    /**
     * Runs this step's commit: 1 once it is over (succeeded, failed for good, or the deadline passed), else minus the work
     * done (0 or -1).
     */
    private int commit(final long nowNs, final CommitCalls.Mode mode)
    {
        if (nowNs - deadlineNs >= 0)
        {
            return 1;
        }
        if (commitPending)
        {
            return 0;
        }
        if (commitStarted && retriable(commitError))
        {
            commitStarted = false; // kafka-clients: "Will retry it", after retry.backoff.ms
            commitError = ClientErrors.NONE;
            notBeforeNs = nowNs + config.retryBackoffNs;
            return -1;
        }
        if (commitStarted)
        {
            return 1;
        }
        if (nowNs - notBeforeNs < 0 || group.commitOutstanding())
        {
            return 0; // the backoff, or the application's commit first: one commit at a time
        }
        commitStarted = true;
        commitPending = true;
        partitions.startCommit(done, mode); // may complete now (nothing to commit)
        return commitPending || retriable(commitError) ? -1 : 1;
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
