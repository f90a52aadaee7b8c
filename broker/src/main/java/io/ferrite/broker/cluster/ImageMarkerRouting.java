package io.ferrite.broker.cluster;

import io.ferrite.broker.txn.MarkerRouting;
import io.ferrite.replication.ClusterNode;

import java.util.function.Supplier;

/**
 * A marker's route from the metadata image (issue 14): this node's log when the image names this node the partition's
 * leader, else that leader's broker endpoint while it is live; no leader (none, or not live) is tried again later, a
 * topic the image no longer has is gone.
 */
final class ImageMarkerRouting implements MarkerRouting
{
    private final Supplier<ClusterNode> node;
    private final int nodeId;

    ImageMarkerRouting(final Supplier<ClusterNode> node, final int nodeId)
    {
        this.node = node;
        this.nodeId = nodeId;
    }

    @Override
    public Route route(final String topic, final int partition)
    {
        final ClusterNode joined = node.get();
        if (joined == null)
        {
            return Route.NO_LEADER;
        }
        final ClusterNode.TopicState state = joined.topic(topic).orElse(null);
        if (state == null)
        {
            return Route.GONE;
        }
        for (final ClusterNode.PartitionState p : state.partitions())
        {
            if (p.partition() != partition)
            {
                continue;
            }
            if (p.leader() == nodeId)
            {
                return Route.LOCAL;
            }
            for (final ClusterNode.BrokerEndpoint broker : joined.liveBrokers())
            {
                if (broker.id() == p.leader())
                {
                    return new Route(broker.id(), broker.host(), broker.port());
                }
            }
            return Route.NO_LEADER;
        }
        return Route.GONE; // no such partition in the image: Kafka answers it UNKNOWN_TOPIC_OR_PARTITION and drops it
    }
}
