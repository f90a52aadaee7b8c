package io.ferrite.broker;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.logthread.LogThread;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.replica.IsrEligibility;
import io.ferrite.broker.replica.IsrProposals;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.replica.ReplicaFetchers;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;

/**
 * Makes this node the leader of a partition with followers, and applies the ISR the controller
 * decided: each change runs as a task on the partition's log thread, the single writer of its
 * replication state ({@link io.ferrite.broker.replica.LeaderDuty}). Until the controller integration
 * (issue 14) calls these from the cluster metadata, nothing in the broker does: every partition is
 * led by this node alone, as before. Tests call {@link #leadWithoutController} to act a cluster out
 * with raw-protocol followers, and {@link #followWithoutController} to make this node a follower that
 * copies a partition from its leader ({@link ReplicaFetchers}).
 */
public final class ReplicaLeadership implements AutoCloseable
{
    private final TopicRegistry topics;
    private final LogThread[] logThreads;
    private final int nodeId;
    private final long lagMaxMs;
    private final ReplicaFetchers fetchers;
    /** The brokers the partitions led here may wait for and take into their ISR: every one until {@link #eligibleBrokers}. */
    private final IsrEligibility eligibility = new IsrEligibility();

    ReplicaLeadership(final TopicRegistry topics, final LogThread[] logThreads, final BrokerConfig config)
    {
        this.topics = topics;
        this.logThreads = logThreads;
        this.nodeId = config.nodeId();
        this.lagMaxMs = config.getLong(BrokerConfig.REPLICA_LAG_TIME_MAX_MS);
        this.fetchers = new ReplicaFetchers(nodeId, logThreads, FetcherSettings.of(config));
    }

    /** This node's follower fetchers. */
    public ReplicaFetchers fetchers()
    {
        return fetchers;
    }

    /**
     * <b>Without a controller</b>: this node follows {@code topic}-{@code partition} in {@code leaderEpoch},
     * copying it from broker {@code leaderId} at {@code leaderHost}:{@code leaderPort}, which knows the topic by
     * this node's topic id (with a controller every node has the cluster's one id; without, use the overload
     * that names the leader's). See the overload.
     */
    public CompletableFuture<FollowedPartition> followWithoutController(final String topic, final int partition,
        final int leaderEpoch, final int leaderId, final String leaderHost, final int leaderPort)
    {
        final Topic t = topics.topic(topic);
        if (t == null)
        {
            throw new IllegalArgumentException("no topic " + topic);
        }
        return followWithoutController(topic, partition, leaderEpoch, leaderId, leaderHost, leaderPort,
            t.idMostSignificantBits, t.idLeastSignificantBits);
    }

