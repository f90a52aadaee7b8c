package io.ferrite.broker.cluster;

import io.ferrite.broker.topic.Topic;
import io.ferrite.replication.ClusterNode;

import java.util.Optional;

/**
 * Whether a local topic's logs go after the image took a replica of it from this node ({@link ClusterPartitions#stopped}):
 * Kafka's broker deletes a partition's log when the partition leaves the image or a reassignment moves the replica
 * away ({@code ReplicaManager.applyDelta}, {@code stopPartitions} with delete). Ferrite's topic registry holds a topic's
 * partitions as one dense array and deletes whole topics, so a replica moved away goes with its topic's logs once this
 * node holds no replica of any of the topic's partitions; while it still holds one, the moved-away partition's log
 * stays (not served: it is neither led nor followed here) until the topic's last replica here goes.
 */
enum LocalRemoval
{
    /** Kept: not this cluster's topic (another id: data of its own), or this node still holds one of its replicas. */
    KEEP(null),
    /** The topic left the image (deleted). */
    LEFT_IMAGE("no longer in the cluster's metadata"),
    /** The topic is in the image, and no partition of it has a replica on this node any more (reassigned away). */
    MOVED_AWAY("no replica of it on this node any more (reassigned)");

    final String reason;

    LocalRemoval(final String reason)
    {
        this.reason = reason;
    }

    /** The metadata image as a removal reads it (null while the node starts: the removal is decided once it joined). */
    interface Image
    {
        Optional<ClusterNode.TopicState> topic(String name);

        int nodeId();

        /** {@code node}'s image; null for null. */
        static Image of(final ClusterNode node)
        {
            return node == null ? null : new Image()
            {
                @Override
                public Optional<ClusterNode.TopicState> topic(final String name)
                {
                    return node.topic(name);
                }

                @Override
                public int nodeId()
                {
                    return node.nodeId();
                }
            };
        }
    }

    /** For {@code local} (null: none), whose image id seen here is {@code seen}, with {@code image} (never null). */
    static LocalRemoval of(final Topic local, final long[] seen, final Image image)
    {
        if (local == null || local.isDeleted() || seen == null || local.idMostSignificantBits != seen[0] ||
            local.idLeastSignificantBits != seen[1])
        {
            return KEEP;
        }
        final Optional<ClusterNode.TopicState> now = image.topic(local.name).filter(t ->
            t.idMsb() == local.idMostSignificantBits && t.idLsb() == local.idLeastSignificantBits);
        if (now.isEmpty())
        {
            return LEFT_IMAGE;
        }
        return holds(now.get(), image.nodeId()) ? KEEP : MOVED_AWAY;
    }

    /** Whether the image assigns {@code nodeId} a replica of one of {@code topic}'s partitions. */
    static boolean holds(final ClusterNode.TopicState topic, final int nodeId)
    {
        for (final ClusterNode.PartitionState p : topic.partitions())
        {
            for (final int replica : p.replicas())
            {
                if (replica == nodeId)
                {
                    return true;
                }
            }
        }
        return false;
    }
}
