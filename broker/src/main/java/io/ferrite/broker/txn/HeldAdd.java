package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorCall;

import java.util.function.Supplier;

/**
 * A produce v12's implicit add to its transaction ({@link ProduceVerifier}) held on the coordinators' agent
 * while it is answered CONCURRENT_TRANSACTIONS (the transaction's EndTxn was answered at Prepare* and its
 * markers are still being written: the client's very next send meets it), tried again until
 * {@code retryUntilMs} ({@code add.partitions.to.txn.retry.backoff.max.ms}); after that the last answer goes
 * to the client, CONCURRENT_TRANSACTIONS as Kafka 4.4 answers it. This is Kafka 4.4's {@code ReplicaManager}
 * retry of a produce's add (javap: {@code handleProduceAppend}, bounded by {@code request.timeout.ms} too). A client's own add
 * (AddPartitionsToTxn v0-3, AddOffsetsToTxn) and a broker's AddPartitionsToTxn v4-5 are not held: Kafka 4.4's
 * {@code TransactionCoordinator} answers them at once. The agent asks again after every pass that changed
 * anything (so at once when Complete* is written) and at every tick — no timer, no loop. On the agent only;
 * the network thread reads {@link #answer} once the call is answered.
 */
final class HeldAdd implements CoordinatorCall.Outcome
{
    private final Supplier<TxnCoordinator.Pending> add;
    private final long retryUntilMs;
    private TxnCoordinator.Pending pending;

    /** Tries {@code add} now (on the agent); {@code retryUntilMs} is when a CONCURRENT_TRANSACTIONS answer stops being tried again. */
    HeldAdd(final Supplier<TxnCoordinator.Pending> add, final long retryUntilMs)
    {
        this.add = add;
        this.retryUntilMs = retryUntilMs;
        pending = add.get();
    }

    /** On the agent: one more try when the last was CONCURRENT_TRANSACTIONS and the time is not up (that answer wrote nothing). */
    @Override
    public boolean complete(final long nowMs)
    {
        if (!pending.complete(nowMs))
        {
            return false;
        }
        if (pending.answer().error() != Errors.CONCURRENT_TRANSACTIONS)
        {
            return true;
        }
        // asked again before the bound is applied: the pass that reaches the bound may be the one that
        // wrote Complete* (or bumped the epoch), and the answer is then what the rules say now
        pending = add.get();
        return pending.complete(nowMs) && (pending.answer().error() != Errors.CONCURRENT_TRANSACTIONS || nowMs >= retryUntilMs);
    }

    /** The last try's answer, once {@link #complete}. */
    TxnDecision.Answer answer()
    {
        return pending.answer();
    }
}
