package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;

/**
 * EndTxn, as Kafka 4.4's {@code TransactionCoordinator.handleEndTransaction}: v0-4 (TV0/1, the
 * epoch stays) and v5 (TV2: PrepareCommit/PrepareAbort bump the epoch, an abort with nothing added
 * is allowed, retries are recognised by the bumped epoch); and the aborts the coordinator starts
 * itself ({@link #fenceAndAbort}). The write is PrepareCommit/PrepareAbort; {@link TxnWrites#written}
 * then prepares Complete* and hands the markers out. Version translation: {@link TxnErrors#forTxnRequest}.
 */
public final class EndTxnRules
{
    private EndTxnRules()
    {
    }

    /** @param version the EndTxn request's version (5+ is a TV2 client) */
    public static TxnDecision endTxn(final TxnCache cache, final ProducerIdSource ids, final String transactionalId,
        final long producerId, final short epoch, final boolean commit, final short version, final long now)
    {
        final short error = cache.requestError(transactionalId);
        if (error != Errors.NONE)
        {
            return Answer.error(error);
        }
        return end(cache.get(transactionalId), ids, producerId, epoch, commit, TxnErrors.endTxnClientVersion(version), true, now,
            TxnWrite.Then.ANSWER_END_TXN);
    }

    /**
     * The coordinator's own abort of an ongoing transaction (InitProducerId over it, or its timeout):
     * the producer's epoch is fenced, then the transaction aborted with the cluster's
     * {@code transaction.version}. An {@link Answer} means nothing is written.
     */
    static TxnDecision fenceAndAbort(final TxnMetadata m, final TxnConfig config, final ProducerIdSource ids, final long now,
        final TxnWrite.Then then)
    {
        final TxnTransit fence = m.prepareFenceProducerEpoch();
        final TxnDecision d = end(m, ids, fence.producerId(), fence.producerEpoch(), false, config.transactionVersion(), false,
            now, then);
        m.dropPendingFence();
        return d;
    }

    private static TxnDecision end(final TxnMetadata m, final ProducerIdSource ids, final long producerId, final short epoch,
        final boolean commit, final short clientTv, final boolean fromClient, final long now, final TxnWrite.Then then)
    {
        return TxnTransit.epochBump(clientTv)
            ? endV2(m, ids, producerId, epoch, commit, clientTv, fromClient, now, then)
            : endV1(m, producerId, epoch, commit, fromClient, now, then);
    }

