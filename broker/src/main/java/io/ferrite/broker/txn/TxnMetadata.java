package io.ferrite.broker.txn;

import java.util.Collections;
import java.util.HashSet;
import java.util.Set;

/**
 * One transactional id's state, as Kafka 4.4's {@code TransactionMetadata}: the producer id and
 * epoch it gave, the transaction under way and the partitions in it. Every change is two steps:
 * a {@code prepare*} method checks the change and returns the {@link TxnTransit} to write, and marks
 * it pending; {@link #complete} applies it once its record is written, {@link #cancel} forgets it
 * when the write fails. While a change is pending no other may be prepared (the request rules
 * answer CONCURRENT_TRANSACTIONS). Single-threaded: the coordinator's agent owns every instance.
 *
 * <p>{@code prevProducerId} in a transit is always the producer id before it (Kafka writes it so);
 * after a producer id rotation it lets the client that asked with the old id (at an exhausted
 * epoch) be recognised.
 */
public final class TxnMetadata
{
    public static final short NO_EPOCH = -1;
    public static final long NO_PRODUCER_ID = -1;

    private final String transactionalId;
    private long producerId;
    private long prevProducerId;
    private long nextProducerId;
    private short producerEpoch;
    private short lastProducerEpoch;
    private int timeoutMs;
    private TxnState state;
    private Set<TxnPartition> partitions;
    /**
     * While prepared, once a marker is done: the partitions still without their marker ({@link #markerDone}
     * removes from it, O(1) a marker), and {@link #partitions} is a read-only view of it. Null otherwise.
     */
    private Set<TxnPartition> markersLeft;
    private long startTimestamp;
    private long lastUpdateTimestamp;
    private short clientTransactionVersion;
    private TxnState pendingState;
    private boolean failedEpochFence;
    /** The last EndTxn stamp of the transaction's end ({@link EndTxnTiming}; 0 when off or none). */
    private long timingNs;

    public TxnMetadata(final String transactionalId, final TxnTransit t)
    {
        this.transactionalId = transactionalId;
        apply(t);
    }

    /** A transactional id seen for the first time: its producer id, no epoch yet, Empty. */
    public static TxnMetadata fresh(final String transactionalId, final long producerId, final int timeoutMs, final long now)
    {
        return new TxnMetadata(transactionalId, new TxnTransit(producerId, NO_PRODUCER_ID, NO_PRODUCER_ID, NO_EPOCH, NO_EPOCH,
            timeoutMs, TxnState.EMPTY, Set.of(), -1, now, (short)0));
    }

    /** Epochs from 32766 on are not given to a new transaction: the producer id is changed instead. */
    public static boolean isEpochExhausted(final short epoch)
    {
        return epoch >= Short.MAX_VALUE - 1;
    }

    public TxnTransit prepareFenceProducerEpoch()
    {
        // a fence whose abort could not be written keeps the epoch it bumped: no second bump
        final short epoch = !failedEpochFence && producerEpoch != Short.MAX_VALUE ? (short)(producerEpoch + 1) : producerEpoch;
        return prepare(TxnState.PREPARE_EPOCH_FENCE, producerId, nextProducerId, epoch, lastProducerEpoch, timeoutMs, partitions,
            startTimestamp, lastUpdateTimestamp, clientTransactionVersion);
    }

    /**
     * A new epoch for InitProducerId. With an expected epoch equal to the last one (a retry whose
     * answer was lost) the current epoch is kept; the caller has refused any other mismatch.
     */
    public TxnTransit prepareIncrementProducerEpoch(final int newTimeoutMs, final boolean hasExpected, final short expectedEpoch,
        final long now)
    {
        if (isEpochExhausted(producerEpoch))
        {
            throw new IllegalStateException("no epoch left for producer id " + producerId);
        }
        final short epoch;
        final short last;
        if (!hasExpected)
        {
            epoch = (short)(producerEpoch + 1);
            last = NO_EPOCH;
        }
        else if (producerEpoch != NO_EPOCH && expectedEpoch != producerEpoch)
        {
            if (expectedEpoch != lastProducerEpoch)
            {
                throw new IllegalStateException("expected epoch " + expectedEpoch + " is neither " + producerEpoch + " nor "
                    + lastProducerEpoch);
            }
            epoch = producerEpoch;
            last = lastProducerEpoch;
        }
        else
        {
            epoch = (short)(producerEpoch + 1);
            last = producerEpoch;
        }
        return prepare(TxnState.EMPTY, producerId, nextProducerId, epoch, last, newTimeoutMs, Set.of(), -1, now,
            clientTransactionVersion);
    }

