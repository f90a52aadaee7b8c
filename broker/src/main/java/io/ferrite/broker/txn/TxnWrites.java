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

    /**
     * The write's record could not be appended. A Complete* (its markers are written) stays pending:
     * it is written again ({@link TxnOutcome#retry}) only when the failure means COORDINATOR_NOT_AVAILABLE
     * (the append may succeed later: UNKNOWN_TOPIC_OR_PARTITION, NOT_ENOUGH_REPLICAS*, REQUEST_TIMED_OUT);
     * any other failure (NOT_COORDINATOR after the partition was closed or could not be written, an
     * unexpected error) leaves it pending for the partition's next load, which prepares it again —
     * as Kafka's {@code TransactionMarkerChannelManager} does, and no hot retry loop. Any other write
     * is forgotten and its client answered the translated error.
     *
     * @param error the failed append's error as a produce request would answer it (Kafka's code:
     *     {@link Errors#ofAppend} of the log's result), untranslated; this translates it with
     *     {@link TxnErrors#ofAppend}
     */
    public static TxnOutcome failed(final TxnCache cache, final TxnWrite w, final short error)
    {
        final TxnMetadata m = metadata(cache, w);
        if (w.then() == TxnWrite.Then.COMPLETED)
        {
            return TxnErrors.ofAppend(error) == Errors.COORDINATOR_NOT_AVAILABLE ? new TxnOutcome(null, null, w) : TxnOutcome.NOTHING;
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

    /**
     * The write's answer came back after its partition was unloaded (in another tenure than {@code tenure}, the one it
     * was sent in): nothing is applied, no markers, its client is answered NOT_COORDINATOR and finds the new
     * coordinator, as Kafka's append callback answers when the partition's coordinator epoch changed. Null when the
     * write is still this coordinator's.
     */
    static TxnOutcome stale(final TxnCache cache, final TxnWrite w, final int tenure)
    {
        return cache.tenure(w.transactionalId()) == tenure ? null : TxnOutcome.answer(Answer.error(Errors.NOT_COORDINATOR));
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
