package io.ferrite.broker.replica;

import io.ferrite.broker.topic.Partition;
import io.ferrite.log.PartitionLog;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

import java.util.ArrayList;
import java.util.List;

/**
 * A log thread's share of replication for the partitions it owns and this node leads (Kafka's
 * {@code Partition.maybeIncrementLeaderHW}, {@code maybeShrinkIsr} and {@code maybeExpandIsr}): the
 * single writer of their high watermark and their ISR proposals. Its log thread calls it after an
 * append to such a partition ({@link #appended}) and in every duty cycle ({@link #doWork}), which
 * drains the partitions whose followers moved (nudged from network threads, or from the group
 * committer's thread in fsync durability) and, every half {@code replica.lag.time.max.ms}, looks at
 * each led partition for followers out of sync (Kafka's isr-expiration task runs at that period).
 * The ISR grows only after a fetch of the follower that joins (a nudge; Kafka's {@code maybeExpandIsr}
 * runs on a follower's fetch), never in the periodic pass, which only shrinks it.
 * It also moves the high watermark of the one-node partitions in fsync durability after an fsync
 * ({@link #durable}), so that the log thread is the one writer of every high watermark it owns
 * (a follower's is its {@link FollowedPartition}'s, which runs there too). Log thread only, but
 * {@link #offer} and {@link #durable}.
 */
public final class LeaderDuty implements LeaderReplicas.Nudges
{
    /**
     * Partitions waiting for a look. Why 1024: each is queued at most once (its nudge flag), so this
     * bounds partitions with followers moving within one duty cycle; a follower fetching more led
     * partitions than that in one request overflows it, and a refused nudge asks for a sweep instead
     * ({@link #sweepWanted}): the next duty cycle looks at every partition led, so no wake-up is lost.
     */
    private static final int NUDGE_CAPACITY = 1024;

    private final ManyToOneConcurrentArrayQueue<LeaderReplicas> nudged;
    /** One-node fsync partitions whose durable offset moved; each queued at most once ({@link Partition#queueDurable}). */
    private final ManyToOneConcurrentArrayQueue<Partition> durable;
    /** Where they go when {@link #durable} is full (more such partitions than it holds fsynced within one cycle: allocates). */
    private final ManyToOneConcurrentLinkedQueue<Partition> durableOverflow = new ManyToOneConcurrentLinkedQueue<>();
    /** A nudge was refused (queue full): the next cycle looks at every led partition. Written by any thread. */
    private volatile boolean sweepWanted;
    private final List<LeaderReplicas> led = new ArrayList<>();
    private final Runnable wake;
    private final HighWatermarkMoved moved;
    private final Unled unled;
    private long nextCheckMs;

    /** Told when a partition's high watermark (or, for followers' fetches, its log end) moved. */
    @FunctionalInterface
    public interface HighWatermarkMoved
    {
        void moved(Partition partition);
    }

    /** Told (log thread) when this node stopped leading a partition: what it holds for it goes back NOT_LEADER_OR_FOLLOWER. */
    @FunctionalInterface
    public interface Unled
    {
        void unled(Partition partition);
    }

    /** {@code wake} makes the owning log thread look at its work now. */
    public LeaderDuty(final Runnable wake, final HighWatermarkMoved moved, final Unled unled)
    {
        this(wake, moved, unled, NUDGE_CAPACITY);
    }

    /** {@code nudgeCapacity}: how many partitions may wait for a look (a power of two; tests make it small). */
    LeaderDuty(final Runnable wake, final HighWatermarkMoved moved, final Unled unled, final int nudgeCapacity)
    {
        this.wake = wake;
        this.moved = moved;
        this.unled = unled;
        this.nudged = new ManyToOneConcurrentArrayQueue<>(nudgeCapacity);
        this.durable = new ManyToOneConcurrentArrayQueue<>(nudgeCapacity);
    }

    /**
     * Any thread (the group committer's, after an fsync): {@code partition}, led here alone in fsync durability,
     * has more on disk; its log thread moves its high watermark. Allocates nothing while the queue has room.
     */
    public void durable(final Partition partition)
    {
        if (partition.queueDurable() && !durable.offer(partition))
        {
            durableOverflow.offer(partition);
        }
        wake.run();
    }

