package io.ferrite.client;

/**
 * One assigned partition as the consumer sees it: the offset handed to the application next ({@link #position}),
 * the offset asked of the broker next ({@link #fetchOffset}, ahead of the position by the answers buffered), and
 * where it stands: waiting for a ListOffsets (a reset), fetching, or failed with an error for {@code poll} to
 * report. A seek bumps {@link #generation}, so records buffered for the old position are not handed out.
 */
final class FetchPosition
{
    enum State
    {
        /** Assigned with a {@code group.id}: its committed offset is to be asked for (OffsetFetch). */
        AWAIT_COMMITTED,
        /** An OffsetFetch for it is in flight; none committed leads to {@code auto.offset.reset}. */
        FETCHING_COMMITTED,
        /** No valid position: a ListOffsets for {@link #resetTimestamp} is due. */
        AWAIT_RESET,
        /** A ListOffsets for it is in flight. */
        RESETTING,
        FETCHING,
        /** Stopped with {@link #error}; a seek starts it again. */
        FAILED,
        /** No longer assigned (a rebalance took it): an answer in flight for it is stale. */
        REVOKED
    }

    /** ListOffsets' timestamps for the log start and end (kafka-clients' {@code ListOffsetsRequest}). */
    static final long EARLIEST_TIMESTAMP = -2L;
    static final long LATEST_TIMESTAMP = -1L;

    final TopicState topic;
    final int partition;
    State state = State.AWAIT_RESET;
    long resetTimestamp;
    /** Neither a fetch nor a ListOffsets for it before this (the backoff after a retriable error). */
    long notBeforeNs;
    long position;
    long fetchOffset;
    int generation;
    /** The node a Fetch naming it was sent to, -1 when none is in flight. */
    int fetchNode = -1;
    /** The node a ListOffsets naming it was sent to, -1 when none is in flight or a seek or reset came since. */
    int resetNode = -1;
    /**
     * The node whose answer last held records for it, buffered until handed out (between {@link #position} and
     * {@link #fetchOffset}); on a leader move they are dropped ({@link #leaderMoved}).
     */
    int bufferedNode = -1;
    long highWatermark = -1;
    long logStartOffset = -1;
    /** The offset the next commit takes for it ({@link Consumer#commitOffset}), -1 if none. */
    long commitStaged = -1;
    /** The offset of the commit under way for it, -1 if it has no part in one. */
    long committing = -1;
    /** Why it {@link State#FAILED}; {@link #reported} once {@code poll} has thrown it. */
    short error;
    boolean reported;

    FetchPosition(final TopicState topic, final int partition)
    {
        this.topic = topic;
        this.partition = partition;
    }

    /** The partition's state in the cluster's metadata, or null while its topic or partition is not known. */
    PartitionState metadata()
    {
        return partition < topic.partitions.length ? topic.partitions[partition] : null;
    }

    void seek(final long offset)
    {
        position = offset;
        fetchOffset = offset;
        restart(State.FETCHING);
    }

    /** Its first position is its committed offset, asked of the group coordinator. */
    void awaitCommitted()
    {
        restart(State.AWAIT_COMMITTED);
    }

    void reset(final long timestamp)
    {
        resetTimestamp = timestamp;
        restart(State.AWAIT_RESET);
    }

    /** No valid position: {@code auto.offset.reset} says where to go, or the partition fails with {@code errorIfNone}. */
    void reset(final ConsumerConfig.OffsetReset policy, final short errorIfNone)
    {
        switch (policy)
        {
            case EARLIEST:
                reset(EARLIEST_TIMESTAMP);
                break;
            case LATEST:
                reset(LATEST_TIMESTAMP);
                break;
            default:
                fail(errorIfNone);
                break;
        }
    }

    /**
     * The partition's leader is no longer the node whose answer holds its undelivered records: they are dropped and
     * it is fetched again from the position, from the new leader (as kafka-clients fetches no partition with buffered
     * data, the answers of two brokers can never hand out a partition's records out of order).
     */
    void leaderMoved()
    {
        fetchOffset = position;
        generation++;
        bufferedNode = -1;
    }

    private void restart(final State next)
    {
        state = next;
        resetNode = -1; // a ListOffsets in flight for the old reset is stale
        bufferedNode = -1;
        generation++; // what is buffered for the old position is not handed out
        error = ClientErrors.NONE;
        reported = false;
    }

    /** Given up in a rebalance: no longer in the consumer's list; what a Fetch or the cursor holds of it is stale. */
    void revoke()
    {
        restart(State.REVOKED);
    }

    void fail(final short errorCode)
    {
        state = State.FAILED;
        error = errorCode;
        reported = false;
    }
}
