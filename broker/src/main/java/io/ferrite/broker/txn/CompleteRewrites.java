package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The transaction coordinator's Complete* records whose write failed retriably, by transactional id: each is
 * written again when its {@link RetryBackoff} says (50 ms, doubled each time, at most 5 s), from the agent's tick.
 * Agent only.
 */
final class CompleteRewrites
{
    private static final Logger LOG = LoggerFactory.getLogger(CompleteRewrites.class);

    private final Map<String, Rewrite> byId = new LinkedHashMap<>();

    /**
     * A Complete* record's answer: a retriable failure schedules it again. Logged where every coordinator write is
     * (CoordinatorLog's RepeatedWriteFailures: the first failure in a row, then the success after them); a retry given
     * up for a non-retriable error once some had failed is said here, as nothing else says it.
     */
    void answered(final TxnWrite w, final short error, final boolean retry, final long nowMs)
    {
        Rewrite r = byId.get(w.transactionalId());
        if (retry)
        {
            if (r == null)
            {
                r = new Rewrite(w, new RetryBackoff());
                byId.put(w.transactionalId(), r);
            }
            r.backoff().failed(nowMs);
            return;
        }
        if (r != null)
        {
            byId.remove(w.transactionalId());
            if (error != Errors.NONE)
            {
                LOG.error("{} of {} given up after {} failed tries (error {}): it waits for the partition's next load", w.transit().state(),
                    w.transactionalId(), r.backoff().failures(), error);
            }
        }
    }

    /** Writes again ({@code write}) the records whose backoff is over at {@code nowMs}. */
    void due(final long nowMs, final Consumer<TxnWrite> write)
    {
        if (byId.isEmpty())
        {
            return;
        }
        for (final Rewrite r : new ArrayList<>(byId.values()))
        {
            if (r.backoff().take(nowMs))
            {
                write.accept(r.write());
            }
        }
    }

    /** Forgets the rewrites of the ids {@code ofIt} selects (their partition is no longer coordinated here). */
    void forget(final Predicate<String> ofIt)
    {
        byId.keySet().removeIf(ofIt);
    }

    /** A Complete* record to write again, and when. */
    private record Rewrite(TxnWrite write, RetryBackoff backoff)
    {
    }
}
