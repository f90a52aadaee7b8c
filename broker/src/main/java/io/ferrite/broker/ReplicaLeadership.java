package io.ferrite.broker;

import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

import java.util.concurrent.CompletableFuture;

/**
 * Makes this node the leader of a partition with followers, and applies the ISR the controller
 * decided: each change runs as a task on the partition's log thread, the single writer of its
 * replication state ({@link io.ferrite.broker.replica.LeaderDuty}). Until the controller integration
 * (issue 14) calls these from the cluster metadata, nothing in the broker does: every partition is
 * led by this node alone, as before. Tests call {@link #leadWithoutController} to act a cluster out
 * with raw-protocol followers.
 */
public final class ReplicaLeadership
{
    private final TopicRegistry topics;
    private final LogThread[] logThreads;
    private final int nodeId;
    private final long lagMaxMs;

    ReplicaLeadership(final TopicRegistry topics, final LogThread[] logThreads, final int nodeId, final long lagMaxMs)
    {
        this.topics = topics;
        this.logThreads = logThreads;
        this.nodeId = nodeId;
        this.lagMaxMs = lagMaxMs;
    }

    /**
     * <b>Without a controller</b> (tests, and the controller integration's entry until it has its own):
     * this node leads {@code topic}-{@code partition} in {@code leaderEpoch} with {@code replicas} (this
     * node among them) and {@code isr}; ISR changes are proposed to {@code proposals}. Completes once the
     * log thread applied it; from then on acks=all waits for the ISR and follower fetches are served.
     */
    public CompletableFuture<LeaderReplicas> leadWithoutController(final String topic, final int partition, final int leaderEpoch,
        final int[] replicas, final int[] isr, final IsrProposals proposals)
    {
        final Partition p = partition(topic, partition);
        final LogThread owner = logThreads[p.owner];
        final CompletableFuture<LeaderReplicas> done = new CompletableFuture<>();
        owner.execute(() ->
        {
            try
            {
                final LeaderReplicas state = new LeaderReplicas(p, nodeId, leaderEpoch, replicas, isr, p.log.logEndOffset(),
                    System.currentTimeMillis(), lagMaxMs, proposals, owner.leaders());
                owner.leaders().lead(state);
                done.complete(state);
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    /** The ISR the controller decided for a partition this node leads (its answer to a proposal), applied on the log thread. */
    public CompletableFuture<Void> applyIsr(final String topic, final int partition, final int[] isr)
    {
        final Partition p = partition(topic, partition);
        final CompletableFuture<Void> done = new CompletableFuture<>();
        logThreads[p.owner].execute(() ->
        {
            try
            {
                final LeaderReplicas state = p.replicas();
                if (state == null)
                {
                    throw new IllegalStateException(p + " is not led with followers here");
                }
                state.isr(isr);
                state.nudge(); // the high watermark may move with the new ISR
                done.complete(null);
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    private Partition partition(final String topic, final int partition)
    {
        final Topic t = topics.topic(topic);
        final Partition p = t == null ? null : t.partition(partition);
        if (p == null)
        {
            throw new IllegalArgumentException("no partition " + topic + "-" + partition);
        }
        return p;
    }
}
