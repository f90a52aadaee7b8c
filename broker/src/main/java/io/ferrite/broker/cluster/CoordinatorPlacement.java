package io.ferrite.broker.cluster;

import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionCount;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Where a key's coordinator is in a cluster, as Kafka 4.4 places it: for a group, the leader of partition
 * {@code abs(groupId.hashCode()) % partitions} of {@code __consumer_offsets}; for a transactional id, the same of
 * {@code __transaction_state} — each an ordinary replicated topic of the controller's. The first FindCoordinator that
 * finds no such topic in the metadata image asks the controller to create it (its partitions, replication factor and
 * configs: Kafka's {@code AutoTopicCreationManager} for the internal topic) and is answered COORDINATOR_NOT_AVAILABLE,
 * as are the others until the image has the topic and the partition a leader with an endpoint. With fewer live
 * brokers than the replication factor the controller refuses it (INVALID_REPLICATION_FACTOR, Kafka's KRaft controller
 * does not cap it): FindCoordinator stays COORDINATOR_NOT_AVAILABLE and the next one asks again.
 */
final class CoordinatorPlacement implements PartitionOwnership.Locator
{
    private static final Logger LOG = LoggerFactory.getLogger(CoordinatorPlacement.class);

    private final Supplier<ClusterNode> node;
    private final String name;
    private final int partitions;
    private final short replicationFactor;
    private final Map<String, String> configs;
    /** The count keys are placed by, shared with the coordinator: never the image's live count (a grown topic's). */
    private final PartitionCount count;
    /** A creation asked and not answered yet: one at a time. */
    private final AtomicBoolean creating = new AtomicBoolean();

    /**
     * {@code name}'s keys, placed by {@code count} (fixed once, the coordinator's own count: PartitionCount), the
     * topic created with its setting, {@code replicationFactor} and {@code configs}.
     */
    CoordinatorPlacement(final Supplier<ClusterNode> node, final String name, final PartitionCount count, final short replicationFactor,
        final Map<String, String> configs)
    {
        this.count = count;
        this.node = node;
        this.name = name;
        this.partitions = count.configured();
        this.replicationFactor = replicationFactor;
        this.configs = Map.copyOf(configs);
    }

    @Override
    public PartitionOwnership.Located locate(final String key)
    {
        final ClusterNode joined = node.get();
        if (joined == null)
        {
            return notAvailable();
        }
        final ClusterNode.TopicState topic = joined.topic(name).orElse(null);
        if (topic == null)
        {
            create(joined);
            return notAvailable();
        }
        final int partition = CoordinatorTopic.partitionFor(key, count.fix(topic.partitionCount()));
        for (final ClusterNode.PartitionState state : topic.partitions())
        {
            if (state.partition() != partition)
            {
                continue;
            }
            for (final ClusterNode.BrokerEndpoint broker : joined.liveBrokers())
            {
                if (broker.id() == state.leader())
                {
                    return new PartitionOwnership.Located(Errors.NONE, broker.id(), broker.host(), broker.port());
                }
            }
        }
        return notAvailable(); // no leader, or not live
    }

    private static PartitionOwnership.Located notAvailable()
    {
        return new PartitionOwnership.Located(Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1);
    }

    private void create(final ClusterNode joined)
    {
        if (!creating.compareAndSet(false, true))
        {
            return;
        }
        joined.createTopic(name, partitions, replicationFactor, configs).whenComplete((error, failure) ->
        {
            creating.set(false);
            if (failure != null)
            {
                LOG.warn("creating {} through the controller failed: {}", name, failure.toString());
            }
            else if (error != Errors.NONE && error != Errors.TOPIC_ALREADY_EXISTS)
            {
                LOG.warn("the controller refused {} ({} partitions, replication factor {}): error {}", name,
                    partitions, replicationFactor, error);
            }
            else
            {
                LOG.info("{} created through the controller ({} partitions, replication factor {})", name,
                    partitions, replicationFactor);
            }
        });
    }
}
