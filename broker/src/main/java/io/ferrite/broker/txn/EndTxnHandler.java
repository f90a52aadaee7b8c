package io.ferrite.broker.txn;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.EndTxnRequestDecoder;
import io.ferrite.wire.message.EndTxnResponseEncoder;
import org.agrona.MutableDirectBuffer;

/**
 * EndTxn (v0-5): the coordinator's PrepareCommit or PrepareAbort, answered once written — before the
 * markers, as Kafka answers; version 5 (transaction version 2) with the producer id and epoch the
 * client's next transaction uses.
 */
final class EndTxnHandler extends CoordinatorApiHandler<TxnCoordinator, EndTxnRequestDecoder>
{
    private final EndTxnResponseEncoder response = new EndTxnResponseEncoder();

    EndTxnHandler(final TxnCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, coordinator.agent(), waker, new EndTxnRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final String transactionalId = request.transactionalId();
        final long producerId = request.producerId();
        final short epoch = request.producerEpoch();
        final boolean commit = request.committed();
        final long decodedNs = EndTxnTiming.ENABLED ? System.nanoTime() : 0;
        return submitAllowed(AclCodes.WRITE, AclCodes.TRANSACTIONAL_ID, transactionalId,
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, connection, out, outOffset, (c, now) -> c.endTxn(transactionalId, producerId, epoch, commit, version, decodedNs),
            (o, at, pending) ->
            {
                EndTxnTiming.answered(pending);
                return write(o, at, version, pending.answer());
            }, (o, at, error) -> write(o, at, version, TxnDecision.Answer.error(error)));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final TxnDecision.Answer answer)
    {
        final short error = TxnErrors.forTxnRequest(answer.error(), version);
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(error);
        if (version >= 5)
        {
            response.producerId(error == Errors.NONE ? answer.producerId() : -1).producerEpoch(error == Errors.NONE ? answer.producerEpoch() : -1);
        }
        return outOffset + response.finish();
    }
}