    @Override
    public boolean offer(final LeaderReplicas replicas)
    {
        final boolean queued = nudged.offer(replicas);
        if (!queued)
        {
            sweepWanted = true; // after the follower's state was written: the sweep reads it
        }
        wake.run();
        return queued;
    }

    /**
     * Any thread: the next duty cycle looks at every partition led here (its high watermark, its ISR), as after a
     * refused nudge; for a change that concerns them all, such as a broker fenced ({@link IsrEligibility}).
     */
    public void lookAgain()
    {
        sweepWanted = true;
        wake.run();
    }

    /** Whether {@link #doWork} has anything to look at. */
    public boolean hasWork()
    {
        return !led.isEmpty() || !durable.isEmpty() || !durableOverflow.isEmpty();
    }

    /** This node now leads {@code replicas.partition} with {@code replicas} (log thread; replaces an earlier epoch's). */
    public void lead(final LeaderReplicas replicas)
    {
        led.removeIf(r -> r.partition == replicas.partition);
        led.add(replicas);
        replicas.partition.replicas(replicas);
        nextCheckMs = 0;
    }

    /**
     * This node no longer leads {@code partition} (it follows now): its replication state goes, and the
     * acks=all produces held for it are answered NOT_LEADER_OR_FOLLOWER at once (log thread).
     */
    public void unlead(final Partition partition)
    {
        led.removeIf(r -> r.partition == partition);
        partition.replicas(null);
        unled.unled(partition);
    }

    /**
     * After an append to a partition with replicas: its log end moved, so the followers' fetches waiting on it
     * are woken, and the high watermark may move (a leader whose ISR is itself). Returns the high watermark.
     */
    public long appended(final LeaderReplicas replicas, final long nowMs)
    {
        if (!advance(replicas, nowMs))
        {
            wakeFetches(replicas.partition); // the log end moved: a follower's fetch reads up to it
        }
        return replicas.partition.log.highWatermark();
    }

    public int doWork(final long nowMs)
    {
        int work = moveDurable();
        LeaderReplicas replicas;
        while ((replicas = nudged.poll()) != null)
        {
            replicas.nudgeTaken(); // before the look: a follower moving during it nudges again
            final LeaderReplicas now = replicas.partition.replicas();
            if (now != replicas)
            {
                if (now == null || now.leaderEpoch != replicas.leaderEpoch)
                {
                    continue; // nudged before an unlead or a new epoch's lead: stale
                }
                // a reassignment's copy at the same epoch replaced it: its followers are the same objects, which the
                // fetch that nudged wrote (review L1 of elect)
                replicas = now;
            }
            advance(replicas, nowMs);
            maybeExpand(replicas);
            work++;
        }
        if (sweepWanted)
        {
            sweepWanted = false; // before the looks: a nudge refused during them asks again
            for (int i = 0; i < led.size(); i++)
            {
                final LeaderReplicas r = led.get(i);
                advance(r, nowMs);
                maybeExpand(r);
                work++;
            }
        }
        if (nowMs >= nextCheckMs && !led.isEmpty())
        {
            long lag = Long.MAX_VALUE;
            for (int i = 0; i < led.size(); i++)
            {
                final LeaderReplicas r = led.get(i);
                if (r.partition.log.isClosed())
                {
                    led.remove(i--);
                    continue;
                }
                advance(r, nowMs);
                maybeShrink(r, nowMs); // no growing here: that follows a follower's fetch (its nudge)
                lag = Math.min(lag, r.lagMaxMs);
                work++;
            }
            nextCheckMs = lag == Long.MAX_VALUE ? Long.MAX_VALUE : nowMs + Math.max(1, lag / 2);
        }
        return work;
    }

