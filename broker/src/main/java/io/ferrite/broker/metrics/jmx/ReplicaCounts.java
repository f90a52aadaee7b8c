package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

/**
 * Kafka's {@code ReplicaManager} gauges, counted over the published topics when queried: the partitions this node
 * hosts a replica of ({@link #hosted}), those it leads (alone it leads them all; in a cluster, those it does not follow) and those it leads
 * with fewer in-sync replicas than replicas.
 */
final class ReplicaCounts
{
    private ReplicaCounts()
    {
    }

    static Object partitions(final TopicRegistry topics)
    {
        int n = 0;
        for (final Topic t : topics.topics())
        {
            for (final Partition p : t.partitions)
            {
                if (hosted(p))
                {
                    n++;
                }
            }
        }
        return n;
    }

    /**
     * Whether this node hosts a replica of {@code p}, as Kafka counts them: every partition of a single node; in a
     * cluster, not those the registry holds (a topic's partitions are one dense array on every node) but the metadata
     * does not assign here ({@link FollowedPartition#unassigned}).
     */
    static boolean hosted(final Partition p)
    {
        final FollowedPartition followed = p.followed();
        return followed == null || !followed.unassigned;
    }

    static Object leaders(final TopicRegistry topics)
    {
        int n = 0;
        for (final Topic t : topics.topics())
        {
            for (final Partition p : t.partitions)
            {
                if (p.followed() == null)
                {
                    n++;
                }
            }
        }
        return n;
    }

    /** The partitions listed offline (their files failed, made at the next start: {@link Topic#isOffline}). */
    static Object offline(final TopicRegistry topics)
    {
        int n = 0;
        for (final Topic t : topics.topics())
        {
            if (t.hasOfflinePartitions())
            {
                n += t.plannedPartitions() - t.partitions.length;
            }
        }
        return n;
    }

    static Object underReplicated(final TopicRegistry topics)
    {
        int n = 0;
        for (final Topic t : topics.topics())
        {
            for (final Partition p : t.partitions)
            {
                final LeaderReplicas replicas = p.replicas();
                if (p.followed() == null && replicas != null && replicas.isrSize() < replicas.replicationFactor())
                {
                    n++;
                }
            }
        }
        return n;
    }
}
