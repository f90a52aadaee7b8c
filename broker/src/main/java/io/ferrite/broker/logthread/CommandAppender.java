package io.ferrite.broker.logthread;

import io.ferrite.broker.replica.LeaderDuty;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.replica.ReplicaStatus;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;

/**
 * A {@link LogThread}'s append of one command, and where its answer goes: refused before the append (a follower,
 * too few in-sync replicas at acks=all), answered at once, or held ({@link HeldAppends}) until an fsync covers the
 * batch (fsync durability) or the followers have it (acks=all); on one node it moves the high watermark. Runs on
 * the log thread only; a fault it throws is the caller's to answer.
 */
final class CommandAppender
{
    private final LogThread.Completion completion;
    private final HeldAppends held;
    private final LeaderDuty leaders;

    CommandAppender(final LogThread.Completion completion, final HeldAppends held, final LeaderDuty leaders)
    {
        this.completion = completion;
        this.held = held;
        this.leaders = leaders;
    }

    /** Appends; returns whether the answer must wait for an fsync (the command is then held). */
    boolean appendAndHold(final AppendCommand command)
    {
        final PartitionLog log = command.partition.log;
        final AppendResult r = command.result;
        final LeaderReplicas replicas = command.partition.replicas(); // null on a single node
        if (command.partition.followed() != null)
        {
            // Kafka's appendRecordsToLeader on a follower; its high watermark is the fetcher's to move
            r.status = ReplicaStatus.NOT_LEADER;
            r.message = LogThreadMessages.follows(log);
            return false;
        }
        if (replicas != null && command.acks == -1 && replicas.underMinIsr(log.config().minInsyncReplicas))
        {
            // Kafka's appendRecordsToLeader: refused before the append, nothing written
            r.status = ReplicaStatus.NOT_ENOUGH_REPLICAS;
            r.message = replicas.underMinIsrMessage(log, log.config().minInsyncReplicas);
            return false;
        }
        // a log whose fsync failed refuses the append itself (STORAGE_ERROR: see PartitionLog.fsyncFailure)
        if (command.marker)
        {
            if (command.coordinatorBatch)
            {
                log.transactions().appendAsCoordinator(command.buffer, command.offset, command.length, r);
            }
            else
            {
                log.transactions().appendMarker(command.producerId, command.producerEpoch, command.coordinatorEpoch, command.commit,
                    command.epochBump, r);
            }
        }
        else
        {
            log.transactions().append(command.buffer, command.offset, command.length, command.verification, r);
        }
        if (replicas != null)
        {
            return appendedWithFollowers(command, replicas);
        }
        if (log.config().fsyncDurability)
        {
            // the mode promises that nothing is acknowledged before an fsync covers it: at acks=1 as
            // at acks=all, and for a retry answered with the original's offsets too (the DUPLICATE
            // of a batch appended a moment ago; Kafka holds that answer until the high watermark,
            // here the durable offset, passes the batch). The high watermark moves after the fsync.
            if (command.acks != 0 && r.succeeded() && log.durableOffset() <= r.lastOffset)
            {
                held.hold(command);
                return true;
            }
        }
        else if (r.status == AppendResult.OK)
        {
            log.highWatermark(r.lastOffset + 1); // one node: what is appended is committed
            if (command.partition.hasParkedFetches())
            {
                completion.highWatermarkAdvanced(command.partition);
            }
        }
        return false;
    }

    /**
     * After an append to a partition with followers: the high watermark moves when the followers have it
     * ({@link LeaderDuty}); an acks=all answer waits until it passes the batch or the request's timeout
     * ends, an acks=1 answer is the leader's own (in fsync durability after the fsync, as on one node).
     */
    private boolean appendedWithFollowers(final AppendCommand command, final LeaderReplicas replicas)
    {
        final AppendResult r = command.result;
        final PartitionLog log = command.partition.log;
        final long nowMs = System.currentTimeMillis();
        final long highWatermark = r.status == AppendResult.OK ? leaders.appended(replicas, nowMs) : log.highWatermark();
        if (command.acks == -1 && r.succeeded() && highWatermark <= r.lastOffset)
        {
            held.holdForReplicas(command, replicas, nowMs + command.timeoutMs);
            return true;
        }
        if (command.acks == 1 && r.succeeded() && log.config().fsyncDurability && log.durableOffset() <= r.lastOffset)
        {
            held.hold(command);
            return true;
        }
        return false;
    }
}
