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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

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
 * image's order; they change {@link #leading} and raise a flag, never queue a task (the request queue is bounded: a
 * load or an unload dropped by a full queue would be lost). At the start of each of its passes, before the requests
 * ({@link #reconcile}, a {@link io.ferrite.broker.coordinator.CoordinatorDuties#beforeCalls}), the agent brings what is
 * in memory in line with {@link #leading}: it unloads each partition no longer led, or led again after a resignation
 * (a new tenure: another node may have written to it meanwhile), before it loads any, then loads one partition led and
 * not loaded yet per pass (the requests of the groups loaded already run between two loads). A load that throws
 * leaves the partition's groups NOT_COORDINATOR until its next change of leadership (as Kafka's failed load).
 * {@link #error} is read on the agent.
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
    /**
     * A leadership of a partition here: its leader epoch, and its tenure, new at each lead that follows a resignation
     * (or none) and kept by a lead at a new epoch without a resignation between (memory is the log's then).
     */
    private record Lead(int epoch, long tenure)
    {
    }

    /** The partitions this node leads (any thread: the image's changes write it). */
    private final Map<Integer, Lead> leading = new ConcurrentHashMap<>();
    /** Tenures handed out so far. */
    private final AtomicLong tenures = new AtomicLong();
    /** Raised by each change of {@link #leading}, lowered by the agent as it reconciles memory with it. */
    private final AtomicBoolean changed = new AtomicBoolean();
    /** The partitions whose groups are in memory, by the tenure they were loaded in (agent only). */
    private final Map<Integer, Long> loaded = new HashMap<>();
    /** The partitions whose load threw, by the tenure it was in: NOT_COORDINATOR until it changes (agent only). */
    private final Map<Integer, Long> failed = new HashMap<>();

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

    /**
     * On the agent: NONE when this node coordinates {@code groupId} now, else NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS.
     * A null or empty id is NONE: the request's work answers INVALID_GROUP_ID, as Kafka checks the id first.
     */
    public short error(final String groupId)
    {
        if (!cluster || groupId == null || groupId.isEmpty())
        {
            return Errors.NONE;
        }
        final int partition = coordinator.offsetsPartitionOf(groupId);
        final Lead lead = leading.get(partition);
        if (lead == null || Long.valueOf(lead.tenure).equals(failed.get(partition)))
        {
            return Errors.NOT_COORDINATOR;
        }
        return Long.valueOf(lead.tenure).equals(loaded.get(partition)) ? Errors.NONE : Errors.COORDINATOR_LOAD_IN_PROGRESS;
    }

    /** Any thread: this node leads partition {@code partition} of {@code __consumer_offsets} at {@code leaderEpoch}; the agent loads it. */
    public void led(final int partition, final int leaderEpoch)
    {
        leading.compute(partition, (p, was) -> new Lead(leaderEpoch, was == null ? tenures.incrementAndGet() : was.tenure));
        changed();
    }

    /** Any thread: this node no longer leads partition {@code partition}; its groups are NOT_COORDINATOR, the agent unloads them. */
    public void resigned(final int partition)
    {
        if (leading.remove(partition) != null)
        {
            changed();
        }
    }

    private void changed()
    {
        changed.set(true);
        coordinator.agent().wake();
    }

    /**
     * On the agent, at the start of each pass: unloads what is no longer led (or led in another tenure), then loads one
     * partition led and not loaded; returns how many partitions it unloaded or loaded.
     */
    int reconcile()
    {
        if (!changed.get() || !changed.getAndSet(false)) // a plain read first: a single node's pass writes nothing here
        {
            return 0; // a change after this raises the flag again: the next pass sees it
        }
        int work = 0;
        for (final Iterator<Map.Entry<Integer, Long>> it = loaded.entrySet().iterator(); it.hasNext(); )
        {
            final Map.Entry<Integer, Long> e = it.next();
            final Lead lead = leading.get(e.getKey());
            if (lead == null || lead.tenure != e.getValue())
            {
                it.remove();
                unload(e.getKey());
                work++;
            }
        }
        failed.entrySet().removeIf(e ->
        {
            final Lead lead = leading.get(e.getKey());
            return lead == null || lead.tenure != e.getValue();
        });
        for (final Map.Entry<Integer, Lead> e : leading.entrySet())
        {
            final int partition = e.getKey();
            if (!loaded.containsKey(partition) && !failed.containsKey(partition))
            {
                load(partition, e.getValue());
                changed.set(true); // more may be due: the next pass looks again, after its requests
                return work + 1;
            }
        }
        return work;
    }

    private void load(final int partition, final Lead lead)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        try
        {
            if (topic == null || partition >= topic.partitions.length)
            {
                throw new IllegalStateException("led but not here");
            }
            coordinator.clock().update();
            final int records = GroupReplay.loadPartition(topic, coordinator.offsetsPartitionCount(), partition, groups, txnOffsets,
                coordinator.clock().wallMs());
            loaded.put(partition, lead.tenure);
            LOG.info("{}-{}: coordinator of its groups at leader epoch {} ({} records loaded)", GroupCoordinator.OFFSETS_TOPIC, partition,
                lead.epoch, records);
        }
        catch (final RuntimeException ex)
        {
            failed.put(partition, lead.tenure);
            unload(partition); // what the replay had put in memory
            LOG.error("{}-{}: the load of its groups at leader epoch {} failed: they are NOT_COORDINATOR here until its leadership " +
                "changes", GroupCoordinator.OFFSETS_TOPIC, partition, lead.epoch, ex);
        }
    }

    private void unload(final int partition)
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
