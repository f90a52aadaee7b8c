package io.ferrite.replication;

import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.TopicImage;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.PartitionRegistration;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The metadata image's topics and partitions in the plain types {@link ClusterNode} hands out (Kafka's image classes stay here). */
final class ImageStates
{
    private ImageStates()
    {
    }

    /** {@code topic} with its partitions (their offline replicas) and its config overrides, as {@code image} has them. */
    static ClusterNode.TopicState describe(final MetadataImage image, final TopicImage topic)
    {
        final Map<Integer, BrokerRegistration> brokers = image.cluster().brokers();
        final List<ClusterNode.PartitionState> partitions = new ArrayList<>();
        topic.partitions().entrySet().stream().sorted(Map.Entry.comparingByKey())
            .forEach(entry -> partitions.add(state(entry.getKey(), entry.getValue(), offline(entry.getValue(), brokers))));
        return new ClusterNode.TopicState(topic.name(), topic.id().getMostSignificantBits(), topic.id().getLeastSignificantBits(),
            topic.partitions().size(), partitions, configs(image, topic.name()));
    }

    private static Map<String, String> configs(final MetadataImage image, final String topic)
    {
        return image.configs().configMapForResource(new ConfigResource(ConfigResource.Type.TOPIC, topic));
    }

    /** Partition {@code index} as registered, with {@code offline} replicas. */
    static ClusterNode.PartitionState state(final int index, final PartitionRegistration p, final int[] offline)
    {
        return new ClusterNode.PartitionState(index, p.leader, p.leaderEpoch, p.partitionEpoch, p.replicas, p.isr, offline);
    }

    /**
     * Kafka's offline replicas ({@code KRaftMetadataCache.getOfflineReplicas}): those whose broker is not registered
     * or is fenced (Kafka also counts a replica on a failed log directory: Ferrite has none to report yet).
     */
    private static int[] offline(final PartitionRegistration p, final Map<Integer, BrokerRegistration> brokers)
    {
        int count = 0;
        final int[] offline = new int[p.replicas.length];
        for (final int replica : p.replicas)
        {
            final BrokerRegistration broker = brokers.get(replica);
            if (broker == null || broker.fenced())
            {
                offline[count++] = replica;
            }
        }
        return java.util.Arrays.copyOf(offline, count);
    }
}
