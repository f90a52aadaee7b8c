package io.ferrite.broker.cluster;

import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.config.DynamicBrokerConfigs;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.ToIntFunction;

/**
 * What the metadata image tells this node: its replicas' changes and the topics' configs go to
 * {@link ClusterPartitions}; the dynamic broker configs of this node and of the cluster default (Kafka's BROKER
 * ConfigRecords, resource name this node's id or "") to {@link DynamicBrokerConfigs#follow}, on the admin agent (the
 * dynamic configs' single writer; applying them restarts the cleaner, which the view's loader thread must not wait
 * for), in the image's order. Other brokers' configs are theirs.
 */
final class ImageChanges implements ClusterNode.LocalReplicas
{
    private static final Logger LOG = LoggerFactory.getLogger(ImageChanges.class);

    private final ClusterPartitions partitions;
    private final DynamicBrokerConfigs dynamic;
    private final AdminAgent admin;
    private final String nodeId;
    private final Consumer<ToIntFunction<String>> firstImage;

    ImageChanges(final ClusterPartitions partitions, final DynamicBrokerConfigs dynamic, final AdminAgent admin, final int nodeId,
        final Consumer<ToIntFunction<String>> firstImage)
    {
        this.firstImage = firstImage;
        this.partitions = partitions;
        this.dynamic = dynamic;
        this.admin = admin;
        this.nodeId = Integer.toString(nodeId);
    }

    @Override
    public void firstImage(final ToIntFunction<String> partitionCounts)
    {
        firstImage.accept(partitionCounts);
    }

    @Override
    public void leads(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        partitions.leads(topic, state);
    }

    @Override
    public void follows(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        partitions.follows(topic, state);
    }

    @Override
    public void stopped(final String topic, final int partition)
    {
        partitions.stopped(topic, partition);
    }

    @Override
    public void topicConfigs(final String topic, final Map<String, String> configs)
    {
        partitions.topicConfigs(topic, configs);
    }

    @Override
    public void eligibleBrokers(final int[] ids, final long[] epochs)
    {
        partitions.eligibleBrokers(ids, epochs);
    }

    @Override
    public void brokerConfigs(final String broker, final Map<String, String> configs)
    {
        final boolean perBroker = !broker.isEmpty();
        if (perBroker && !broker.equals(nodeId))
        {
            return;
        }
        final Map<String, String> copy = Map.copyOf(configs);
        admin.execute(() ->
        {
            try
            {
                dynamic.follow(perBroker, copy);
            }
            catch (final IOException | RuntimeException ex)
            {
                LOG.error("applying the cluster's dynamic broker configs {} of {} failed", copy.keySet(),
                    perBroker ? "this node" : "the cluster default", ex);
            }
        });
    }
}
