package io.ferrite.broker.cluster;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.group.GroupOwnership;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Where a group's coordinator is in a cluster, as Kafka 4.4 places it: the leader of partition
 * {@code abs(groupId.hashCode()) % partitions} of {@code __consumer_offsets}, an ordinary replicated topic of the
 * controller's. The first FindCoordinator that finds no such topic in the metadata image asks the controller to
 * create it ({@code offsets.topic.num.partitions}, {@code offsets.topic.replication.factor}, compacted: Kafka's
 * {@code AutoTopicCreationManager} for the internal topic) and is answered COORDINATOR_NOT_AVAILABLE, as are the
 * others until the image has the topic and the partition a leader with an endpoint. With fewer live brokers than
 * the replication factor the controller refuses it (INVALID_REPLICATION_FACTOR, Kafka's KRaft controller does not
 * cap it): FindCoordinator stays COORDINATOR_NOT_AVAILABLE and the next one asks again.
 */
final class GroupPlacement implements GroupOwnership.Locator
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupPlacement.class);

    private final Supplier<ClusterNode> node;
    private final int partitions;
    private final short replicationFactor;
    private final Map<String, String> configs;
    /** A creation asked and not answered yet: one at a time. */
    private final AtomicBoolean creating = new AtomicBoolean();

    GroupPlacement(final Supplier<ClusterNode> node, final int partitions, final short replicationFactor, final int segmentBytes)
    {
        this.node = node;
        this.partitions = partitions;
        this.replicationFactor = replicationFactor;
        this.configs = Map.of("cleanup.policy", "compact", "compression.type", "producer", "segment.bytes",
            Integer.toString(segmentBytes));
    }

    @Override
    public GroupOwnership.Located locate(final String groupId)
    {
        final ClusterNode joined = node.get();
        if (joined == null)
        {
            return notAvailable();
        }
        final ClusterNode.TopicState topic = joined.topic(GroupCoordinator.OFFSETS_TOPIC).orElse(null);
        if (topic == null)
        {
            create(joined);
            return notAvailable();
        }
        final int partition = CoordinatorTopic.partitionFor(groupId, topic.partitionCount());
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
                    return new GroupOwnership.Located(Errors.NONE, broker.id(), broker.host(), broker.port());
                }
            }
        }
        return notAvailable(); // no leader, or not live
    }

    private static GroupOwnership.Located notAvailable()
    {
        return new GroupOwnership.Located(Errors.COORDINATOR_NOT_AVAILABLE, -1, "", -1);
    }

    private void create(final ClusterNode joined)
    {
        if (!creating.compareAndSet(false, true))
        {
            return;
        }
        joined.createTopic(GroupCoordinator.OFFSETS_TOPIC, partitions, replicationFactor, configs).whenComplete((error, failure) ->
        {
            creating.set(false);
            if (failure != null)
            {
                LOG.warn("creating {} through the controller failed: {}", GroupCoordinator.OFFSETS_TOPIC, failure.toString());
            }
            else if (error != Errors.NONE && error != Errors.TOPIC_ALREADY_EXISTS)
            {
                LOG.warn("the controller refused {} ({} partitions, replication factor {}): error {}", GroupCoordinator.OFFSETS_TOPIC,
                    partitions, replicationFactor, error);
            }
            else
            {
                LOG.info("{} created through the controller ({} partitions, replication factor {})", GroupCoordinator.OFFSETS_TOPIC,
                    partitions, replicationFactor);
            }
        });
    }
}
