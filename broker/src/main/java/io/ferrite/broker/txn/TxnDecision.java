package io.ferrite.broker.txn;

/**
 * What a request rule decided: an {@link Answer} to send now (nothing is written), or a
 * {@link TxnWrite} (a transition prepared, its record to write; the answer comes once it is written).
 */
public sealed interface TxnDecision permits TxnDecision.Answer, TxnWrite
{
    /** An answer: an error code and, for InitProducerId and EndTxn v5, a producer id and epoch (-1 when none). */
    record Answer(short error, long producerId, short producerEpoch) implements TxnDecision
    {
        public static Answer error(final short error)
        {
            return new Answer(error, -1, (short)-1);
        }
    }
}