    private static TxnDecision endV1(final TxnMetadata m, final long producerId, final short epoch, final boolean commit,
        final boolean fromClient, final long now, final TxnWrite.Then then)
    {
        if (m.producerId() != producerId)
        {
            return Answer.error(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (fromClient ? epoch != m.producerEpoch() : epoch < m.producerEpoch())
        {
            return Answer.error(Errors.PRODUCER_FENCED);
        }
        final boolean fence = m.pendingState() == TxnState.PREPARE_EPOCH_FENCE;
        if (m.hasPendingTransition() && !fence)
        {
            return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        switch (m.state())
        {
            case ONGOING:
                final TxnState next = commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT;
                if (next == TxnState.PREPARE_ABORT && fence)
                {
                    m.takeFencedEpoch(epoch);
                }
                return new TxnWrite(m.transactionalId(), m.prepareAbortOrCommit(next, (short)0, TxnMetadata.NO_PRODUCER_ID, now,
                    false), then);
            case COMPLETE_COMMIT:
                return Answer.error(commit ? Errors.NONE : Errors.INVALID_TXN_STATE);
            case COMPLETE_ABORT:
                return Answer.error(commit ? Errors.INVALID_TXN_STATE : Errors.NONE);
            case PREPARE_COMMIT:
                return Answer.error(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            case PREPARE_ABORT:
                return Answer.error(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            case EMPTY:
                return Answer.error(Errors.INVALID_TXN_STATE);
            default:
                throw new IllegalStateException(m.transactionalId() + " found in " + m.state());
        }
    }

    private static TxnDecision endV2(final TxnMetadata m, final ProducerIdSource ids, final long producerId, final short epoch,
        final boolean commit, final short clientTv, final boolean fromClient, final long now, final TxnWrite.Then then)
    {
        final long currentId = m.producerId();
        final short currentEpoch = m.producerEpoch();
        final boolean fence = m.pendingState() == TxnState.PREPARE_EPOCH_FENCE;
        // the retry of an EndTxn whose PrepareX switched the id: asked at 32766 with the old id
        final boolean retryOnOverflow = !fence && m.prevProducerId() == producerId && epoch == Short.MAX_VALUE - 1
            && currentEpoch == 0;
        // the retry of an EndTxn whose PrepareX bumped the epoch
        final boolean retryOnEpochBump = !fence && currentEpoch == epoch + 1;
        final boolean validEpoch;
        if (fence)
        {
            validEpoch = (!fromClient || epoch == currentEpoch) && epoch >= currentEpoch;
        }
        else if (m.state().isPrepared())
        {
            validEpoch = retryOnEpochBump;
        }
        else if (m.state() == TxnState.COMPLETE_COMMIT || m.state() == TxnState.COMPLETE_ABORT)
        {
            validEpoch = retryOnEpochBump || retryOnOverflow || epoch == currentEpoch;
        }
        else
        {
            validEpoch = epoch == currentEpoch;
        }
        final boolean isRetry = retryOnEpochBump || retryOnOverflow;
        if (m.hasPendingTransition() && !fence)
        {
            return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (currentId != producerId && !retryOnOverflow)
        {
            return Answer.error(Errors.INVALID_PRODUCER_ID_MAPPING);
        }
        if (!validEpoch)
        {
            return Answer.error(Errors.PRODUCER_FENCED);
        }
        final Answer retried = new Answer(Errors.NONE, currentId, currentEpoch);
        switch (m.state())
        {
            case ONGOING:
                return prepare(m, ids, commit ? TxnState.PREPARE_COMMIT : TxnState.PREPARE_ABORT, clientTv, false, now, then);
            case COMPLETE_COMMIT:
                if (commit)
                {
                    return isRetry ? retried : Answer.error(Errors.INVALID_TXN_STATE);
                }
                return isRetry ? Answer.error(Errors.INVALID_TXN_STATE)
                    : prepare(m, ids, TxnState.PREPARE_ABORT, clientTv, true, now, then);
            case COMPLETE_ABORT:
                if (commit)
                {
                    return Answer.error(Errors.INVALID_TXN_STATE);
                }
                return isRetry ? retried : prepare(m, ids, TxnState.PREPARE_ABORT, clientTv, true, now, then);
            case PREPARE_COMMIT:
                return Answer.error(commit ? Errors.CONCURRENT_TRANSACTIONS : Errors.INVALID_TXN_STATE);
            case PREPARE_ABORT:
                return Answer.error(commit ? Errors.INVALID_TXN_STATE : Errors.CONCURRENT_TRANSACTIONS);
            case EMPTY:
                return commit ? Answer.error(Errors.INVALID_TXN_STATE)
                    : prepare(m, ids, TxnState.PREPARE_ABORT, clientTv, true, now, then);
            default:
                throw new IllegalStateException(m.transactionalId() + " found in " + m.state());
        }
    }

    /** PrepareX with the epoch bumped; at an exhausted epoch the transaction also takes its next producer id. */
    private static TxnDecision prepare(final TxnMetadata m, final ProducerIdSource ids, final TxnState next, final short clientTv,
        final boolean noPartitionAdded, final long now, final TxnWrite.Then then)
    {
        long nextProducerId = TxnMetadata.NO_PRODUCER_ID;
        if (m.isProducerEpochExhausted())
        {
            nextProducerId = InitProducerIdRules.nextId(ids);
        }
        if (next == TxnState.PREPARE_ABORT)
        {
            m.dropPendingFence();
        }
        if (m.isProducerEpochExhausted() && nextProducerId < 0)
        {
            return Answer.error(InitProducerIdRules.noIdError(nextProducerId));
        }
        return new TxnWrite(m.transactionalId(), m.prepareAbortOrCommit(next, clientTv, nextProducerId, now, noPartitionAdded), then);
    }
}
