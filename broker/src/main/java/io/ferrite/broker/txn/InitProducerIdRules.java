package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.txn.TxnDecision.Answer;

import java.io.IOException;

/**
 * InitProducerId, as Kafka 4.4's {@code KafkaApis.handleInitProducerIdRequest} and
 * {@code TransactionCoordinator.handleInitProducerId}: a new epoch (or, at an exhausted epoch, a
 * new producer id) for a transactional id whose transaction is over; an ongoing transaction is
 * fenced and aborted first, and the client, answered CONCURRENT_TRANSACTIONS, retries.
 * The answer's error is translated by version with {@link TxnErrors#forInitProducerId}.
 */
public final class InitProducerIdRules
{
    /** {@link #nextId}'s answer when the ids could not be reserved (the allocator's file could not be written). */
    static final long NO_ID_STORAGE = -2;

    private InitProducerIdRules()
    {
    }

    /**
     * @param transactionalId null for an idempotent producer (a new id, epoch 0, nothing written)
     * @param expectedProducerId  v3+: the id the producer has, -1 for none
     * @param expectedEpoch       v3+: its epoch, -1 for none (exactly one of the two -1 is INVALID_REQUEST)
     */
    public static TxnDecision initProducerId(final TxnCache cache, final ProducerIdSource ids, final String transactionalId,
        final int timeoutMs, final long expectedProducerId, final short expectedEpoch, final long now)
    {
        final boolean noId = expectedProducerId == TxnMetadata.NO_PRODUCER_ID;
        final boolean noEpoch = expectedEpoch == TxnMetadata.NO_EPOCH;
        if (noId != noEpoch)
        {
            return Answer.error(Errors.INVALID_REQUEST);
        }
        final boolean hasExpected = !noId;
        if (transactionalId == null)
        {
            final long id = nextId(ids);
            return id < 0 ? Answer.error(noIdError(id)) : new Answer(Errors.NONE, id, (short)0);
        }
        if (transactionalId.isEmpty())
        {
            return Answer.error(Errors.INVALID_REQUEST);
        }
        if (timeoutMs <= 0 || timeoutMs > cache.config().maxTimeoutMs())
        {
            return Answer.error(Errors.INVALID_TRANSACTION_TIMEOUT);
        }
        final short lookup = cache.lookupError(transactionalId);
        if (lookup != Errors.NONE)
        {
            return Answer.error(lookup);
        }
        TxnMetadata m = cache.get(transactionalId);
        if (m == null)
        {
            final long id = nextId(ids);
            if (id < 0)
            {
                return Answer.error(noIdError(id));
            }
            m = TxnMetadata.fresh(transactionalId, id, timeoutMs, now);
            cache.put(m);
        }
        if (m.hasPendingTransition())
        {
            return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
        }
        if (hasExpected && !isValidProducerId(m, expectedProducerId, expectedEpoch))
        {
            return Answer.error(Errors.PRODUCER_FENCED);
        }
        switch (m.state())
        {
            case PREPARE_COMMIT:
            case PREPARE_ABORT:
                return Answer.error(Errors.CONCURRENT_TRANSACTIONS);
            case ONGOING:
                final TxnDecision abort = EndTxnRules.fenceAndAbort(m, cache.config(), ids, now, TxnWrite.Then.ANSWER_RETRY_AFTER_FENCE);
                if (abort instanceof Answer a)
                {
                    return Answer.error(a.error() == Errors.NONE ? Errors.CONCURRENT_TRANSACTIONS : a.error());
                }
                return abort;
            case EMPTY:
            case COMPLETE_COMMIT:
            case COMPLETE_ABORT:
                return newEpoch(m, ids, timeoutMs, hasExpected, expectedEpoch, now);
            default:
                throw new IllegalStateException(transactionalId + " found in " + m.state());
        }
    }

    private static TxnDecision newEpoch(final TxnMetadata m, final ProducerIdSource ids, final int timeoutMs,
        final boolean hasExpected, final short expectedEpoch, final long now)
    {
        if (m.isProducerEpochExhausted() && (!hasExpected || expectedEpoch == m.producerEpoch()))
        {
            final long id = nextId(ids);
            if (id < 0)
            {
                return Answer.error(noIdError(id));
            }
            return write(m, m.prepareProducerIdRotation(id, timeoutMs, now, hasExpected));
        }
        if (m.isProducerEpochExhausted())
        {
            // Kafka's prepareIncrementProducerEpoch throws here: the exception answers UNKNOWN_SERVER_ERROR
            return Answer.error(Errors.UNKNOWN_SERVER_ERROR);
        }
        if (hasExpected && m.producerEpoch() != TxnMetadata.NO_EPOCH && expectedEpoch != m.producerEpoch()
            && expectedEpoch != m.lastProducerEpoch())
        {
            return Answer.error(Errors.PRODUCER_FENCED);
        }
        return write(m, m.prepareIncrementProducerEpoch(timeoutMs, hasExpected, expectedEpoch, now));
    }

    private static TxnWrite write(final TxnMetadata m, final TxnTransit t)
    {
        return new TxnWrite(m.transactionalId(), t, TxnWrite.Then.ANSWER_PRODUCER);
    }

    /**
     * The producer the client says it is may ask: the id has no epoch yet, or it is the id, or the
     * one before a rotation asked at its exhausted epoch (a retry whose answer was lost).
     */
    static boolean isValidProducerId(final TxnMetadata m, final long producerId, final short epoch)
    {
        return m.producerEpoch() == TxnMetadata.NO_EPOCH || producerId == m.producerId()
            || producerId == m.prevProducerId() && TxnMetadata.isEpochExhausted(epoch);
    }

    /**
     * A new producer id; {@link ProducerIdSource#NONE_YET} when none is available yet (the next block is being
     * reserved), {@link #NO_ID_STORAGE} when the ids could not be reserved: see {@link #noIdError}.
     */
    static long nextId(final ProducerIdSource ids)
    {
        try
        {
            return ids.next();
        }
        catch (final IOException ex)
        {
            return NO_ID_STORAGE;
        }
    }

    /**
     * The answer when {@link #nextId} gave no id: COORDINATOR_LOAD_IN_PROGRESS while the next block is reserved
     * (retriable, as Kafka answers while its next block has not arrived), else KAFKA_STORAGE_ERROR.
     */
    static short noIdError(final long id)
    {
        return id == ProducerIdSource.NONE_YET ? Errors.COORDINATOR_LOAD_IN_PROGRESS : Errors.KAFKA_STORAGE_ERROR;
    }
}