    public TxnTransit prepareProducerIdRotation(final long newProducerId, final int newTimeoutMs, final long now,
        final boolean recordLastEpoch)
    {
        if (state == TxnState.ONGOING || state.isPrepared())
        {
            throw new IllegalStateException("cannot rotate the producer id of " + transactionalId + " in " + state);
        }
        return prepare(TxnState.EMPTY, newProducerId, nextProducerId, (short)0, recordLastEpoch ? producerEpoch : NO_EPOCH,
            newTimeoutMs, Set.of(), -1, now, clientTransactionVersion);
    }

    public TxnTransit prepareAddPartitions(final Set<TxnPartition> added, final long now, final short clientTv)
    {
        final long start = state.isIdle() ? now : startTimestamp;
        final Set<TxnPartition> all = new HashSet<>(partitions);
        all.addAll(added);
        return prepare(TxnState.ONGOING, producerId, nextProducerId, producerEpoch, lastProducerEpoch, timeoutMs, all, start, now,
            clientTv);
    }

    /**
     * PrepareCommit or PrepareAbort. A TV2 client's epoch is bumped (markers and the next
     * transaction use the new one); {@code nextProducerId} (not -1) is the id the transaction
     * switches to at Complete* when the bumped epoch is exhausted. {@code noPartitionAdded}: an
     * abort of a transaction that never began, which starts now.
     */
    public TxnTransit prepareAbortOrCommit(final TxnState newState, final short clientTv, final long nextProducerId, final long now,
        final boolean noPartitionAdded)
    {
        short epoch = producerEpoch;
        short last = lastProducerEpoch;
        if (TxnTransit.epochBump(clientTv))
        {
            // an abort at the last epoch (only a fence of a producer already at 32767 gets here) keeps it
            if (!(producerEpoch == Short.MAX_VALUE && newState == TxnState.PREPARE_ABORT))
            {
                epoch = (short)(producerEpoch + 1);
            }
            last = producerEpoch;
        }
        return prepare(newState, producerId, nextProducerId, epoch, last, timeoutMs, partitions,
            noPartitionAdded ? now : startTimestamp, now, clientTv);
    }

    /** CompleteCommit or CompleteAbort after every marker is written; a TV2 transaction moves to its next producer id. */
    public TxnTransit prepareComplete(final long now)
    {
        failedEpochFence = false;
        final TxnState next = state == TxnState.PREPARE_COMMIT ? TxnState.COMPLETE_COMMIT : TxnState.COMPLETE_ABORT;
        final boolean switchId = TxnTransit.epochBump(clientTransactionVersion) && nextProducerId != NO_PRODUCER_ID;
        return prepare(next, switchId ? nextProducerId : producerId, NO_PRODUCER_ID, switchId ? 0 : producerEpoch,
            lastProducerEpoch, timeoutMs, Set.of(), startTimestamp, now, clientTransactionVersion);
    }

    /** Expiry: the record is a tombstone and, once written, the id leaves the cache. */
    public TxnTransit prepareDead()
    {
        return prepare(TxnState.DEAD, producerId, nextProducerId, producerEpoch, lastProducerEpoch, timeoutMs, Set.of(),
            startTimestamp, lastUpdateTimestamp, clientTransactionVersion);
    }

    private TxnTransit prepare(final TxnState to, final long pid, final long nextPid, final short epoch, final short lastEpoch,
        final int timeout, final Set<TxnPartition> parts, final long start, final long lastUpdate, final short clientTv)
    {
        if (pendingState != null)
        {
            throw new IllegalStateException(transactionalId + ": transition to " + to + " while " + pendingState + " is pending");
        }
        if (pid < 0)
        {
            throw new IllegalArgumentException("illegal producer id " + pid);
        }
        if (to != TxnState.DEAD && epoch < 0)
        {
            throw new IllegalArgumentException("illegal producer epoch " + epoch);
        }
        if (!to.mayFollow(state))
        {
            throw new IllegalStateException(transactionalId + ": " + to + " may not follow " + state);
        }
        pendingState = to;
        return new TxnTransit(pid, producerId, nextPid, epoch, lastEpoch, timeout, to, parts, start, lastUpdate, clientTv);
    }

