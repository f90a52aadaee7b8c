package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;

import java.util.ArrayList;
import java.util.List;

/**
 * The coordinator's two periodic sweeps (Kafka 4.4's {@code abortTimedOutTransactions}, every
 * {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}, and
 * {@code removeExpiredTransactionalIds}, every {@code transaction.remove.expired.transaction.cleanup.interval.ms}):
 * which transactions each takes, and the transition each starts. The timers are the agent's.
 */
public final class TxnSweeps
{
    private TxnSweeps()
    {
    }

    /** Ongoing transactions, nothing pending, older than their timeout (a timeout of Integer.MAX_VALUE never ends: 2PC). */
    public static List<String> timedOut(final TxnCache cache, final long now)
    {
        final List<String> ids = new ArrayList<>();
        for (final TxnMetadata m : cache.all())
        {
            if (m.state() == TxnState.ONGOING && !m.hasPendingTransition() && m.timeoutMs() != Integer.MAX_VALUE
                && m.startTimestamp() + m.timeoutMs() < now)
            {
                ids.add(m.transactionalId());
            }
        }
        return ids;
    }

    /**
     * The abort of a timed-out transaction: its producer fenced (epoch + 1), PrepareAbort with the
     * cluster's {@code transaction.version}. Null when there is nothing to do any more (the id is
     * gone, a transition is pending, the transaction is no longer ongoing) or nothing could be prepared.
     */
    public static TxnWrite abortTimedOut(final TxnCache cache, final ProducerIdSource ids, final String transactionalId,
        final long now)
    {
        final TxnMetadata m = cache.get(transactionalId);
        if (m == null || m.hasPendingTransition() || m.state() != TxnState.ONGOING
            || cache.lookupError(transactionalId) != Errors.NONE)
        {
            return null;
        }
        final TxnDecision d = EndTxnRules.fenceAndAbort(m, cache.config(), ids, now, TxnWrite.Then.MARKERS_ONLY);
        return d instanceof TxnWrite w ? w : null;
    }

    /**
     * The idle ids to remove, each prepared Dead (its write is a tombstone): Empty, CompleteCommit
     * or CompleteAbort, nothing pending, last updated {@code transactional.id.expiration.ms} ago or more.
     */
    public static List<TxnWrite> expire(final TxnCache cache, final long now)
    {
        final long limit = now - cache.config().idExpirationMs();
        final List<TxnWrite> writes = new ArrayList<>();
        for (final TxnMetadata m : cache.all())
        {
            if (!m.hasPendingTransition() && m.state().expirationAllowed() && m.lastUpdateTimestamp() <= limit)
            {
                writes.add(new TxnWrite(m.transactionalId(), m.prepareDead(), TxnWrite.Then.REMOVE));
            }
        }
        return writes;
    }
}
