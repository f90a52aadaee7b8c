package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;

/**
 * The second half of every transition: its record was written (the transition is applied, and
 * what it was for follows) or its write failed (it is forgotten, the waiting client gets the
 * translated error). A PrepareCommit/PrepareAbort is followed at once by its Complete* prepared and
 * the markers handed out; the EndTxn answer goes out then, before the markers, as in Kafka.
 */
public final class TxnWrites
{
    private TxnWrites()
    {
    }

    /**
     * The write's record is in the log: the transition is applied. Applying it throws only on a
     * coordinator bug (the transition check of {@link TxnMetadata#complete}); then the pending
     * transition is dropped before the exception goes on, so the bug costs this request and does
     * not leave the id answering CONCURRENT_TRANSACTIONS for ever.
     */
    public static TxnOutcome written(final TxnCache cache, final TxnWrite w, final long now)
    {
        final TxnMetadata m = metadata(cache, w);
        try
        {
            return apply(cache, m, w, now);
        }
        catch (final RuntimeException ex)
        {
            m.cancel();
            throw ex;
        }
    }

    private static TxnOutcome apply(final TxnCache cache, final TxnMetadata m, final TxnWrite w, final long now)
    {
        if (w.then() == TxnWrite.Then.REMOVE)
        {
            m.cancel();
            cache.remove(w.transactionalId());
            return TxnOutcome.NOTHING;
        }
        m.complete(w.transit());
        switch (w.then())
        {
            case ANSWER_PRODUCER:
                return TxnOutcome.answer(new Answer(Errors.NONE, m.producerId(), m.producerEpoch()));
            case ANSWER_NONE:
                return TxnOutcome.answer(Answer.error(Errors.NONE));
            case COMPLETED:
                return TxnOutcome.NOTHING;
            default:
                break;
        }
        final MarkerJob markers = MarkerJob.completing(m, now);
        final Answer answer;
        switch (w.then())
        {
            case ANSWER_END_TXN:
                final TxnTransit next = markers.complete().transit();
                // a TV2 client takes the producer id and epoch its next transaction uses
                answer = TxnTransit.epochBump(w.transit().clientTransactionVersion())
                    ? new Answer(Errors.NONE, next.producerId(), next.producerEpoch()) : Answer.error(Errors.NONE);
                break;
            case ANSWER_RETRY_AFTER_FENCE:
                answer = Answer.error(Errors.CONCURRENT_TRANSACTIONS);
                break;
            default:
                answer = null;
        }
        return new TxnOutcome(answer, markers, null);
    }

    /** @param error Kafka's code of the write's failure (see {@link Errors#ofAppend}) */
    public static TxnOutcome failed(final TxnCache cache, final TxnWrite w, final short error)
    {
        final TxnMetadata m = metadata(cache, w);
        if (w.then() == TxnWrite.Then.COMPLETED)
        {
            // the markers are written: Complete* stays pending until it is
            return new TxnOutcome(null, null, w);
        }
        m.cancel();
        final boolean fenceAbort = w.then() == TxnWrite.Then.ANSWER_RETRY_AFTER_FENCE || w.then() == TxnWrite.Then.MARKERS_ONLY;
        if (fenceAbort && !TxnTransit.epochBump(w.transit().clientTransactionVersion()))
        {
            // the TV1 fence took its epoch already (EndTxnRules): the next attempt must not bump again
            m.failedEpochFence(true);
        }
        if (w.then() == TxnWrite.Then.MARKERS_ONLY || w.then() == TxnWrite.Then.REMOVE)
        {
            return TxnOutcome.NOTHING;
        }
        return TxnOutcome.answer(Answer.error(TxnErrors.ofAppend(error)));
    }

    private static TxnMetadata metadata(final TxnCache cache, final TxnWrite w)
    {
        final TxnMetadata m = cache.get(w.transactionalId());
        if (m == null || m.pendingState() != w.transit().state())
        {
            throw new IllegalStateException("no pending " + w.transit().state() + " for " + w.transactionalId() + ": " + m);
        }
        return m;
    }
}
