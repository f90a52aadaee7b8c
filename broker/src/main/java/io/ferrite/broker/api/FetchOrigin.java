package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.message.FetchRequestDecoder;

/**
 * Who a Fetch comes from, and what that changes (Kafka's {@code FetchParams}). A consumer (replica id
 * -1) reads up to the high watermark, or the last stable offset under read_committed. A follower —
 * the request's {@code replica_id} before v15, {@code replica_state.replica_id} from v15 — reads up to
 * the log end with no isolation, and its fetch offset is its log end offset for the leader
 * ({@link LeaderReplicas#fetched}, with the broker epoch it names), recorded once per request, at its first read (Kafka does not
 * record it again when a delayed fetch completes). One per connection's fetch; network thread.
 */
final class FetchOrigin
{
    private static final int NO_REPLICA = -1;

    private int replicaId = NO_REPLICA;
    /** The broker epoch a follower's fetch names (v15's {@code replica_state.replica_epoch}); -1 for none. */
    private long replicaEpoch = -1;
    /** When a follower's fetch arrived (its fetch time for the leader). */
    private long nowMs;
    /** Set during the request's first pass: a follower's fetch offsets are recorded then. */
    boolean recording;

    void start(final FetchRequestDecoder decoder, final short version)
    {
        if (version >= 15)
        {
            final FetchRequestDecoder.ReplicaState state = decoder.replicaState();
            replicaId = state == null ? NO_REPLICA : state.replicaId();
            replicaEpoch = state == null ? -1 : state.replicaEpoch();
        }
        else
        {
            replicaId = decoder.replicaId();
            replicaEpoch = -1;
        }
        if (replicaId >= 0)
        {
            nowMs = System.currentTimeMillis();
        }
    }

    boolean follower()
    {
        return replicaId >= 0;
    }

    /**
     * Kafka's checks before a read ({@code Partition.fetchRecords}): the leader epoch the fetcher knows
     * (a negative one is no check) below this node's is FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH
     * ({@link Partition#leaderEpoch}); then a follower must be one of the partition's replicas, else
     * UNKNOWN_LEADER_EPOCH if it named an epoch, NOT_LEADER_OR_FOLLOWER if not (Kafka's
     * {@code followerReplicaOrThrow}). A partition this node follows is NOT_LEADER_OR_FOLLOWER to every fetch.
     */
    short check(final Partition partition, final int currentLeaderEpoch)
    {
        final short led = leaderCheck(partition, currentLeaderEpoch);
        if (led != Errors.NONE)
        {
            return led;
        }
        final LeaderReplicas replicas = partition.replicas();
        if (replicaId >= 0 && (replicas == null || replicas.follower(replicaId) == null))
        {
            return currentLeaderEpoch >= 0 ? Errors.UNKNOWN_LEADER_EPOCH : Errors.NOT_LEADER_OR_FOLLOWER;
        }
        return Errors.NONE;
    }

    /**
     * Kafka's {@code Partition.localLogWithEpochOrThrow} for a read that only a leader serves: a partition followed
     * here is NOT_LEADER_OR_FOLLOWER (no replica.selector.class: Kafka 4.4 answers so on a follower); a current
     * leader epoch (a negative one is no check) below the one this node leads at is FENCED_LEADER_EPOCH, above it
     * UNKNOWN_LEADER_EPOCH ({@link Partition#leaderEpoch}: a partition led alone is in its log's newest epoch); else NONE.
     */
    static short leaderCheck(final Partition partition, final int currentLeaderEpoch)
    {
        if (partition.followed() != null)
        {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        final int epoch = partition.leaderEpoch();
        if (currentLeaderEpoch >= 0 && currentLeaderEpoch != epoch)
        {
            return currentLeaderEpoch < epoch ? Errors.FENCED_LEADER_EPOCH : Errors.UNKNOWN_LEADER_EPOCH;
        }
        return Errors.NONE;
    }

    /** Where a read of {@code log} stops: the log end for a follower, else the last stable offset or the high watermark. */
    long bound(final PartitionLog log, final boolean committed)
    {
        return replicaId >= 0 ? log.logEndOffset() : committed ? log.transactions().lastStableOffset() : log.highWatermark();
    }

    /** A read of {@code partition} from {@code fetchOffset} succeeded: a follower's first records its position. */
    void read(final Partition partition, final long fetchOffset)
    {
        if (recording && replicaId >= 0)
        {
            final LeaderReplicas replicas = partition.replicas();
            final LeaderReplicas.Follower follower = replicas == null ? null : replicas.follower(replicaId);
            if (follower != null)
            {
                replicas.fetched(follower, fetchOffset, nowMs, partition.log.logEndOffset(), replicaEpoch);
            }
        }
    }
}
