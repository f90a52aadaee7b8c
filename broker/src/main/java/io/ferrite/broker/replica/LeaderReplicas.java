package io.ferrite.broker.replica;

import io.ferrite.broker.topic.Partition;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The leader's replication state of one partition it leads (what Kafka's {@code Partition} keeps
 * on a leader): the leader epoch and the offset it started at, the replica set, the ISR, and per
 * follower its log end offset (its last fetch offset), last fetch time and last caught-up time.
 *
 * <p>Who writes what. The partition's log thread is the single writer of the log, of the high
 * watermark ({@code LeaderDuty} computes it from this state), of the ISR (the controller's answer,
 * applied by a task on that thread) and of the proposals. A follower's fetches arrive on network
 * threads and write that follower's {@link Follower} only ({@link #fetched}); Kafka's follower sends
 * one fetch per partition at a time, so one thread writes a follower's fields at a time. A fetch
 * that moved a follower's log end, or that may bring it into the ISR, nudges the log thread
 * ({@link #nudge}): one CAS and an offer on a
 * bounded queue, no lock, no allocation. Single node: a partition has no {@code LeaderReplicas}
 * (its {@code replicas()} is null), and produce and fetch take today's path at the cost of one load.
 */
public final class LeaderReplicas
{
    private static final VarHandle NUDGED;

    static
    {
        try
        {
            NUDGED = MethodHandles.lookup().findVarHandle(LeaderReplicas.class, "nudged", int.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Where a nudge goes: the owning log thread's queue of partitions whose followers moved. */
    @FunctionalInterface
    public interface Nudges
    {
        /** False when the queue is full: the log thread then looks at every partition it leads in its next cycle. */
        boolean offer(LeaderReplicas replicas);
    }

    /** One follower as the leader sees it; written by the network thread serving its fetch. */
    public static final class Follower
    {
        public final int id;
        /** Its log end offset (the offset it last fetched from); -1 until its first fetch in this epoch. */
        volatile long logEndOffset = -1;
        volatile long lastFetchTimeMs;
        /** The leader's log end offset at its last fetch (Kafka's lastFetchLeaderLogEndOffset). */
        volatile long lastFetchLeaderLogEnd;
        volatile long lastCaughtUpTimeMs;
        /** Its log end as the log thread's last look at the high watermark read it (-1 before); log thread writes. */
        volatile long lookedLogEnd = -1;
        /**
         * It fetched since the log thread's last look at growing the ISR: set by its fetch, cleared by that look. Kafka
         * 4.4 grows the ISR on a follower's fetch only ({@code maybeExpandIsr} from {@code updateFollowerFetchState}),
         * so a follower that stopped fetching is never proposed in on what it fetched before.
         */
        volatile boolean fetchedSinceExpandLook;
        /**
         * The broker epoch its last fetch named ({@link IsrEligibility#NO_EPOCH} for none), {@link IsrEligibility#NOT_FETCHED}
         * before its first fetch in this epoch: Kafka's {@code ReplicaState.brokerEpoch}, checked by {@link IsrEligibility}.
         */
        volatile long brokerEpoch = IsrEligibility.NOT_FETCHED;

        Follower(final int id)
        {
            this.id = id;
        }

        public long logEndOffset()
        {
            return logEndOffset;
        }

        public long lastCaughtUpTimeMs()
        {
            return lastCaughtUpTimeMs;
        }

        /**
         * Its log end as the log thread's last high watermark look read it: once it shows a fetch's offset, that
         * look's decision is made in the same duty cycle, before the thread's tasks run (what tests wait for).
         */
        public long lookedLogEnd()
        {
            return lookedLogEnd;
        }

        /** Kafka's {@code ReplicaState.isCaughtUp}: at the leader's log end, or caught up within the lag. */
        boolean caughtUp(final long leaderLogEnd, final long nowMs, final long lagMaxMs)
        {
            return logEndOffset == leaderLogEnd || nowMs - lastCaughtUpTimeMs <= lagMaxMs;
        }
    }

    public final Partition partition;
    public final int localId;
    public final int leaderEpoch;
    /** The leader's log end offset when it became leader in this epoch: a follower joins the ISR only at or past it. */
    public final long epochStartOffset;
    public final long lagMaxMs;
    public final IsrProposals proposals;
    /** Whose brokers the high watermark may wait for and the ISR may take in (the node's one, fed from the image). */
    private final IsrEligibility eligibility;
    private final int[] replicas;
    private final Follower[] followers;
    private final Nudges nudges;
    /** Ascending; replaced whole by the log thread. */
    private volatile int[] isr;
    /**
     * Kafka's maximal ISR: the ISR and, while a proposal is out, the replicas it adds (a shrink keeps the larger,
     * current set until the controller answers). Bounds the high watermark, so that a follower proposed in holds
     * it back before it is in the ISR. Ascending; replaced whole by the log thread.
     */
    private volatile int[] maximalIsr;
    /** A proposal is out and not answered yet (log thread only). */
    boolean proposalInFlight;
    @SuppressWarnings("unused") // through NUDGED
    private volatile int nudged;
    /** Nudges a full queue refused (single writer per follower; approximate across followers). */
    private volatile long refusedNudges;

    /**
     * {@code replicas} includes {@code localId}; {@code isr} must too. {@code leaderLogEnd} and {@code nowMs}
     * start each follower as Kafka's leader does: caught up now if it is in the ISR, never otherwise.
     * {@code eligibility} says which followers' brokers are ISR-eligible (registered, unfenced, not shutting down).
     */
    public LeaderReplicas(final Partition partition, final int localId, final int leaderEpoch, final int[] replicas,
        final int[] isr, final long leaderLogEnd, final long nowMs, final long lagMaxMs, final IsrProposals proposals,
        final Nudges nudges, final IsrEligibility eligibility)
    {
        if (!contains(replicas, localId) || !contains(isr, localId))
        {
            throw new IllegalArgumentException("replicas " + Arrays.toString(replicas) + " and isr " + Arrays.toString(isr)
                + " must both hold the leader " + localId);
        }
        this.partition = partition;
        this.localId = localId;
        this.leaderEpoch = leaderEpoch;
        this.epochStartOffset = leaderLogEnd;
        this.lagMaxMs = lagMaxMs;
        this.proposals = proposals;
        this.nudges = nudges;
        this.eligibility = eligibility;
        this.replicas = replicas.clone();
        this.followers = new Follower[replicas.length - 1];
        int f = 0;
        for (final int id : replicas)
        {
            if (id != localId)
            {
                final Follower follower = new Follower(id);
                follower.lastFetchLeaderLogEnd = leaderLogEnd;
                follower.lastFetchTimeMs = nowMs;
                follower.lastCaughtUpTimeMs = contains(isr, id) ? nowMs : 0;
                followers[f++] = follower;
            }
        }
        this.isr = sorted(isr);
        this.maximalIsr = this.isr;
    }

    /**
     * This leadership with the replica set {@code replicas} and ISR {@code isr} the controller changed at the same
     * leader epoch: a reassignment adds replicas without a new epoch (Kafka's {@code makeLeader} with the same epoch
     * updates the assignment and keeps the replicas' states). The followers that stay keep their {@link Follower}
     * (the one a fetch under way writes), an added one starts as never caught up, the epoch's start offset stays.
     * Log thread; the caller installs the copy in place of this one ({@link LeaderDuty#lead}).
     */
    public LeaderReplicas reassigned(final int[] replicas, final int[] isr, final long nowMs)
    {
        final LeaderReplicas next = new LeaderReplicas(partition, localId, leaderEpoch, replicas, isr, epochStartOffset,
            nowMs, lagMaxMs, proposals, nudges, eligibility);
        for (int i = 0; i < next.followers.length; i++)
        {
            final Follower kept = follower(next.followers[i].id);
            if (kept != null)
            {
                next.followers[i] = kept;
            }
        }
        return next;
    }

    /** Whether {@code ids} is this partition's replica set (in any order). */
    public boolean sameReplicas(final int[] ids)
    {
        return Arrays.equals(sorted(ids), sorted(replicas));
    }

    public int[] replicas()
    {
        return replicas.clone();
    }

    public int[] isr()
    {
        return isr.clone();
    }

    public int isrSize()
    {
        return isr.length;
    }

    public int replicationFactor()
    {
        return replicas.length;
    }

    /** Kafka's effective min.insync.replicas: the topic's, capped by the replication factor (KIP-966). */
    public int effectiveMinIsr(final int minInsyncReplicas)
    {
        return Math.min(minInsyncReplicas, replicas.length);
    }

    public boolean underMinIsr(final int minInsyncReplicas)
    {
        return isr.length < effectiveMinIsr(minInsyncReplicas);
    }

    /**
     * NOT_ENOUGH_REPLICAS's message for an acks=all append to {@code log} refused while {@link #underMinIsr}: built
     * here, off the log thread's append method, which stays small enough for the JIT to inline (issue 17).
     */
    public String underMinIsrMessage(final Object log, final int minInsyncReplicas)
    {
        return "the ISR of " + log + " (" + isrSize() + ") is below min.insync.replicas " + effectiveMinIsr(minInsyncReplicas);
    }

    /** The size of the maximal ISR (the ISR and the replicas a proposal in flight adds). */
    public int maximalIsrSize()
    {
        return maximalIsr.length;
    }

    /**
     * Kafka's {@code checkEnoughReplicasReachOffset}: an acks=all append committed while the maximal ISR is below
     * min.insync.replicas is answered NOT_ENOUGH_REPLICAS_AFTER_APPEND.
     */
    public boolean maximalIsrUnderMin(final int minInsyncReplicas)
    {
        return maximalIsr.length < effectiveMinIsr(minInsyncReplicas);
    }

    /** The follower {@code id}, or null if it is not a replica of this partition (or is the leader). */
    public Follower follower(final int id)
    {
        for (final Follower f : followers)
        {
            if (f.id == id)
            {
                return f;
            }
        }
        return null;
    }

    int followerCount()
    {
        return followers.length;
    }

    Follower followerAt(final int i)
    {
        return followers[i];
    }

    /**
     * A fetch of {@code follower} from {@code fetchOffset} at {@code nowMs}, the leader's log end then being
     * {@code leaderLogEnd}, naming its broker's epoch {@code brokerEpoch} ({@link IsrEligibility#NO_EPOCH}: none):
     * Kafka's rule for the last caught-up time (a fetch at or past the leader's log end is caught up now; one at or
     * past the log end of the previous fetch was caught up at that fetch). Nudges the log thread when the follower's
     * log end moved. Network thread; no allocation.
     */
    public void fetched(final Follower follower, final long fetchOffset, final long nowMs, final long leaderLogEnd,
        final long brokerEpoch)
    {
        final long caughtUp = follower.lastCaughtUpTimeMs;
        if (fetchOffset >= leaderLogEnd)
        {
            follower.lastCaughtUpTimeMs = Math.max(caughtUp, nowMs);
        }
        else if (fetchOffset >= follower.lastFetchLeaderLogEnd)
        {
            follower.lastCaughtUpTimeMs = Math.max(caughtUp, follower.lastFetchTimeMs);
        }
        follower.lastFetchLeaderLogEnd = Math.max(leaderLogEnd, follower.lastFetchLeaderLogEnd);
        follower.lastFetchTimeMs = nowMs;
        follower.brokerEpoch = brokerEpoch;
        final long before = follower.logEndOffset;
        follower.logEndOffset = fetchOffset;
        follower.fetchedSinceExpandLook = true; // after its log end: the look that clears it reads this fetch's
        if (before != fetchOffset || mayJoinIsr(follower.id, fetchOffset))
        {
            nudge();
        }
    }

    /**
     * Whether a fetch from {@code fetchOffset} of follower {@code id} may grow the ISR (Kafka's {@code isFollowerInSync}
     * for one outside it): such a fetch nudges the log thread even when the follower did not move, as each fetch of
     * Kafka's follower runs {@code maybeExpandIsr}. Network thread; reads volatiles only.
     */
    private boolean mayJoinIsr(final int id, final long fetchOffset)
    {
        return fetchOffset >= epochStartOffset && fetchOffset >= partition.log.highWatermark() && !contains(isr, id);
    }

    /** Asks the log thread to look at this partition again (its high watermark, its ISR). At most one queued at a time. */
    public void nudge()
    {
        if ((int)NUDGED.getVolatile(this) == 0 && NUDGED.compareAndSet(this, 0, 1) && !nudges.offer(this))
        {
            NUDGED.setVolatile(this, 0);
            refusedNudges = refusedNudges + 1;
        }
    }

    /** The log thread took the nudge: a later change nudges again. */
    void nudgeTaken()
    {
        NUDGED.setVolatile(this, 0);
    }

    public long refusedNudges()
    {
        return refusedNudges;
    }

    /**
     * Kafka 4.4's {@code maybeIncrementLeaderHW} bound: the minimum log end of the leader ({@code leaderBound}:
     * its log end, or in fsync durability what is durable) and of every follower in the maximal ISR (the ISR and
     * a follower proposed into it, until the controller answers) or both caught up within the lag and ISR-eligible
     * ({@link #eligible}: Kafka's {@code shouldWaitForReplicaToJoinIsr}, so a fenced, dead broker outside the maximal
     * ISR is not waited for); -1 while the ISR is below min.insync.replicas (Kafka 4.4 does not move it then, KIP-966).
     * The caller never moves the high watermark back. Log thread.
     */
    long highWatermarkBound(final long leaderBound, final long leaderLogEnd, final long nowMs, final int minInsyncReplicas)
    {
        final boolean underMin = isr.length < effectiveMinIsr(minInsyncReplicas);
        final int[] inSync = maximalIsr;
        long bound = leaderBound;
        for (final Follower f : followers)
        {
            final long end = f.logEndOffset;
            f.lookedLogEnd = end;
            if (contains(inSync, f.id) || f.caughtUp(leaderLogEnd, nowMs, lagMaxMs) && eligible(f))
            {
                bound = Math.min(bound, end);
            }
        }
        return underMin ? -1 : bound;
    }

    /** Kafka's {@code isReplicaIsrEligible} for {@code follower} ({@link IsrEligibility}). */
    boolean eligible(final Follower follower)
    {
        return eligibility.eligible(follower.id, follower.brokerEpoch);
    }

    /**
     * The ISR the controller decided (its answer to a proposal, or its own change), applied on the log thread.
     * Ends the proposal in flight.
     */
    public void isr(final int[] decided)
    {
        if (!contains(decided, localId))
        {
            throw new IllegalArgumentException("an ISR " + Arrays.toString(decided) + " without its leader " + localId);
        }
        isr = sorted(decided);
        maximalIsr = isr;
        proposalInFlight = false;
    }

    /** The controller refused the proposal in flight (log thread): the next pass may propose again. */
    public void proposalFailed()
    {
        maximalIsr = isr;
        proposalInFlight = false;
    }

    /** {@code proposed} (ascending) is out to the controller (log thread): the maximal ISR is it and the ISR. */
    void proposed(final int[] proposed)
    {
        final int[] current = isr;
        int[] union = current;
        for (final int id : proposed)
        {
            if (!contains(union, id))
            {
                union = Arrays.copyOf(union, union.length + 1);
                union[union.length - 1] = id;
            }
        }
        maximalIsr = union == current ? current : sorted(union);
        proposalInFlight = true;
    }

    public boolean inIsr(final int id)
    {
        return contains(isr, id);
    }

    static boolean contains(final int[] ids, final int id)
    {
        for (final int i : ids)
        {
            if (i == id)
            {
                return true;
            }
        }
        return false;
    }

    static int[] sorted(final int[] ids)
    {
        final int[] copy = ids.clone();
        Arrays.sort(copy);
        return copy;
    }

    @Override
    public String toString()
    {
        return partition + " epoch " + leaderEpoch + " replicas " + Arrays.toString(replicas) + " isr " + Arrays.toString(isr);
    }
}
