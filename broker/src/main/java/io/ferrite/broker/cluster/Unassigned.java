package io.ferrite.broker.cluster;

import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

/**
 * In cluster mode no partition is served as a single node's: a partition is led here only when the metadata image
 * names this node its leader, and followed only when it names another. Every local partition (loaded at the start, or
 * made when a topic is created or grown here) is therefore marked followed with no leader and no fetcher until the
 * image leads or follows it ({@code ReplicaLeadership.leadWithoutController} / {@code followWithoutController} replace
 * the mark): a produce, a fetch, ListOffsets, DeleteRecords of it are NOT_LEADER_OR_FOLLOWER, as Kafka 4.4's broker
 * answers for a partition it does not lead, instead of taking records no replica of the cluster holds. This covers the
 * partitions of a topic the image never assigned here (the registry holds a topic's partitions as one dense array) and
 * a replica a reassignment moved away while this node was down or before its log went. The coordinators' topics are the
 * image's too (issue 14: {@code __consumer_offsets} and {@code __transaction_state} follow their leaders).
 */
final class Unassigned
{
    private Unassigned()
    {
    }

    /** Marks the loaded partitions (before the node serves or hears the image) and every partition made from now on. */
    static void untilAssigned(final TopicRegistry topics)
    {
        for (final Topic topic : topics.topics())
        {
            for (final Partition p : topic.partitions)
            {
                mark(p);
            }
        }
        topics.onAddedPartitions(Unassigned::mark);
    }

    /** {@code p} is not served until the image leads or follows it here. */
    static void mark(final Partition p)
    {
        if (p.followed() == null && p.replicas() == null)
        {
            p.followed(FollowedPartition.unassigned(p));
        }
    }
}
