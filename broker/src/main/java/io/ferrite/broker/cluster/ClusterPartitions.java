package io.ferrite.broker.cluster;

import io.ferrite.broker.ReplicaLeadership;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
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
 * topic id when absent) and is led at the image's leader epoch with its replicas and ISR
 * ({@link ReplicaLeadership#leadWithoutController}); an ISR change at the same leader epoch is applied
 * ({@link ReplicaLeadership#applyIsr}); a followed partition gets its local log and is followed from its leader's
 * broker listener ({@link #follow}); a replica no longer here whose topic left the image is deleted. A partition
 * this node followed and now leads stops being followed first ({@link ReplicaLeadership#stopFollowing}), one it led
 * and now follows stops being led first (inside {@link ReplicaLeadership#followWithoutController}): both are tasks on
 * the partition's log thread, queued in this order before the new role's.
 *
 * <p>Threads: the changes arrive on the metadata loader's thread, in log order, and are handed to the
 * {@link AdminAgent} (the topic registry's single writer, in the same order) without waiting: the loader never
 * waits on disk work. The agent creates the logs and hands the leadership to the partition's log thread.
 * {@link #leaderEpochs}, {@link #followedAt} and {@link #unplaced} are the agent's alone. ISR proposals come on the log threads ({@link IsrProposals}) and go
 * to the controller as Kafka's {@code AlterPartitionManager} sends AlterPartition; the answer is applied on the log
 * thread.
 */
final class ClusterPartitions implements ClusterNode.LocalReplicas
{
    private static final Logger LOG = LoggerFactory.getLogger(ClusterPartitions.class);

    private final TopicRegistry topics;
    private final AdminAgent admin;
    private final ReplicaLeadership leadership;
    private final BiConsumer<Integer, Runnable> onOwner;
    private final Supplier<ClusterNode> node;
    /** The leader epoch this node leads each partition at ("topic-partition"): the admin agent's. */
    private final Map<String, Integer> leaderEpochs = new HashMap<>();
    /** The leader and leader epoch this node follows each partition at ("topic-partition"): the admin agent's. */
    private final Map<String, long[]> followedAt = new HashMap<>();
    /** Follows heard before the node was there to name the leader's endpoint (its start): the admin agent's. */
    private final Map<String, Runnable> unplaced = new HashMap<>();
    /** The last state of each partition this node leads, for the partition epoch AlterPartition names. */
    private final Map<String, ClusterNode.PartitionState> led = new ConcurrentHashMap<>();
    private final IsrProposals proposals = this::propose;

    ClusterPartitions(final TopicRegistry topics, final AdminAgent admin, final ReplicaLeadership leadership,
        final BiConsumer<Integer, Runnable> onOwner, final Supplier<ClusterNode> node)
    {
        this.topics = topics;
        this.admin = admin;
        this.leadership = leadership;
        this.onOwner = onOwner;
        this.node = node;
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
                return;
            }
            final Integer at = leaderEpochs.get(key);
            if (at != null && at == state.leaderEpoch())
            {
                // the same leadership, another partition epoch: the ISR the controller committed
                leadership.applyIsr(topic.name(), state.partition(), state.isr()).exceptionally(failure ->
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
                    }
                });
        });
    }

    @Override
    public void follows(final ClusterNode.TopicState topic, final ClusterNode.PartitionState state)
    {
        final String key = topic.name() + "-" + state.partition();
        led.remove(key);
        admin.execute(() ->
        {
            final Partition p = localPartition(topic, state.partition());
            if (p == null)
            {
                return;
            }
            leaderEpochs.remove(key);
            follow(topic, state);
        });
    }

    /** The node is there (its start returned): the follows heard before it, whose leader it names now (any thread). */
    void joined()
    {
        admin.execute(() ->
        {
            final List<Runnable> waiting = List.copyOf(unplaced.values());
            unplaced.clear();
            waiting.forEach(Runnable::run);
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
        admin.execute(() ->
        {
            leaderEpochs.remove(topic + "-" + partition);
            unplaced.remove(topic + "-" + partition);
            if (followedAt.remove(topic + "-" + partition) != null && topics.topic(topic) != null)
            {
                try
                {
                    leadership.stopFollowing(topic, partition); // moved away: fetch no more
                }
                catch (final IllegalArgumentException gone)
                {
                    // the local topic has fewer partitions: nothing of it was followed
                }
            }
            final Topic local = topics.topic(topic);
            final ClusterNode cluster = node.get();
            // Kafka deletes the partition's log; Ferrite's registry deletes whole topics: once the topic left the image
            // (or is another topic of the same name). A replica moved away by a reassignment stays on disk.
            if (local == null || local.isDeleted() || cluster != null && cluster.topic(topic)
                .filter(t -> t.idMsb() == local.idMostSignificantBits && t.idLsb() == local.idLeastSignificantBits).isPresent())
            {
                return;
            }
            try
            {
                topics.delete(local);
                LOG.info("deleted {}: no longer in the cluster's metadata", topic);
            }
            catch (final java.io.IOException | RuntimeException ex)
            {
                LOG.error("deleting {} failed", topic, ex);
            }
        });
    }

    /**
     * The local partition for {@code topic}-{@code partition} (agent thread): the topic created with the controller's
     * id when absent (a local topic of that name with another id, an earlier incarnation, is deleted first), and its
     * partitions added up to the image's count.
     */
    private Partition localPartition(final ClusterNode.TopicState topic, final int partition)
    {
        try
        {
            final ClusterNode cluster = node.get();
            final int count = Math.max(partition + 1, cluster == null ? 0 :
                cluster.topic(topic.name()).map(ClusterNode.TopicState::partitionCount).orElse(0));
            Topic local = topics.topic(topic.name());
            if (local != null && (local.idMostSignificantBits != topic.idMsb() || local.idLeastSignificantBits != topic.idLsb()))
            {
                LOG.info("{}: the local topic has another id than the cluster's: deleting it", topic.name());
                topics.delete(local);
                local = null;
            }
            if (local == null)
            {
                local = topics.create(topic.name(), count, Map.of(), new long[] {topic.idMsb(), topic.idLsb()});
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

    /** A leader's ISR proposal (log thread): Kafka's AlterPartition to the controller; must not block. */
    private void propose(final String topic, final int partition, final int leaderEpoch, final int[] isr)
    {
        final ClusterNode cluster = node.get();
        final ClusterNode.PartitionState state = led.get(topic + "-" + partition);
        if (cluster == null || state == null || state.leaderEpoch() != leaderEpoch)
        {
            failed(topic, partition); // no longer this leadership: the next metadata says what is
            return;
        }
        cluster.alterPartition(topic, partition, leaderEpoch, state.partitionEpoch(), isr).whenComplete((committed, failure) ->
        {
            if (failure == null)
            {
                leadership.applyIsr(topic, partition, committed);
                return;
            }
            final String error = failure.getClass().getSimpleName();
            // Kafka's AlterPartitionManager: the leader's view is stale; the metadata that follows brings the partition's
            // state (leads() at the same epoch applies its ISR, a new epoch leads or follows anew)
            if (error.equals("InvalidUpdateVersionException") || error.equals("FencedLeaderEpochException"))
            {
                LOG.info("{}-{}: AlterPartition {}: waiting for the metadata", topic, partition, error);
                return;
            }
            LOG.warn("{}-{}: AlterPartition failed: {}", topic, partition, failure.toString());
            failed(topic, partition);
        });
    }

    /** Lets the leader propose again (on its log thread). */
    private void failed(final String topic, final int partition)
    {
        final Topic t = topics.topic(topic);
        final Partition p = t == null ? null : t.partition(partition);
        if (p != null)
        {
            onOwner.accept(p.owner, () ->
            {
                final LeaderReplicas replicas = p.replicas();
                if (replicas != null)
                {
                    replicas.proposalFailed();
                }
            });
        }
    }
}
