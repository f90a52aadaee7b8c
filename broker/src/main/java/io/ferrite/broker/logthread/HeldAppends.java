package io.ferrite.broker.logthread;

import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.replica.ReplicaStatus;
import io.ferrite.log.AppendResult;
import io.ferrite.log.PartitionLog;

import java.util.ArrayList;
import java.util.List;

/**
 * The appends a log thread holds until an fsync covers them ({@code ferrite.durability=fsync}), or
 * at acks=all on a partition with followers until the high watermark passes them or their request's
 * timeout ends (Kafka's delayed produce), in the order they came. Log thread only.
 */
final class HeldAppends
{
    private final List<AppendCommand> held = new ArrayList<>();
    private final CommandQueues queues;
    private final LogThreadFaults faults;

    HeldAppends(final CommandQueues queues, final LogThreadFaults faults)
    {
        this.queues = queues;
        this.faults = faults;
    }

    boolean isEmpty()
    {
        return held.isEmpty();
    }

    /** Held until an fsync covers it. */
    void hold(final AppendCommand command)
    {
        command.replicas = null;
        command.held = true;
        held.add(command);
    }

    /**
     * Held until the high watermark passes it (acks=all on a partition with followers: Kafka's delayed
     * produce), at most until {@code deadlineMs}. In fsync durability the high watermark is never above
     * what is durable, so this covers the fsync too.
     */
    void holdForReplicas(final AppendCommand command, final LeaderReplicas replicas, final long deadlineMs)
    {
        command.replicas = replicas;
        command.deadlineMs = deadlineMs;
        command.held = true;
        held.add(command);
    }

    /**
     * Sends back the held commands an fsync now covers, those of a log whose fsync failed — with
     * KAFKA_STORAGE_ERROR at once: no later fsync can cover them (see
     * {@link PartitionLog#fsyncFailure()}) — and those whose log closed with no fsync covering them
     * — with NOT_LEADER_OR_FOLLOWER, not OK: the partition went away (deleted, or the broker
     * stopping), which is Kafka's answer to a produce waiting in purgatory whose partition is no
     * longer hosted, and what an append arriving after the close gets (LOG_CLOSED).
     * KAFKA_STORAGE_ERROR would tell the client the disk failed, which a close is not. Checked in
     * this order because close sets the flag before its own flush: a batch that flush covered is
     * answered OK. Returns how many went back.
     */
    int completeDurable()
    {
        final int waiting = held.size();
        long nowMs = Long.MIN_VALUE; // read once, and only when a wait for the followers is not over
        try
        {
            // answer without changing the list, then drop what went back: a fault in the middle
            // leaves the list whole, and no command in it twice
            for (int i = 0; i < waiting; i++)
            {
                final AppendCommand command = held.get(i);
                try
                {
                    final PartitionLog log = command.partition.log;
                    final AppendResult r = command.result;
                    final LeaderReplicas replicas = command.replicas;
                    if ((replicas == null ? log.durableOffset() : log.highWatermark()) > r.lastOffset)
                    {
                        if (replicas != null && replicas.maximalIsrUnderMin(log.config().minInsyncReplicas))
                        {
                            // Kafka's DelayedProduce: committed, but the (maximal) ISR shrank below the minimum meanwhile
                            r.status = ReplicaStatus.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
                            r.message = LogThreadMessages.isrShrank(log, replicas.maximalIsrSize());
                        }
                        queues.answer(command);
                    }
                    else if (log.fsyncFailure() != null)
                    {
                        r.status = AppendResult.STORAGE_ERROR;
                        r.message = LogThreadMessages.fsyncFailed(log, r.firstOffset, r.lastOffset);
                        queues.answer(command);
                    }
                    else if (log.isClosed())
                    {
                        r.status = AppendResult.LOG_CLOSED;
                        r.message = LogThreadMessages.closedUnsynced(log, r.firstOffset, r.lastOffset);
                        queues.answer(command);
                    }
                    else if (replicas != null)
                    {
                        if (nowMs == Long.MIN_VALUE)
                        {
                            nowMs = System.currentTimeMillis();
                        }
                        if (nowMs >= command.deadlineMs)
                        {
                            r.status = ReplicaStatus.TIMED_OUT;
                            r.message = LogThreadMessages.followersLate(log, r.lastOffset);
                            queues.answer(command);
                        }
                    }
                }
                catch (final Throwable fault)
                {
                    LogThread.answerFault(queues, faults, command, LogThreadMessages.text("the answer of a held append to ", command.partition.log, ""), fault);
                }
            }
        }
        finally
        {
            dropReturned();
        }
        return waiting - held.size();
    }

    /**
     * This node no longer leads {@code partition} (it follows it now): every command held for it goes back
     * NOT_LEADER_OR_FOLLOWER at once, as Kafka's makeFollower completes the partition's delayed produces
     * (its check finds no local leader log). Never OK: the high watermark is now the new leader's, which
     * may pass offsets this node wrote and the new leader never had.
     */
    void answerPartition(final Partition partition)
    {
        try
        {
            for (int i = 0; i < held.size(); i++)
            {
                final AppendCommand command = held.get(i);
                if (command.partition == partition)
                {
                    command.result.status = ReplicaStatus.NOT_LEADER;
                    command.result.message = LogThreadMessages.text("this node no longer leads ", partition.log, "");
                    queues.answer(command);
                }
            }
        }
        finally
        {
            dropReturned();
        }
    }

    /** At the log thread's end: every held command not yet covered gets {@code status}. */
    void answerAll(final int status, final String message)
    {
        try
        {
            for (int i = 0; i < held.size(); i++)
            {
                final AppendCommand command = held.get(i);
                command.result.status = status;
                command.result.message = message;
                queues.answer(command);
            }
        }
        finally
        {
            dropReturned();
        }
    }

    /** Removes the held commands that went back, keeping the others in order (no allocation). */
    void dropReturned()
    {
        final int n = held.size();
        int kept = 0;
        for (int i = 0; i < n; i++)
        {
            final AppendCommand command = held.get(i);
            if (command.held)
            {
                held.set(kept++, command);
            }
        }
        while (held.size() > kept)
        {
            held.remove(held.size() - 1);
        }
    }
}
