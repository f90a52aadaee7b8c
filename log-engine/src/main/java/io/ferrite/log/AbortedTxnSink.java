package io.ferrite.log;

/**
 * Receives the aborted transactions a read_committed fetch must list
 * ({@link LogTransactions#collectAbortedTransactions}), one call each, in index order: what a Fetch
 * response's {@code AbortedTransactions} entry carries. Called on the reading thread; an
 * implementation owned by that thread (e.g. writing straight into the response being built)
 * makes the walk allocation-free.
 */
@FunctionalInterface
public interface AbortedTxnSink
{
    void abortedTransaction(long producerId, long firstOffset);
}