    /**
     * Makes this node a follower of {@code topic}-{@code partition} in {@code leaderEpoch}, the leader's topic id
     * given (Fetch from v13 names topics by id). One task on the partition's log thread, in this order: the
     * partition is marked followed — from then on a produce to it is NOT_LEADER_OR_FOLLOWER, a consumer's
     * fetch too, and its high watermark is the one its fetcher gets from the leader — then the leader's
     * replication state goes (this node no longer leads it: the acks=all produces it held are answered
     * NOT_LEADER_OR_FOLLOWER at once, as Kafka's makeFollower does), and the partition is registered with the
     * fetcher for {@code leaderId}, which truncates the log where it diverges from the leader's.
     * Completes once registered.
     */
    public CompletableFuture<FollowedPartition> followWithoutController(final String topic, final int partition,
        final int leaderEpoch, final int leaderId, final String leaderHost, final int leaderPort, final long leaderTopicIdMsb,
        final long leaderTopicIdLsb)
    {
        final Partition p = partition(topic, partition);
        final LogThread owner = logThreads[p.owner];
        final InetSocketAddress address = new InetSocketAddress(leaderHost, leaderPort);
        final CompletableFuture<FollowedPartition> done = new CompletableFuture<>();
        owner.execute(() ->
        {
            try
            {
                final FollowedPartition before = p.followed();
                final FollowedPartition state = new FollowedPartition(p, leaderId, leaderEpoch, leaderTopicIdMsb, leaderTopicIdLsb);
                p.followed(state); // before the unlead: no moment with neither state, when one node would move its high watermark
                owner.leaders().unlead(p);
                // the epoch is not assigned in this log's epoch cache (Kafka's makeFollower does not): the cache holds
                // the epochs of the batches it has, so the last fetched epoch its fetcher sends is the last batch's
                if (before != null)
                {
                    fetchers.remove(before);
                }
                fetchers.add(state, address);
                done.complete(state);
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    /**
     * This node stops following {@code topic}-{@code partition} (it was moved away, or is about to lead it):
     * its fetcher no longer asks for it, and a fetch answer under way appends nothing more. Completes on the
     * partition's log thread once its fetcher dropped it. It stays marked followed (its stopped state): it
     * is led by no one here, so a produce to it stays NOT_LEADER_OR_FOLLOWER — never taken as a single node's
     * — until {@link #leadWithoutController} leads it (which stops following by itself).
     */
    public CompletableFuture<Void> stopFollowing(final String topic, final int partition)
    {
        return stop(topic, partition, false);
    }

    /**
     * This node no longer holds a replica of {@code topic}-{@code partition} (a reassignment moved it away): led here, it
     * is led no more (the acks=all produces held for it go back NOT_LEADER_OR_FOLLOWER, as Kafka's {@code stopPartitions}),
     * followed, its fetcher drops it. Completes on the partition's log thread.
     */
    public CompletableFuture<Void> stopReplica(final String topic, final int partition)
    {
        return stop(topic, partition, true);
    }

    private CompletableFuture<Void> stop(final String topic, final int partition, final boolean unlead)
    {
        final Partition p = partition(topic, partition);
        final Topic t = topics.topic(topic); // here: its logs may be deleted right after (a replica moved away)
        final LogThread owner = logThreads[p.owner];
        final CompletableFuture<Void> done = new CompletableFuture<>();
        owner.execute(() ->
        {
            try
            {
                final LeaderReplicas led = p.replicas();
                if (unlead && led != null)
                {
                    // marked followed with no fetcher, before the unlead: a produce here is NOT_LEADER_OR_FOLLOWER from
                    // now on, never taken as a single node's
                    p.followed(new FollowedPartition(p, -1, led.leaderEpoch, t.idMostSignificantBits, t.idLeastSignificantBits));
                    owner.leaders().unlead(p);
                    done.complete(null);
                    return;
                }
                final FollowedPartition state = p.followed();
                if (state != null)
                {
                    fetchers.remove(state); // marks it removed: its pending answer appends nothing
                }
                done.complete(null);
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    /** Stops the fetchers: before the log threads stop. */
    @Override
    public void close()
    {
        fetchers.close();
    }

    /**
     * <b>Without a controller</b> (tests, and the controller integration's entry until it has its own):
     * this node leads {@code topic}-{@code partition} in {@code leaderEpoch} with {@code replicas} (this
     * node among them) and {@code isr}; ISR changes are proposed to {@code proposals}. One task on the log
     * thread: a partition followed here stops being followed first (its fetcher drops it, as Kafka's
     * makeLeader removes the fetcher under the partition's lock), the log's leader epoch becomes {@code leaderEpoch}
     * (stamped on its batches, assigned at its log end in the epoch cache, as Kafka's makeLeader), then the leader
     * state is installed.
     * Completes once applied; from then on acks=all waits for the ISR and follower fetches are served.
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
                p.log.leaderEpoch(leaderEpoch);
                final LeaderReplicas state = new LeaderReplicas(p, nodeId, leaderEpoch, replicas, isr, p.log.logEndOffset(),
                    System.currentTimeMillis(), lagMaxMs, proposals, owner.leaders(), eligibility);
                final FollowedPartition followed = p.followed();
                if (followed != null)
                {
                    fetchers.remove(followed); // its pending answer appends nothing into the log this node now leads
                }
                owner.leaders().lead(state); // replicas before followed goes: never a moment with neither state
                p.followed(null);
                done.complete(state);
            }
            catch (final RuntimeException ex)
            {
                done.completeExceptionally(ex);
            }
        });
        return done;
    }

    /**
     * The metadata image's brokers changed (metadata loader's thread): those registered, unfenced and not in
     * controlled shutdown are {@code ids} with broker epochs {@code epochs}, the only ones the partitions led here
     * wait for outside their ISR or take into it (Kafka's {@code isReplicaIsrEligible}). Published before the
     * partitions' changes of the same image; every log thread then looks at its led partitions again, so a high
     * watermark held by a broker just fenced moves at once. No wait, no lock on the log threads' path.
     */
    public void eligibleBrokers(final int[] ids, final long[] epochs)
    {
        eligibility.publish(ids, epochs);
        for (final LogThread thread : logThreads)
        {
            thread.leaders().lookAgain();
        }
    }

    /** The ISR the controller decided for a partition this node leads (its answer to a proposal), applied on the log thread. */
    public CompletableFuture<Void> applyIsr(final String topic, final int partition, final int[] isr)
    {
        return applyIsr(topic, partition, null, isr);
    }

    /**
     * The replica set ({@code replicas}; null: unchanged) and ISR the metadata gives a partition this node leads at the
     * same leader epoch, applied on the log thread: a reassignment that adds replicas changes the set without a new
     * epoch, and the leader then serves the added replicas' fetches and may take them into the ISR.
     */
    public CompletableFuture<Void> applyIsr(final String topic, final int partition, final int[] replicas, final int[] isr)
    {
        final Partition p = partition(topic, partition);
        final LogThread owner = logThreads[p.owner];
        final CompletableFuture<Void> done = new CompletableFuture<>();
        owner.execute(() ->
        {
            try
            {
                LeaderReplicas state = p.replicas();
                if (state == null)
                {
                    throw new IllegalStateException(p + " is not led with followers here");
                }
                if (replicas != null && !state.sameReplicas(replicas))
                {
                    state = state.reassigned(replicas, isr, System.currentTimeMillis());
                    owner.leaders().lead(state);
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