    /** The pending transition's record is written: it becomes the state. */
    public void complete(final TxnTransit t)
    {
        if (pendingState == null || pendingState != t.state())
        {
            throw new IllegalStateException(transactionalId + ": completing " + t.state() + " while pending " + pendingState);
        }
        if (!TxnTransitions.valid(this, t))
        {
            throw new IllegalStateException(transactionalId + ": unexpected transition from " + this + " to " + t);
        }
        apply(t);
    }

    /**
     * A partition of the prepared transaction is done with (its marker written, or its topic gone): as Kafka's
     * {@code removePartition}, the transaction lists only the partitions still without their marker from then on
     * (DescribeTransactions shows those). The record written at PrepareCommit/PrepareAbort keeps them all.
     */
    void markerDone(final TxnPartition tp)
    {
        if (state.isPrepared())
        {
            if (markersLeft == null)
            {
                markersLeft = new HashSet<>(partitions); // once a transaction: each marker after it costs one removal
                partitions = Collections.unmodifiableSet(markersLeft);
            }
            markersLeft.remove(tp);
        }
    }

    /** The pending transition's write failed: the state stays as it was. */
    public void cancel()
    {
        pendingState = null;
    }

    /**
     * A TV1 abort that ends a fence: the fence is no longer pending and its epoch is taken at once
     * (Kafka does so before writing the PrepareAbort, and keeps it if that write fails).
     */
    void takeFencedEpoch(final short fencedEpoch)
    {
        pendingState = null;
        producerEpoch = fencedEpoch;
        lastProducerEpoch = NO_EPOCH;
    }

    /** A TV2 abort that ends a fence: the abort bumps the epoch itself. */
    void dropPendingFence()
    {
        if (pendingState == TxnState.PREPARE_EPOCH_FENCE)
        {
            pendingState = null;
        }
    }

    void failedEpochFence(final boolean failed)
    {
        failedEpochFence = failed;
    }

    private void apply(final TxnTransit t)
    {
        producerId = t.producerId();
        prevProducerId = t.prevProducerId();
        nextProducerId = t.nextProducerId();
        producerEpoch = t.producerEpoch();
        lastProducerEpoch = t.lastProducerEpoch();
        timeoutMs = t.timeoutMs();
        state = t.state();
        partitions = t.partitions();
        markersLeft = null;
        startTimestamp = t.startTimestamp();
        lastUpdateTimestamp = t.lastUpdateTimestamp();
        clientTransactionVersion = t.clientTransactionVersion();
        pendingState = null;
    }

    /** The metadata as a transit to its own state (what a record of it holds). */
    public TxnTransit snapshot()
    {
        return new TxnTransit(producerId, prevProducerId, nextProducerId, producerEpoch, lastProducerEpoch, timeoutMs, state,
            partitions, startTimestamp, lastUpdateTimestamp, clientTransactionVersion);
    }

    public String transactionalId()
    {
        return transactionalId;
    }

    public long producerId()
    {
        return producerId;
    }

    public long prevProducerId()
    {
        return prevProducerId;
    }

    public long nextProducerId()
    {
        return nextProducerId;
    }

    public short producerEpoch()
    {
        return producerEpoch;
    }

    public short lastProducerEpoch()
    {
        return lastProducerEpoch;
    }

    public int timeoutMs()
    {
        return timeoutMs;
    }

    public TxnState state()
    {
        return state;
    }

    /**
     * The partitions in the transaction (read-only: immutable, but while prepared a view that loses each
     * partition whose marker is done; {@link #snapshot} copies it).
     */
    public Set<TxnPartition> partitions()
    {
        return partitions;
    }

    public long startTimestamp()
    {
        return startTimestamp;
    }

    public long lastUpdateTimestamp()
    {
        return lastUpdateTimestamp;
    }

    public short clientTransactionVersion()
    {
        return clientTransactionVersion;
    }

    /** The state a prepared transition leads to, or null when none is pending. */
    public TxnState pendingState()
    {
        return pendingState;
    }

    public boolean hasPendingTransition()
    {
        return pendingState != null;
    }

    public boolean failedEpochFence()
    {
        return failedEpochFence;
    }

    public boolean isProducerEpochExhausted()
    {
        return isEpochExhausted(producerEpoch);
    }

    @Override
    public String toString()
    {
        return "TxnMetadata[" + transactionalId + " " + snapshot() + " pending=" + pendingState + "]";
    }

    long timingNs()
    {
        return timingNs;
    }

    void timingNs(final long ns)
    {
        this.timingNs = ns;
    }
}
