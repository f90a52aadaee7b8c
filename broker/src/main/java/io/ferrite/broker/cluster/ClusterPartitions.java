package io.ferrite.broker.cluster;

import io.ferrite.broker.ReplicaLeadership;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicIds;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * What the metadata image's changes of this node's replicas do to its partitions, as Kafka's
 * {@code ReplicaManager.applyDelta}: a partition this node leads gets its local log (created with the controller's
 * topic id and the image's topic configs when absent; a local topic of that name with another id is kept and the
 * partition not served, as Kafka's {@code InconsistentTopicIdException}) and is led at the image's leader epoch with
 * its replicas and ISR
 * ({@link ReplicaLeadership#leadWithoutController}); an ISR change at the same leader epoch is applied
 * ({@link ReplicaLeadership#applyIsr}); a followed partition gets its local log and is followed from its leader's
 * broker listener ({@link #follow}); a replica no longer here is unled or unfollowed, and its topic's logs deleted when
 * the topic left the image or this node holds none of its replicas ({@link LocalRemoval}: every partition of it
 * stopped first; a removal heard while the node starts is decided with its image once it joined); a topic's config
 * changes reach its local logs ({@link #topicConfigs}). A partition
 * this node followed and now leads stops being followed first ({@link ReplicaLeadership#stopFollowing}), one it led
 * and now follows stops being led first (inside {@link ReplicaLeadership#followWithoutController}): both are tasks on
 * the partition's log thread, queued in this order before the new role's.
 *
 * <p>Threads: the changes arrive on the metadata loader's thread, in log order, and are handed to the
 * {@link AdminAgent} (the topic registry's single writer, in the same order) without waiting: the loader never
 * waits on disk work. The agent creates the logs and hands the leadership to the partition's log thread.
 * {@link #leaderEpochs}, {@link #followedAt} and {@link #unplaced} are the agent's alone. ISR proposals come on the log threads ({@link IsrProposals}) and go
 * to the controller as Kafka's {@code AlterPartitionManager} sends AlterPartition ({@link IsrUpdates}); the answer is
 * applied on the log thread. In cluster mode no local partition is served before the image leads or follows it here
 * ({@link Unassigned}); at the start the local topics the image does not place here are strays ({@link StrayTopics}).
 */
final class ClusterPartitions implements ClusterNode.LocalReplicas
{
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPartitions.class);

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final ReplicaLeadership leadership;
    private final BiConsumer<Integer, Runnable> onOwner;
    private final Supplier<ClusterNode> node;
    private final Supplier<LocalRemoval.Image> image;
    /** The leader epoch this node leads each partition at ("topic-partition"): the admin agent's. */
    private final Map<String, Integer> leaderEpochs = new HashMap<>();
    /** The id the image gave each topic name this node holds replicas of: the agent's. */
    private final Map<String, long[]> imageIds = new HashMap<>();
    /** Each topic's config overrides in the image ({@link #topicConfigs}): the agent's. */
    private final Map<String, Map<String, String>> imageConfigs = new HashMap<>();
    /** The leader and leader epoch this node follows each partition at ("topic-partition"): the admin agent's. */
    private final Map<String, long[]> followedAt = new HashMap<>();
    /**
     * The last lead or follow of each partition (by topic name, partition) found offline because a local topic of its
     * name has another id: made again once {@link #markStrays} renamed that topic (Kafka renames strays before the
     * first image reaches the replicas). The admin agent's.
     */
    private final Map<String, Map<Integer, Runnable>> offlineByName = new HashMap<>();
    /** Follows heard before the node was there to name the leader's endpoint (its start): the admin agent's. */
    private final Map<String, Runnable> unplaced = new HashMap<>();
    /** Topics a replica of which stopped before the node was there: their removal is decided at {@link #joined}. Agent's. */
    private final java.util.Set<String> undecided = new java.util.LinkedHashSet<>();
    /** The last state of each partition this node leads, for the partition epoch AlterPartition names. */
    private final Map<String, ClusterNode.PartitionState> led = new ConcurrentHashMap<>();
    /** The coordinators following their topic's leaders, by topic, once the broker named them (none in some tests). */
    private final Map<String, PartitionOwnership> coordinated = new ConcurrentHashMap<>();
    /** Orders a partition's load after its lead against its resignation by a follow or stop ({@link #resigned}). */
    private final Object ownershipChanges = new Object();
    private final IsrUpdates isrUpdates;
    private final IsrProposals proposals;

    ClusterPartitions(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
        final BiConsumer<Integer, Runnable> onOwner, final Supplier<ClusterNode> node)
    {
        this(topics, admin, leadership, onOwner, node, () -> LocalRemoval.Image.of(node.get()));
    }

    /** With the image the removals read given apart from the node (tests: null while it "starts"). */
    ClusterPartitions(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
        final BiConsumer<Integer, Runnable> onOwner, final Supplier<ClusterNode> node, final Supplier<LocalRemoval.Image> image)
    {
        this.topics = topics;
        this.admin = admin;
        this.leadership = leadership;
        this.onOwner = onOwner;
        this.node = node;
        this.image = image;
        this.isrUpdates = new IsrUpdates(topics, leadership, onOwner, node, led);
        this.proposals = isrUpdates::propose;
    }

    /**
     * A coordinator's ownership ({@code __consumer_offsets}' groups, {@code __transaction_state}'s transactions), told
     * when this node starts or stops leading a partition of its topic.
     */
    void coordinated(final PartitionOwnership owner)
    {
        coordinated.put(owner.topic(), owner);
    }

    /** This node no longer leads {@code topic}'s {@code partition} (or never did): its keys go elsewhere, when a coordinator's topic. */
    private void resigned(final String topic, final int partition)
    {
        final PartitionOwnership owner = coordinated.get(topic);
        if (owner != null)
        {
            synchronized (ownershipChanges)
            {
                owner.resigned(partition);
            }
        }
    }

    @Override
    public void leads(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        final String key = topic.name() + "-" + state.partition();
        led.put(key, state); // before the agent's turn: a proposal after it names this partition epoch
        admin.execute(() ->
        {
            final Partition p = localPartition(topic, state.partition());
            if (p == null)
            {
                offline(topic.name(), state.partition(), () -> leads(topic, state));
                return;
            }
            final Integer at = leaderEpochs.get(key);
            if (at != null && at == state.leaderEpoch())
            {
                // the same leadership, another partition epoch: the ISR the controller committed, or the replicas a
                // reassignment added (no new leader epoch for those)
                leadership.applyIsr(topic.name(), state.partition(), state.replicas(), state.isr()).exceptionally(failure ->
                {
                    LOG.warn("{}: applying the ISR {} failed", key, java.util.Arrays.toString(state.isr()), failure);
                    return null;
                });
                return;
            }
            leaderEpochs.put(key, state.leaderEpoch());
            unplaced.remove(key);
            if (followedAt.remove(key) != null)
            {
                // queued on the log thread before the stamp and the lead below: no fetch answer appends after them
                leadership.stopFollowing(topic.name(), state.partition()).exceptionally(failure ->
                {
                    LOG.error("{}: stopping following failed", key, failure);
                    return null;
                });
            }
            onOwner.accept(p.owner, () -> p.log.leaderEpoch(state.leaderEpoch())); // stamped on the batches it appends
            leadership.leadWithoutController(topic.name(), state.partition(), state.leaderEpoch(), state.replicas(),
                state.isr(), proposals).whenComplete((replicas, failure) ->
                {
                    if (failure != null)
                    {
                        LOG.error("{}: leading at epoch {} failed", key, state.leaderEpoch(), failure);
                    }
                    else
                    {
                        LOG.info("{}: leader at epoch {}, replicas {}, ISR {}", key, state.leaderEpoch(),
                            java.util.Arrays.toString(state.replicas()), java.util.Arrays.toString(state.isr()));
                        final PartitionOwnership owner = coordinated.get(topic.name());
                        if (owner != null)
                        {
                            synchronized (ownershipChanges)
                            {
                                // led on its log thread: its keys load now, unless a follow or stop came since (its
                                // resignation, after `led` changed, waits for this block or finds `led` changed)
                                final ClusterNode.PartitionState still = led.get(key);
                                if (still != null && still.leaderEpoch() == state.leaderEpoch())
                                {
                                    owner.led(state.partition(), state.leaderEpoch());
                                }
                            }
                        }
                    }
                });
        });
    }

    @Override
    public void follows(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        final String key = topic.name() + "-" + state.partition();
        led.remove(key);
        resigned(topic.name(), state.partition());
        admin.execute(() ->
        {
            final Partition p = localPartition(topic, state.partition());
            if (p == null)
            {
                offline(topic.name(), state.partition(), () -> follows(topic, state));
                return;
            }
            leaderEpochs.remove(key);
            follow(topic, state);
        });
    }

    /**
     * The image's ISR-eligible brokers changed (loader thread): published to the leaders here at once, without the
     * agent (no disk work; before this image's partition changes, which the agent applies later).
     */
    @Override
    public void eligibleBrokers(final int[] ids, final long[] epochs)
    {
        leadership.eligibleBrokers(ids, epochs);
        LOG.info("ISR-eligible brokers {}", java.util.Arrays.toString(ids));
    }

    /**
     * The node is there (its start returned; any thread): the follows heard before it, whose leader it names now, and the
     * removals of the topics whose replica stopped before it, decided with its image now.
     */
    void joined()
    {
        admin.execute(() ->
        {
            final List<Runnable> waiting = List.copyOf(unplaced.values());
            unplaced.clear();
            waiting.forEach(Runnable::run);
            final LocalRemoval.Image now = image.get();
            final List<String> held = List.copyOf(undecided);
            undecided.clear();
            held.forEach(topic -> remove(topic, now));
        });
    }

    /**
     * This node follows {@code topic}-{@code state.partition()}, led by {@code state.leader()} at
     * {@code state.leaderEpoch()} (agent thread), as Kafka's {@code ReplicaManager.applyLocalFollowersDelta}: its
     * fetcher copies the partition from the leader's broker listener as the image registers it, naming the topic by
     * the image's id. Another change at the same leader and leader epoch (ISR, ELR) changes nothing here. With no
     * leader (-1), or one the image lists no live endpoint for, nothing is fetched until the metadata names one.
     */
    private void follow(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        final String key = topic.name() + "-" + state.partition();
        final long[] at = followedAt.get(key);
        if (at != null && at[0] == state.leader() && at[1] == state.leaderEpoch())
        {
            return;
        }
        final ClusterNode cluster = node.get();
        if (cluster == null)
        {
            unplaced.put(key, () -> follow(topic, state)); // its start is under way: joined() follows it
            return;
        }
        unplaced.remove(key);
        final Optional<ClusterNode.BrokerEndpoint> leader = cluster.liveBrokers().stream()
            .filter(broker -> broker.id() == state.leader()).findFirst();
        if (leader.isEmpty())
        {
            LOG.warn("{}: follower at epoch {} of leader {}, which has no live endpoint: not fetching", key,
                state.leaderEpoch(), state.leader());
            if (at != null)
            {
                followedAt.remove(key);
                leadership.stopFollowing(topic.name(), state.partition());
            }
            return;
        }
        followedAt.put(key, new long[] {state.leader(), state.leaderEpoch()});
        final ClusterNode.BrokerEndpoint endpoint = leader.get();
        leadership.followWithoutController(topic.name(), state.partition(), state.leaderEpoch(), endpoint.id(),
            endpoint.host(), endpoint.port(), topic.idMsb(), topic.idLsb()).whenComplete((followed, failure) ->
            {
                if (failure != null)
                {
                    LOG.error("{}: following {} at epoch {} failed", key, endpoint, state.leaderEpoch(), failure);
                }
                else
                {
                    LOG.info("{}: follower of {} ({}:{}) at epoch {}", key, endpoint.id(), endpoint.host(), endpoint.port(),
                        state.leaderEpoch());
                }
            });
    }

    @Override
    public void stopped(final String topic, final int partition)
    {
        led.remove(topic + "-" + partition);
        resigned(topic, partition);
        admin.execute(() ->
        {
            offline(topic, partition, null);
            stopHere(topic, partition);
            final LocalRemoval.Image now = image.get();
            if (now == null)
            {
                undecided.add(topic); // the node is starting: decided with its image once it joined
                return;
            }
            remove(topic, now);
        });
    }

    /** This node no longer leads or follows {@code topic}-{@code partition} (agent thread): moved away, or going. */
    private void stopHere(final String topic, final int partition)
    {
        final String key = topic + "-" + partition;
        unplaced.remove(key);
        if (leaderEpochs.remove(key) != null | followedAt.remove(key) != null)
        {
            try
            {
                leadership.stopReplica(topic, partition); // lead or fetch no more
            }
            catch (final IllegalArgumentException gone)
            {
                // no such local partition: nothing of it was led or followed
            }
        }
    }

    /** Deletes {@code topic}'s local logs when {@code now} says ({@link LocalRemoval}); each partition stopped first. */
    private void remove(final String topic, final LocalRemoval.Image now)
    {
        final Topic local = topics.topic(topic);
        final LocalRemoval removal = LocalRemoval.of(local, imageIds.get(topic), now);
        if (removal == LocalRemoval.KEEP)
        {
            return;
        }
        if (removal == LocalRemoval.LEFT_IMAGE)
        {
            imageIds.remove(topic);
            imageConfigs.remove(topic);
        }
        for (int p = 0; p < local.partitions.length; p++)
        {
            stopHere(topic, p); // the others this image takes away too: their stopped() finds the topic gone
        }
        try
        {
            topics.delete(local);
            LOG.info("deleted {}: {}", topic, removal.reason);
        }
        catch (final java.io.IOException | RuntimeException ex)
        {
            LOG.error("deleting {} failed", topic, ex);
        }
    }

    /**
     * {@code topic}'s config overrides in the image changed: kept for its creation here, and applied to the local topic
     * when it is the image's (Kafka's {@code DynamicConfigPublisher} updating the logs' configs).
     */
    @Override
    public void topicConfigs(final String topic, final Map<String, String> configs)
    {
        admin.execute(() ->
        {
            final Map<String, String> overrides = TopicConfigs.local(topic, configs);
            imageConfigs.put(topic, overrides);
            final Topic local = topics.topic(topic);
            if (local == null || local.isDeleted() || !sameId(local, imageIds.get(topic)) || local.overrides.equals(overrides))
            {
                return;
            }
            try
            {
                if (topics.updateConfig(local, overrides) != null)
                {
                    LOG.info("{}: configs from the cluster's metadata {}", topic, overrides);
                }
            }
            catch (final java.io.IOException | RuntimeException ex)
            {
                LOG.error("{}: applying the configs {} failed", topic, overrides, ex);
            }
        });
    }

    /** At the start, once the image caught up: the local topics it does not place here are strays ({@link StrayTopics}). */
    void markStrays(final ClusterNode cluster)
    {
        admin.execute(() -> markStrays((msb, lsb) -> cluster.topic(msb, lsb)
            .filter(topic -> LocalRemoval.holds(topic, cluster.nodeId())).isPresent()));
    }

    /** {@link #markStrays(ClusterNode)}'s work, on the agent thread. */
    void markStrays(final StrayTopics.HeldIds image)
    {
        StrayTopics.mark(topics, image, name ->
        {
            final Map<Integer, Runnable> held = offlineByName.remove(name);
            if (held != null)
            {
                held.values().forEach(Runnable::run); // the image's topic of that name, made here now
            }
        });
    }

    /** Holds (or, {@code again} null, forgets) the last lead or follow of a partition that could not be made here. */
    private void offline(final String topic, final int partition, final Runnable again)
    {
        if (again != null)
        {
            offlineByName.computeIfAbsent(topic, name -> new HashMap<>()).put(partition, again);
            return;
        }
        final Map<Integer, Runnable> held = offlineByName.get(topic);
        if (held != null && held.remove(partition) != null && held.isEmpty())
        {
            offlineByName.remove(topic);
        }
    }

    private static boolean sameId(final Topic local, final long[] id)
    {
        return id != null && local.idMostSignificantBits == id[0] && local.idLeastSignificantBits == id[1];
    }

    /**
     * The local partition for {@code topic}-{@code partition} (agent thread): the topic created with the controller's
     * id and the image's configs when absent, and its partitions added up to the image's count. A local topic of that
     * name with another id is kept as it is and the partition is not served here (null): Kafka refuses to load a log
     * whose {@code partition.metadata} names another topic id ({@code InconsistentTopicIdException}) and never deletes
     * it.
     */
    private Partition localPartition(final ClusterNode.TopicState topic, final int partition)
    {
        try
        {
            final ClusterNode cluster = node.get();
            final int count = Math.max(partition + 1, cluster == null ? 0 :
                cluster.topic(topic.name()).map(ClusterNode.TopicState::partitionCount).orElse(0));
            final long[] id = {topic.idMsb(), topic.idLsb()};
            Topic local = topics.topic(topic.name());
            if (local != null && !sameId(local, id))
            {
                LOG.error("{}-{}: InconsistentTopicIdException: the local topic's id {} is not the cluster's {}: its data " +
                    "is kept and the partition is offline on this node", topic.name(), partition,
                    TopicIds.encode(local.idMostSignificantBits, local.idLeastSignificantBits),
                    TopicIds.encode(id[0], id[1]));
                return null;
            }
            imageIds.put(topic.name(), id);
            final Map<String, String> configs = imageConfigs.get(topic.name());
            if (local == null)
            {
                local = topics.create(topic.name(), count, configs != null ? configs : Map.of(), id);
            }
            else if (configs != null && !local.overrides.equals(configs))
            {
                // the node's own topic from before this start: the image's configs, changed while it was down
                final Topic updated = topics.updateConfig(local, configs);
                local = updated != null ? updated : local;
                LOG.info("{}: configs from the cluster's metadata {}", topic.name(), configs);
            }
            else if (local.partitions.length < count)
            {
                local = topics.addPartitions(local, count);
            }
            return local.partition(partition);
        }
        catch (final java.io.IOException | RuntimeException ex)
        {
            LOG.error("{}-{}: creating the local log failed", topic.name(), partition, ex);
            return null;
        }
    }

    /** The last state of {@code topic}-{@code partition} this node leads, null when it does not (for tests). */
    ClusterNode.PartitionState led(final String topic, final int partition)
    {
        return led.get(topic + "-" + partition);
    }

    /** The controller's answer to a proposal ({@link IsrUpdates#answered}). */
    void answered(final String topic, final int partition, final ClusterNode.IsrAnswer committed)
    {
        isrUpdates.answered(topic, partition, committed);
    }
}
