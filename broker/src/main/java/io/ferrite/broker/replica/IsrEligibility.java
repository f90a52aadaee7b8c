package io.ferrite.broker.replica;

import java.util.Arrays;

/**
 * Which followers a leader may wait for, or take into the ISR: Kafka 4.4's {@code Partition.isReplicaIsrEligible}.
 * A follower is eligible when its broker is registered in the metadata image, not fenced and not in controlled
 * shutdown, and the broker epoch its fetches named (Kafka's {@code ReplicaState.brokerEpoch}) is the image's or none
 * (-1, a fetch before v15 or from a follower that does not send it); a follower that has not fetched in this leadership
 * is not. The high watermark waits for a follower outside the maximal ISR only if it is caught up <em>and</em>
 * eligible ({@code shouldWaitForReplicaToJoinIsr}), and a follower is proposed into the ISR only if eligible
 * ({@code canAddReplicaToIsr}): so a dead broker, fenced by the controller, holds no acks=all append back for
 * {@code replica.lag.time.max.ms} after its last fetch.
 *
 * <p>One per node, shared by the partitions it leads. The image's broker changes are rare: each publishes a new
 * immutable snapshot ({@link #publish}, the metadata loader's thread); the log threads read it with one volatile load,
 * no lock, no allocation. Before the first publish (a node alone, or a cluster acted out in tests without a
 * controller) every broker counts as registered and live.
 */
public final class IsrEligibility
{
    /** A follower's broker epoch before its first fetch in this leadership (Kafka's empty {@code brokerEpoch}). */
    public static final long NOT_FETCHED = Long.MIN_VALUE;
    /** The broker epoch of a fetch that names none: any broker epoch of the image matches it (Kafka's -1). */
    public static final long NO_EPOCH = -1;

    /** The eligible brokers: ids ascending, each with its broker epoch in the image. Immutable once published. */
    private static final class Brokers
    {
        final int[] ids;
        final long[] epochs;

        Brokers(final int[] ids, final long[] epochs)
        {
            this.ids = ids;
            this.epochs = epochs;
        }
    }

    /** Null until the first publish: no metadata, every broker eligible. */
    private volatile Brokers brokers;

    /**
     * The image's brokers that are registered, unfenced and not in controlled shutdown are now {@code ids}, with their
     * broker epochs {@code epochs} (same order); every other broker is not eligible. Any thread; copies its arguments.
     */
    public void publish(final int[] ids, final long[] epochs)
    {
        if (ids.length != epochs.length)
        {
            throw new IllegalArgumentException(ids.length + " ids and " + epochs.length + " epochs");
        }
        final Integer[] order = new Integer[ids.length];
        for (int i = 0; i < order.length; i++)
        {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Integer.compare(ids[a], ids[b]));
        final int[] sortedIds = new int[ids.length];
        final long[] sortedEpochs = new long[ids.length];
        for (int i = 0; i < order.length; i++)
        {
            sortedIds[i] = ids[order[i]];
            sortedEpochs[i] = epochs[order[i]];
        }
        brokers = new Brokers(sortedIds, sortedEpochs);
    }

    /**
     * Whether follower {@code id}, whose fetches in this leadership named broker epoch {@code fetchedEpoch}
     * ({@link #NOT_FETCHED} before the first), is eligible. Log thread; one volatile load, no allocation.
     */
    public boolean eligible(final int id, final long fetchedEpoch)
    {
        if (fetchedEpoch == NOT_FETCHED)
        {
            return false;
        }
        final Brokers known = brokers;
        if (known == null)
        {
            return true;
        }
        final int at = Arrays.binarySearch(known.ids, id);
        return at >= 0 && (fetchedEpoch == NO_EPOCH || fetchedEpoch == known.epochs[at]);
    }

    @Override
    public String toString()
    {
        final Brokers known = brokers;
        return known == null ? "every broker eligible (no metadata)" : "eligible " + Arrays.toString(known.ids);
    }
}
