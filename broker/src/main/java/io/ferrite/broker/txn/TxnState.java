package io.ferrite.broker.txn;

import java.util.EnumSet;
import java.util.Set;

/**
 * A transaction's state, with the byte written for it in {@code __transaction_state} (Kafka's
 * {@code TransactionStatus}), its name on the wire (DescribeTransactions, ListTransactions) and the
 * states it may follow. {@link #PREPARE_EPOCH_FENCE} is never written: it is only ever a pending
 * state, the first half of an abort the coordinator starts itself (InitProducerId over an ongoing
 * transaction, the timeout sweep). {@link #DEAD} is never written either: its record is a tombstone.
 */
public enum TxnState
{
    EMPTY(0, "Empty", true),
    ONGOING(1, "Ongoing", false),
    PREPARE_COMMIT(2, "PrepareCommit", false),
    PREPARE_ABORT(3, "PrepareAbort", false),
    COMPLETE_COMMIT(4, "CompleteCommit", true),
    COMPLETE_ABORT(5, "CompleteAbort", true),
    DEAD(6, "Dead", false),
    PREPARE_EPOCH_FENCE(7, "PrepareEpochFence", false);

    private static final TxnState[] BY_ID = values();

    private final byte id;
    private final String stateName;
    private final boolean expirationAllowed;
    private Set<TxnState> previous;

    static
    {
        EMPTY.previous = EnumSet.of(EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
        ONGOING.previous = EnumSet.of(ONGOING, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
        PREPARE_COMMIT.previous = EnumSet.of(ONGOING);
        // Empty and Complete*: a TV2 client's abort of a transaction it never added anything to
        PREPARE_ABORT.previous = EnumSet.of(ONGOING, PREPARE_EPOCH_FENCE, EMPTY, COMPLETE_COMMIT, COMPLETE_ABORT);
        COMPLETE_COMMIT.previous = EnumSet.of(PREPARE_COMMIT);
        COMPLETE_ABORT.previous = EnumSet.of(PREPARE_ABORT);
        DEAD.previous = EnumSet.of(EMPTY, COMPLETE_ABORT, COMPLETE_COMMIT);
        PREPARE_EPOCH_FENCE.previous = EnumSet.of(ONGOING);
    }

    TxnState(final int id, final String stateName, final boolean expirationAllowed)
    {
        this.id = (byte)id;
        this.stateName = stateName;
        this.expirationAllowed = expirationAllowed;
    }

    public byte id()
    {
        return id;
    }

    /** The name Kafka's admin API uses ({@code org.apache.kafka.clients.admin.TransactionState}). */
    public String stateName()
    {
        return stateName;
    }

    /** Whether an idle transactional id in this state may be expired (removed with a tombstone). */
    public boolean expirationAllowed()
    {
        return expirationAllowed;
    }

    /** Whether this state may follow {@code state}. */
    public boolean mayFollow(final TxnState state)
    {
        return previous.contains(state);
    }

    /** Whether a transaction in this state waits for its markers (PrepareCommit, PrepareAbort). */
    public boolean isPrepared()
    {
        return this == PREPARE_COMMIT || this == PREPARE_ABORT;
    }

    /** Whether this state ends a transaction (Empty, CompleteCommit, CompleteAbort): a new one may begin. */
    public boolean isIdle()
    {
        return this == EMPTY || this == COMPLETE_COMMIT || this == COMPLETE_ABORT;
    }

    /** The state of a record's status byte, or null for a byte no state has. */
    public static TxnState ofId(final byte id)
    {
        return id >= 0 && id < BY_ID.length ? BY_ID[id] : null;
    }

    /** The state of a wire name (case-sensitive, as Kafka's {@code TransactionState.fromName}), or null. */
    public static TxnState ofName(final String name)
    {
        for (final TxnState state : BY_ID)
        {
            if (state.stateName.equals(name))
            {
                return state;
            }
        }
        return null;
    }
}
