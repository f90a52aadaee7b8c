package io.ferrite.broker.logthread;

import io.ferrite.broker.replica.LeaderReplicas;
import io.ferrite.broker.topic.Partition;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogTransactions;
import io.ferrite.broker.Diagnostics;
import org.agrona.MutableDirectBuffer;

/**
 * One partition's part of a Produce request, sent from a network thread to the log thread that
 * owns the partition and back with the result. Pooled per connection: a connection has one request
 * in flight, so its commands are free again once its response is built.
 */
public final class AppendCommand
{
    /**
     * The transaction coordinator's EndTxn timing ({@link Diagnostics#END_TXN_TIMING}): with it, a log thread
     * stamps {@link #takenNs} as it takes a command in and {@link #answeredNs} as it sends it back. A static
     * final flag, folded away by the JIT when off: nothing is read or stored on the produce path then.
     */
    public static final boolean STAMP_ANSWERS = Diagnostics.END_TXN_TIMING;
    public final AppendResult result = new AppendResult();
    /** The network thread to return to. */
    public int networkThread;
    /** Told on the network thread when the command comes back (the request it belongs to). */
    public Listener request;
    /** Which partition of the request (its slot in the request's response). */
    public int slot;
    public Partition partition;
    public MutableDirectBuffer buffer;
    public int offset;
    public int length;
    /** -1 (all), 0 or 1. */
    public short acks;
    /**
     * How long an acks=all answer may wait for the followers (the Produce request's {@code timeout_ms}; a
     * coordinator's marker or batch waits as long as it takes). Read only for a partition with followers.
     */
    public int timeoutMs;
    /**
     * A batch's produce verification ({@code LogTransactions.append}): not required (the default
     * {@link #set} leaves), to start (a transactional batch of a Produce), or the guard its start answered.
     */
    public long verification;
    /**
     * A transaction marker rather than a batch in {@link #buffer} (the transaction coordinator's, and
     * WriteTxnMarkers'): the log builds the control batch itself from the fields below
     * (PartitionLog.appendMarker). Also set, with {@link #coordinatorBatch}, for a coordinator's own
     * transactional batch: the log thread's one branch off the produce path covers both.
     */
    public boolean marker;
    /**
     * With {@link #marker}: not a marker but the batch in {@link #buffer}, which a coordinator built
     * (the group coordinator's offsets inside a transaction), appended as Kafka's origin COORDINATOR
     * (LogTransactions.appendAsCoordinator: no sequence checks). Read only when {@link #marker} is set.
     */
    public boolean coordinatorBatch;
    public long producerId;
    public short producerEpoch;
    public int coordinatorEpoch;
    public boolean commit;
    /** The transaction version is 2 or more: the marker's epoch must be above the producer's. */
    public boolean epochBump;
    /*
     * The log thread's own bookkeeping (no other thread touches these while it runs: a flag the
     * network thread reset in set() could be reset while the log thread still looked at the
     * command's last use; once it has stopped, the network thread that answers in its place does).
     * A fault anywhere on the log thread (a SIGBUS's InternalError surfaces late, at any
     * instruction) must never send a command back twice — its request would count it twice and its
     * pool hold it twice.
     */
    /** Times the log thread took the command in. */
    int polls;
    /** The take it was last sent back for: equal to {@link #polls} once answered (set just before the offer). */
    int answeredPoll;
    /**
     * Its return queue's producer index when that answer was offered: the queue's index beyond it
     * proves the offer landed (a late fault may surface between the mark above and the offer).
     */
    long answerOfferedAt;
    /** In the log thread's list of commands waiting for an fsync or for the followers. */
    boolean held;
    /** Held for the followers: the partition's replication state when appended (else null). */
    LeaderReplicas replicas;
    /** Held for the followers until then at most (REQUEST_TIMED_OUT). */
    long deadlineMs;
    /** {@link System#nanoTime} as the log thread took it in; set only with {@link #STAMP_ANSWERS}. */
    public long takenNs;
    /** {@link System#nanoTime} as the log thread sent it back; set only with {@link #STAMP_ANSWERS}. */
    public long answeredNs;

    /** The request a command belongs to; called on the network thread the command returns to. */
    @FunctionalInterface
    public interface Listener
    {
        void appended(AppendCommand command);
    }

    public void set(final int networkThread, final Listener request, final int slot, final Partition partition,
        final MutableDirectBuffer buffer, final int offset, final int length, final short acks)
    {
        this.networkThread = networkThread;
        this.request = request;
        this.slot = slot;
        this.partition = partition;
        this.buffer = buffer;
        this.offset = offset;
        this.length = length;
        this.acks = acks;
        this.timeoutMs = Integer.MAX_VALUE;
        this.marker = false;
        this.verification = LogTransactions.VERIFICATION_NOT_REQUIRED;
    }

    /** A marker ending producer {@code producerId}'s transaction on {@code partition}; answered like an append at acks=all. */
    public void setMarker(final int sender, final Listener request, final int slot, final Partition partition, final long producerId,
        final short producerEpoch, final int coordinatorEpoch, final boolean commit, final boolean epochBump)
    {
        set(sender, request, slot, partition, null, 0, 0, (short)-1);
        this.marker = true;
        this.coordinatorBatch = false;
        this.producerId = producerId;
        this.producerEpoch = producerEpoch;
        this.coordinatorEpoch = coordinatorEpoch;
        this.commit = commit;
        this.epochBump = epochBump;
    }

    /** A coordinator's batch in {@code buffer} (see {@link #coordinatorBatch}); answered like an append at acks=all. */
    public void setCoordinatorBatch(final int sender, final Listener request, final int slot, final Partition partition,
        final MutableDirectBuffer buffer, final int offset, final int length)
    {
        set(sender, request, slot, partition, buffer, offset, length, (short)-1);
        this.marker = true;
        this.coordinatorBatch = true;
    }
}
