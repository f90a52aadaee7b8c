package io.ferrite.broker.txn;

/**
 * The sanity check a written transition passes before it is applied (Kafka's
 * {@code TransactionMetadata.completeTransitionTo}): a violation is a bug in the coordinator, never
 * a client's mistake, and throws.
 */
final class TxnTransitions
{
    private TxnTransitions()
    {
    }

    static boolean valid(final TxnMetadata m, final TxnTransit t)
    {
        switch (t.state())
        {
            case EMPTY:
                return (m.producerEpoch() == t.producerEpoch() || validEpochBump(m, t)) && t.partitions().isEmpty()
                    && t.startTimestamp() == -1;
            case ONGOING:
                return validEpoch(m, t) && t.partitions().containsAll(m.partitions()) && m.timeoutMs() == t.timeoutMs();
            case PREPARE_ABORT:
            case PREPARE_COMMIT:
                final boolean emptyAbort = t.state() == TxnState.PREPARE_ABORT && TxnTransit.epochBump(t.clientTransactionVersion())
                    && m.state().isIdle();
                return validEpoch(m, t) && m.partitions().equals(t.partitions()) && m.timeoutMs() == t.timeoutMs()
                    && (m.startTimestamp() == t.startTimestamp() || emptyAbort);
            case COMPLETE_ABORT:
            case COMPLETE_COMMIT:
                return validEpoch(m, t) && m.timeoutMs() == t.timeoutMs() && t.startTimestamp() != -1;
            default:
                // PrepareEpochFence is never written, Dead is a tombstone: neither is completed
                return false;
        }
    }

    private static boolean validEpoch(final TxnMetadata m, final TxnTransit t)
    {
        final boolean v2 = TxnTransit.epochBump(t.clientTransactionVersion());
        final boolean complete = t.state() == TxnState.COMPLETE_COMMIT || t.state() == TxnState.COMPLETE_ABORT;
        if (v2 && complete && t.producerEpoch() == 0)
        {
            // the switch to the next producer id
            return t.lastProducerEpoch() == m.lastProducerEpoch() && t.prevProducerId() == m.producerId();
        }
        if (v2 && t.state().isPrepared())
        {
            return t.lastProducerEpoch() == m.producerEpoch() && t.producerId() == m.producerId();
        }
        return t.producerEpoch() == m.producerEpoch() && t.producerId() == m.producerId();
    }

    private static boolean validEpochBump(final TxnMetadata m, final TxnTransit t)
    {
        return t.producerEpoch() == (short)(m.producerEpoch() + 1) || t.producerEpoch() == 0 && t.producerId() != m.producerId();
    }
}
