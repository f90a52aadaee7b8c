package io.ferrite.broker;

import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.DurabilityListener;
import io.ferrite.log.PartitionLog;

/**
 * What the group committer's thread does after an fsync: in fsync durability the high
 * watermark is what is on disk, moved by the partition's log thread ({@code LeaderDuty.durable}, its
 * one writer), which is woken with the acks=all answers it holds. The log manager is opened (and
 * recovers) before the topics and the log threads exist: until {@link #attach} it does nothing.
 */
final class DurabilityWakeups implements DurabilityListener
{
    private volatile TopicRegistry topics;
    private volatile LogThread[] logThreads;

    void attach(final TopicRegistry topics, final LogThread[] logThreads)
    {
        this.logThreads = logThreads;
        this.topics = topics;
    }

    @Override
    public void onFsyncFailed(final PartitionLog log, final Throwable cause)
    {
        // the log thread answers the appends held for that fsync at once (KAFKA_STORAGE_ERROR)
        final TopicRegistry registry = topics;
        final var topic = registry == null ? null : registry.topic(log.topic());
        final Partition partition = topic == null ? null : topic.partition(log.partition());
        if (partition != null)
        {
            logThreads[partition.owner].wake();
        }
    }

    @Override
    public void onDurable(final PartitionLog log, final long durableOffset)
    {
        final TopicRegistry registry = topics;
        if (registry == null)
        {
            return; // recovery, before the broker runs
        }
        final var topic = registry.topic(log.topic());
        final Partition partition = topic == null ? null : topic.partition(log.partition());
        final LeaderReplicas replicas = partition == null ? null : partition.replicas();
        if (partition != null && partition.followed() != null)
        {
            return; // a follower's high watermark is the leader's (FollowedPartition)
        }
        if (replicas != null)
        {
            replicas.nudge(); // with followers the log thread moves the high watermark: what is durable is one bound of it
        }
        else if (partition != null && log.config().fsyncDurability)
        {
            logThreads[partition.owner].leaders().durable(partition); // the log thread moves it: one writer
        }
        else if (log.config().fsyncDurability && durableOffset > log.highWatermark())
        {
            log.highWatermark(durableOffset); // a log outside the registry: no log thread owns it
        }
        if (partition != null)
        {
            logThreads[partition.owner].wake();
        }
    }
}
