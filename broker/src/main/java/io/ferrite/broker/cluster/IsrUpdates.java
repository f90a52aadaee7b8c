package io.ferrite.broker.cluster;

import io.ferrite.broker.ReplicaLeadership;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.replication.ClusterNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

/**
 * A leader's ISR proposals to the controller and the controller's answers ({@link ClusterPartitions}' part of Kafka's
 * {@code AlterPartitionManager} and {@code Partition.handleAlterPartitionUpdate}): proposals come on the log threads,
 * go to the controller without blocking, and a current answer is applied on the partition's log thread.
 */
final class IsrUpdates
{
    private static final Logger LOG = LoggerFactory.getLogger(IsrUpdates.class);

    private final TopicRegistry topics;
    private final ReplicaLeadership leadership;
    private final BiConsumer<Integer, Runnable> onOwner;
    private final Supplier<ClusterNode> node;
    /** {@link ClusterPartitions}' last state of each partition this node leads ("topic-partition"; any thread). */
    private final Map<String, ClusterNode.PartitionState> led;

    IsrUpdates(final TopicRegistry topics, final ReplicaLeadership leadership, final BiConsumer<Integer, Runnable> onOwner,
        final Supplier<ClusterNode> node, final Map<String, ClusterNode.PartitionState> led)
    {
        this.topics = topics;
        this.leadership = leadership;
        this.onOwner = onOwner;
        this.node = node;
        this.led = led;
    }

    /** A leader's ISR proposal (log thread): Kafka's AlterPartition to the controller; must not block. */
    void propose(final String topic, final int partition, final int leaderEpoch, final int[] isr)
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
                answered(topic, partition, committed);
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

    /**
     * The controller's answer to a proposal, applied only while it is current (Kafka's
     * {@code Partition.handleAlterPartitionUpdate}): the leadership it answers is still this node's at that leader epoch
     * and the partition epoch it committed is not older than the one known here (the image may have brought a newer
     * state first). The partition epoch known here moves to the answer's.
     */
    void answered(final String topic, final int partition, final ClusterNode.IsrAnswer committed)
    {
        final String key = topic + "-" + partition;
        final ClusterNode.PartitionState known = led.get(key);
        if (known == null || known.leaderEpoch() != committed.leaderEpoch() ||
            known.partitionEpoch() > committed.partitionEpoch())
        {
            LOG.info("{}: AlterPartition answer at leader epoch {} / partition epoch {} is stale (now {}): ignored", key,
                committed.leaderEpoch(), committed.partitionEpoch(), known == null ? "not led" :
                known.leaderEpoch() + " / " + known.partitionEpoch());
            return; // the metadata that made it stale ended the proposal (leads() applied the image's ISR)
        }
        led.replace(key, known, new ClusterNode.PartitionState(partition, known.leader(), committed.leaderEpoch(),
            committed.partitionEpoch(), known.replicas(), committed.isr(), known.offlineReplicas()));
        leadership.applyIsr(topic, partition, committed.isr()).exceptionally(error ->
        {
            LOG.warn("{}: applying the committed ISR {} failed", key, java.util.Arrays.toString(committed.isr()), error);
            return null;
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
