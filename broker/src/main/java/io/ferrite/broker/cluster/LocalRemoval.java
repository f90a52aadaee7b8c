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

    /**
     * For {@code local} (null: none), whose image id seen here is {@code seen}, with the image of {@code cluster} (null
     * while the node starts: a replica stopped then is taken as its topic's deletion, as before reassignments were served).
     */
    static LocalRemoval of(final Topic local, final long[] seen, final ClusterNode cluster)
    {
        if (local == null || local.isDeleted() || seen == null || local.idMostSignificantBits != seen[0] ||
            local.idLeastSignificantBits != seen[1])
        {
            return KEEP;
        }
        final Optional<ClusterNode.TopicState> image = cluster == null ? Optional.empty() : cluster.topic(local.name).filter(t ->
            t.idMsb() == local.idMostSignificantBits && t.idLsb() == local.idLeastSignificantBits);
        if (image.isEmpty())
        {
            return LEFT_IMAGE;
        }
        for (final ClusterNode.PartitionState p : image.get().partitions())
        {
            for (final int replica : p.replicas())
            {
                if (replica == cluster.nodeId())
                {
                    return KEEP;
                }
            }
        }
        return MOVED_AWAY;
    }
}
