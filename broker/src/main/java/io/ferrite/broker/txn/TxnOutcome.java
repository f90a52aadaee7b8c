package io.ferrite.broker.txn;

import io.ferrite.broker.txn.TxnDecision.Answer;

/**
 * What follows a {@code __transaction_state} write's result: the answer to send (null: nobody
 * waits), the markers to write (null: none), and the write to try again (null: none; only a
 * Complete* whose write failed with COORDINATOR_NOT_AVAILABLE, which stays pending).
 */
public record TxnOutcome(Answer answer, MarkerJob markers, TxnWrite retry)
{
    static final TxnOutcome NOTHING = new TxnOutcome(null, null, null);

    static TxnOutcome answer(final Answer answer)
    {
        return new TxnOutcome(answer, null, null);
    }
}
