package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Iterator;
import java.util.Map;

/**
 * Which groups this node coordinates ({@link PartitionOwnership} of {@code __consumer_offsets}). Alone
 * ({@link GroupCoordinator#followLeaders} never called), every group: nothing is refused. In a cluster (issue 14), as
 * Kafka 4.4's group coordinator: the groups whose {@code __consumer_offsets} partition ({@link CoordinatorTopic#partitionFor})
 * this node leads. A new lead replays that partition's log into memory ({@link GroupReplay#loadPartition}); a lost
 * lead unloads its groups (their members waiting in a JoinGroup or SyncGroup are answered NOT_COORDINATOR, their
 * pending transactional offsets dropped), so the members look for the new coordinator.
 */
public final class GroupOwnership extends PartitionOwnership
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupOwnership.class);

    private final GroupCoordinator coordinator;
    private final TopicRegistry topics;
    private final Map<String, Group> groups;
    private final TxnOffsets txnOffsets;

    GroupOwnership(final GroupCoordinator coordinator, final TopicRegistry topics, final Map<String, Group> groups,
        final TxnOffsets txnOffsets)
    {
        super(GroupCoordinator.OFFSETS_TOPIC, "groups", () -> coordinator.agent().wake(), false); // Kafka's runtime: "already active"
        this.coordinator = coordinator;
        this.topics = topics;
        this.groups = groups;
        this.txnOffsets = txnOffsets;
    }

    /**
     * On the agent: NONE when this node coordinates {@code groupId} now, else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
     * A null or empty id is NONE: the request's work answers INVALID_GROUP_ID, as Kafka checks the id first.
     */
    public short error(final String groupId)
    {
        if (!followingLeaders() || groupId == null || groupId.isEmpty())
        {
            return Errors.NONE;
        }
        return partitionError(coordinator.offsetsPartitionOf(groupId));
    }

    @Override
    protected void load(final int partition, final int leaderEpoch)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null || partition >= topic.partitions.length)
        {
            throw new IllegalStateException("led but not here");
        }
        final int count = coordinator.offsetsCount().get();
        if (partition >= count)
        {
            // the topic grown (CreatePartitions) after its count was fixed: no group is placed here while this broker runs
            LOG.info("{}-{}: led, but groups are placed by the {} partitions fixed for this broker's life: none is here",
                GroupCoordinator.OFFSETS_TOPIC, partition, count);
            return;
        }
        coordinator.clock().update();
        final int records = GroupReplay.loadPartition(topic, count, partition, groups, txnOffsets,
            coordinator.clock().wallMs());
        LOG.info("{}-{}: coordinator of its groups at leader epoch {} ({} records loaded)", GroupCoordinator.OFFSETS_TOPIC, partition,
            leaderEpoch, records);
    }

    @Override
    protected void unload(final int partition)
    {
        int unloaded = 0;
        for (final Iterator<Map.Entry<String, Group>> it = groups.entrySet().iterator(); it.hasNext(); )
        {
            final Map.Entry<String, Group> e = it.next();
            if (coordinator.offsetsPartitionOf(e.getKey()) != partition)
            {
                continue;
            }
            for (final Member m : e.getValue().members.values())
            {
                if (m.awaitingJoin != null && !m.awaitingJoin.done)
                {
                    m.awaitingJoin.fail(Errors.NOT_COORDINATOR, m.memberId);
                }
                if (m.awaitingSync != null && !m.awaitingSync.done)
                {
                    m.awaitingSync.fail(Errors.NOT_COORDINATOR);
                }
            }
            it.remove();
            unloaded++;
        }
        txnOffsets.forget(groupId -> coordinator.offsetsPartitionOf(groupId) == partition);
        LOG.info("{}-{}: no longer its groups' coordinator ({} groups unloaded)", GroupCoordinator.OFFSETS_TOPIC, partition, unloaded);
    }
}
