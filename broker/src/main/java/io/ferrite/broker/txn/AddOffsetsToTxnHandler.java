package io.ferrite.broker.txn;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.AddOffsetsToTxnRequestDecoder;
import io.ferrite.wire.message.AddOffsetsToTxnResponseEncoder;
import org.agrona.MutableDirectBuffer;

/**
 * AddOffsetsToTxn (v0-4): the group's {@code __consumer_offsets} partition joins the transaction; an add
 * meeting the previous transaction's end (CONCURRENT_TRANSACTIONS) is answered so at once, as Kafka 4.4
 * answers it (its KafkaApis hands the partition to {@code TransactionCoordinator.handleAddPartitionsToTransaction},
 * which holds nothing); the client retries.
 */
final class AddOffsetsToTxnHandler extends CoordinatorApiHandler<TxnCoordinator, AddOffsetsToTxnRequestDecoder>
{
    private final AddOffsetsToTxnResponseEncoder response = new AddOffsetsToTxnResponseEncoder();

    AddOffsetsToTxnHandler(final TxnCoordinator coordinator, final Runnable waker)
    {
        super(coordinator, coordinator.agent(), waker, new AddOffsetsToTxnRequestDecoder());
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final String transactionalId = request.transactionalId();
        final long producerId = request.producerId();
        final short epoch = request.producerEpoch();
        final String groupId = request.groupId();
        return submitAllowed(AclCodes.WRITE, AclCodes.TRANSACTIONAL_ID, transactionalId,
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, connection, out, outOffset,
            (c, now) -> c.addOffsets(transactionalId, producerId, epoch, groupId),
            (o, at, added) -> write(o, at, version, added.answer().error()), (o, at, error) -> write(o, at, version, error));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final short error)
    {
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(TxnErrors.forTxnRequest(error, version));
        return outOffset + response.finish();
    }
}
