package io.ferrite.broker.topic;

import io.ferrite.broker.metrics.TopicCounters;
import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.log.PartitionLog;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * One partition of a topic: its log and the log thread that owns (alone appends to) it. Fetches
 * waiting for data register here, so that an advance of the high watermark wakes only the network
 * threads that have a fetch parked.
 */
public final class Partition
{
    private static final VarHandle PARKED;
    private static final VarHandle DURABLE_QUEUED;

    static
    {
        try
        {
            PARKED = MethodHandles.lookup().findVarHandle(Partition.class, "parked", long.class);
            DURABLE_QUEUED = MethodHandles.lookup().findVarHandle(Partition.class, "durableQueued", boolean.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    public final String topic;
    public final int index;
    public final PartitionLog log;
    /** The log thread that appends to this partition. */
    public final int owner;
    /**
     * Fetches parked here (low 32 bits) and which network threads parked them (high 32 bits, bit n
     * for thread n; threads from 32 on set them all). The bits are a superset while fetches remain
     * and are cleared with the last one; one word, so a park racing the last unpark loses no bit.
     */
    @SuppressWarnings("unused") // through PARKED
    private volatile long parked;
    /**
     * This node's replication state as the partition's leader with followers; null on a single node
     * (the only replica, its ISR itself: produce and fetch take the single-node path). Set by the
     * owning log thread ({@code LeaderDuty.lead}).
     */
    private volatile LeaderReplicas replicas;
    /**
     * This node's state as a follower of the partition (null: it leads, alone or with followers). Set by the
     * owning log thread ({@code ReplicaLeadership.followWithoutController}; cleared by {@code leadWithoutController} —
     * after {@code stopFollowing} it stays, its fetcher gone, so that no one takes produces here); read by
     * produce (refused on the log thread), fetch (a consumer's refused) and the high-watermark writers
     * of a leader, which leave a followed partition's to its {@link FollowedPartition}.
     */
    private volatile FollowedPartition followed;
    /** Queued for its log thread to move a one-node fsync high watermark ({@code LeaderDuty.durable}): at most once. */
    @SuppressWarnings("unused") // through DURABLE_QUEUED
    private volatile boolean durableQueued;

    /** Its topic's counters: set before the partition is published (the broker's {@code BrokerCounters}), else null. */
    private TopicCounters counters;

    Partition(final String topic, final int index, final PartitionLog log, final int owner)
    {
        this.topic = topic;
        this.index = index;
        this.log = log;
        this.owner = owner;
    }

    /** Its topic's counters (records and bytes in and out), or null where the broker keeps none (tests). */
    public TopicCounters counters()
    {
        return counters;
    }

    /** The topics' writer, before the partition is published. */
    public void counters(final TopicCounters counters)
    {
        this.counters = counters;
    }

    /**
     * The partition's leader epoch as this node answers it (Metadata, ListOffsets, the current-leader-epoch checks): the
     * controller's for a partition led with followers ({@link LeaderReplicas#leaderEpoch}), else its log's — the newest
     * epoch of its log, the one a single node stamps on new batches ({@link PartitionLog#leaderEpoch()}). Any thread,
     * allocates nothing.
     */
    public int leaderEpoch()
    {
        final LeaderReplicas led = replicas;
        return led == null ? log.leaderEpoch() : led.leaderEpoch;
    }

    /** Any thread: true if this call queued it for a durable high-watermark move (false: it is queued already). */
    public boolean queueDurable()
    {
        return DURABLE_QUEUED.compareAndSet(this, false, true);
    }

    /** Its log thread, before it looks: a later fsync queues it again. */
    public void durableTaken()
    {
        durableQueued = false;
    }

    /** The leader's replication state, or null: this node is the only replica. */
    public LeaderReplicas replicas()
    {
        return replicas;
    }

    /** The owning log thread only ({@code LeaderDuty.lead}). */
    public void replicas(final LeaderReplicas state)
    {
        this.replicas = state;
    }

    /** This node's follower state, or null: it leads the partition. */
    public FollowedPartition followed()
    {
        return followed;
    }

    /** The owning log thread only. */
    public void followed(final FollowedPartition state)
    {
        this.followed = state;
    }

    /** A fetch from network thread {@code networkThread} waits for this partition's high watermark to move. */
    public void fetchParked(final int networkThread)
    {
        final long bit = networkThread < 32 ? 1L << (32 + networkThread) : 0xFFFF_FFFF_0000_0000L;
        long state;
        do
        {
            state = (long)PARKED.getVolatile(this);
        }
        while (!PARKED.compareAndSet(this, state, (state | bit) + 1));
    }

    public void fetchUnparked()
    {
        long state;
        long next;
        do
        {
            state = (long)PARKED.getVolatile(this);
            assert (int)state > 0 : unparkedTooOften(this);
            next = (int)state == 1 ? 0 : state - 1;
        }
        while (!PARKED.compareAndSet(this, state, next));
    }

    /**
     * Volatile, not opaque: the log thread reads this after its volatile store of the high
     * watermark, and the fetch parks (a CAS) before it reads the high watermark again; only both
     * accesses being sequentially consistent rules out each missing the other (on x86 the load
     * costs the same).
     */
    public boolean hasParkedFetches()
    {
        return (int)(long)PARKED.getVolatile(this) > 0;
    }

    /** Whether network thread {@code networkThread} may have a fetch parked here (false: it surely has none). */
    public boolean parkedBy(final int networkThread)
    {
        final long state = (long)PARKED.getVolatile(this); // as in hasParkedFetches
        return (int)state > 0 && (networkThread >= 32 || (state >>> (32 + networkThread) & 1) != 0);
    }

    @Override
    public String toString()
    {
        return topic + "-" + index;
    }

    private static String unparkedTooOften(final Partition partition)
    {
        return "a fetch unparked from " + partition + " more often than parked";
    }
}