    /** The durable high-watermark moves of one-node fsync partitions (none once led with followers or followed). */
    private int moveDurable()
    {
        int work = 0;
        Partition p;
        while ((p = durable.poll()) != null || (p = durableOverflow.poll()) != null)
        {
            p.durableTaken(); // before the look: an fsync during it queues it again
            final PartitionLog log = p.log;
            if (p.replicas() == null && p.followed() == null && !log.isClosed())
            {
                final long bound = Math.min(log.durableOffset(), log.logEndOffset());
                if (bound > log.highWatermark())
                {
                    log.highWatermark(bound);
                    wakeFetches(p);
                }
            }
            work++;
        }
        return work;
    }

    /** Moves the high watermark to what the replicas allow, never back; wakes the fetches waiting on it. */
    private boolean advance(final LeaderReplicas replicas, final long nowMs)
    {
        final PartitionLog log = replicas.partition.log;
        if (log.isClosed() || replicas.partition.replicas() != replicas)
        {
            return false;
        }
        final long logEnd = log.logEndOffset();
        final long leaderBound = log.config().fsyncDurability ? Math.min(logEnd, log.durableOffset()) : logEnd;
        final long bound = replicas.highWatermarkBound(leaderBound, logEnd, nowMs, log.config().minInsyncReplicas);
        if (bound <= log.highWatermark())
        {
            return false;
        }
        log.highWatermark(bound);
        wakeFetches(replicas.partition);
        return true;
    }

    private void wakeFetches(final Partition partition)
    {
        if (partition.hasParkedFetches())
        {
            moved.moved(partition);
        }
    }

    /** Kafka's {@code getOutOfSyncReplicas}: followers in the ISR not caught up within the lag are proposed out. */
    private static void maybeShrink(final LeaderReplicas replicas, final long nowMs)
    {
        if (replicas.proposalInFlight)
        {
            return;
        }
        final long logEnd = replicas.partition.log.logEndOffset();
        final int[] isr = replicas.isr();
        int keep = 0;
        for (final int id : isr)
        {
            final LeaderReplicas.Follower f = replicas.follower(id);
            if (f == null || f.caughtUp(logEnd, nowMs, replicas.lagMaxMs))
            {
                isr[keep++] = id; // the leader, or in sync
            }
        }
        if (keep < isr.length)
        {
            propose(replicas, java.util.Arrays.copyOf(isr, keep));
        }
    }

    /**
     * Kafka's {@code maybeExpandIsr} with {@code canAddReplicaToIsr} and {@code isFollowerInSync}: a follower outside the
     * ISR, ISR-eligible (its broker registered, unfenced, not shutting down: {@link IsrEligibility}), that fetched since
     * the last look and whose log end reached the high watermark and the start of the leader's epoch is proposed in, one
     * at a time. Each look clears every follower's fetch mark, so a follower is proposed in on a fetch of its own only, as
     * Kafka's leader does it on that fetch: one that stopped fetching stays out whatever its last log end.
     */
    private static void maybeExpand(final LeaderReplicas replicas)
    {
        final boolean closed = replicas.proposalInFlight || replicas.isrSize() == replicas.replicationFactor();
        final long highWatermark = replicas.partition.log.highWatermark();
        LeaderReplicas.Follower joining = null;
        for (int i = 0; i < replicas.followerCount(); i++)
        {
            final LeaderReplicas.Follower f = replicas.followerAt(i);
            if (!f.fetchedSinceExpandLook)
            {
                continue;
            }
            f.fetchedSinceExpandLook = false; // before reading its log end: a fetch after this marks it again
            final long end = f.logEndOffset;
            if (!closed && joining == null && !replicas.inIsr(f.id) && replicas.eligible(f) && end >= highWatermark
                && end >= replicas.epochStartOffset)
            {
                joining = f;
            }
        }
        if (joining != null)
        {
            final int[] isr = replicas.isr();
            final int[] grown = java.util.Arrays.copyOf(isr, isr.length + 1);
            grown[isr.length] = joining.id;
            propose(replicas, LeaderReplicas.sorted(grown));
        }
    }

    private static void propose(final LeaderReplicas replicas, final int[] isr)
    {
        replicas.proposals.propose(replicas.partition.topic, replicas.partition.index, replicas.leaderEpoch, isr);
        replicas.proposed(isr); // after: a proposal that threw is tried again at the next look
    }
}
