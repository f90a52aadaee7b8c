package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which groups this node coordinates. Alone ({@link GroupCoordinator#followLeaders} never called), every group: nothing is refused.
 * In a cluster (issue 14), as Kafka 4.4's group coordinator: the groups whose {@code __consumer_offsets} partition
 * ({@link CoordinatorTopic#partitionFor}) this node leads. When it becomes a partition's leader ({@link #led}, once
 * its log thread leads it) the coordinators' agent replays that partition's log into memory ({@link GroupReplay#loadPartition}),
 * and the partition's groups' requests are COORDINATOR_LOAD_IN_PROGRESS until then; when it stops leading it
 * ({@link #resigned}) they are NOT_COORDINATOR at once and the agent unloads the groups (their members waiting
 * in a JoinGroup or SyncGroup are answered NOT_COORDINATOR), so the members look for the new coordinator.
 * A group of a partition never led here is NOT_COORDINATOR.
 *
 * <p>{@link #led} and {@link #resigned} are called by the cluster's threads (the metadata image's changes), in the
 * image's order; the load and the unload run on the agent in that order. {@link #error} is read on the agent.
 */
public final class GroupOwnership
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupOwnership.class);

    /** Where a group's coordinator is, for FindCoordinator in a cluster. */
    public interface Locator
    {
        /** FindCoordinator's answer for a group: NONE with a node, or COORDINATOR_NOT_AVAILABLE (any network thread). */
        Located locate(String groupId);
    }

    /** A FindCoordinator answer: {@code error} NONE with the coordinator's node, id and address. */
    public record Located(short error, int nodeId, String host, int port)
    {
    }

    private final GroupCoordinator coordinator;
    private final TopicRegistry topics;
    private final Map<String, Group> groups;
    private final TxnOffsets txnOffsets;
    /** In a cluster: groups are coordinated where their partition is led. */
    private volatile boolean cluster;
    private volatile Locator locator;
    /** The partitions this node leads, by their leader epoch (any thread: the image's changes write it). */
    private final Map<Integer, Integer> leading = new ConcurrentHashMap<>();
    /** The partitions whose groups are in memory, by the leader epoch they were loaded at (agent only). */
    private final Map<Integer, Integer> loaded = new HashMap<>();

    GroupOwnership(final GroupCoordinator coordinator, final TopicRegistry topics, final Map<String, Group> groups,
        final TxnOffsets txnOffsets)
    {
        this.coordinator = coordinator;
        this.topics = topics;
        this.groups = groups;
        this.txnOffsets = txnOffsets;
    }

    /** Before the agent runs: this node is part of a cluster, and coordinates the groups of the partitions it leads only. */
    void followsLeaders(final Locator locator)
    {
        this.locator = locator;
        cluster = true;
    }

    /** FindCoordinator's locator in a cluster, or null alone (this node is every group's coordinator). */
    Locator locator()
    {
        return locator;
    }

    /** Whether groups are placed by the leaders of {@code __consumer_offsets} ({@link GroupCoordinator#followLeaders}). */
    public boolean followingLeaders()
    {
        return cluster;
    }

    /** On the agent: NONE when this node coordinates {@code groupId} now, else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS. */
    short error(final String groupId)
    {
        if (!cluster)
        {
            return Errors.NONE;
        }
        final int partition = coordinator.offsetsPartitionOf(groupId);
        final Integer epoch = leading.get(partition);
        if (epoch == null)
        {
            return Errors.NOT_COORDINATOR;
        }
        return epoch.equals(loaded.get(partition)) ? Errors.NONE : Errors.COORDINATOR_LOAD_IN_PROGRESS;
    }

    /** Any thread: this node leads partition {@code partition} of {@code __consumer_offsets} at {@code leaderEpoch}; the agent loads it. */
    public void led(final int partition, final int leaderEpoch)
    {
        leading.put(partition, leaderEpoch);
        if (!coordinator.agent().execute(() -> load(partition, leaderEpoch)))
        {
            LOG.error("{}-{}: the coordinators' agent did not take the load of its groups", GroupCoordinator.OFFSETS_TOPIC, partition);
        }
    }

    /** Any thread: this node no longer leads partition {@code partition}; its groups are NOT_COORDINATOR, the agent unloads them. */
    public void resigned(final int partition)
    {
        if (leading.remove(partition) == null)
        {
            return;
        }
        if (!coordinator.agent().execute(() -> unload(partition)))
        {
            LOG.error("{}-{}: the coordinators' agent did not take the unload of its groups", GroupCoordinator.OFFSETS_TOPIC, partition);
        }
    }

    private void load(final int partition, final int leaderEpoch)
    {
        if (!Integer.valueOf(leaderEpoch).equals(leading.get(partition)))
        {
            return; // resigned (or led again at another epoch) since: that change's own task follows
        }
        if (loaded.containsKey(partition))
        {
            loaded.put(partition, leaderEpoch); // led on without a resignation between: memory is the log's already
            return;
        }
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null || partition >= topic.partitions.length)
        {
            LOG.error("{}-{} led but not here: its groups not loaded", GroupCoordinator.OFFSETS_TOPIC, partition);
            return;
        }
        coordinator.clock().update();
        final int records = GroupReplay.loadPartition(topic, coordinator.offsetsPartitionCount(), partition, groups, txnOffsets,
            coordinator.clock().wallMs());
        loaded.put(partition, leaderEpoch);
        LOG.info("{}-{}: coordinator of its groups at leader epoch {} ({} records loaded)", GroupCoordinator.OFFSETS_TOPIC, partition,
            leaderEpoch, records);
    }

    private void unload(final int partition)
    {
        loaded.remove(partition);
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
