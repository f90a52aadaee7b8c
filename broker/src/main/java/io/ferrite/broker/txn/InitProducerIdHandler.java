package io.ferrite.broker.txn;

import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.Errors;
import io.ferrite.broker.ProducerIds;
import io.ferrite.broker.coordinator.CoordinatorApiHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.wire.message.InitProducerIdRequestDecoder;
import io.ferrite.wire.message.InitProducerIdResponseEncoder;
import org.agrona.MutableDirectBuffer;

/**
 * InitProducerId. Without a transactional id, as Kafka does for an idempotent producer, on the
 * network thread: a fresh producer id with epoch 0 (an epoch bump asked for with the old id and
 * epoch is also a new id). With one, the transaction coordinator's work
 * ({@link TxnCoordinator#initProducerId}: the id's producer id and a new epoch, the previous epoch
 * fenced, its open transaction aborted first), answered once its record is written. Version 6's
 * two-phase commit (KIP-939) is not offered: Kafka 4.4 does not advertise it either.
 */
final class InitProducerIdHandler extends CoordinatorApiHandler<TxnCoordinator, InitProducerIdRequestDecoder>
{
    private final ProducerIds ids;
    private final InitProducerIdResponseEncoder response = new InitProducerIdResponseEncoder();

    InitProducerIdHandler(final TxnCoordinator coordinator, final Runnable waker, final ProducerIds ids)
    {
        super(coordinator, coordinator.agent(), waker, new InitProducerIdRequestDecoder());
        this.ids = ids;
    }

    @Override
    protected int handle(final short version, final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        if (request.transactionalIdIsNull())
        {
            response.wrap(out, outOffset, version).throttleTimeMs(0);
            if (!Access.cluster(connection, AclCodes.IDEMPOTENT_WRITE) && !Access.some(connection, AclCodes.WRITE, AclCodes.TOPIC))
            {
                // Kafka, before the id check: an idempotent producer needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic
                response.errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).producerId(-1).producerEpoch((short)-1);
                return outOffset + response.finish();
            }
            if (version >= 3 && (request.producerId() == -1) != (request.producerEpoch() == -1))
            {
                // Kafka's check for both paths: an id without its epoch, or an epoch without its id
                response.errorCode(Errors.INVALID_REQUEST).producerId(-1).producerEpoch((short)-1);
                return outOffset + response.finish();
            }
            final long id = InitProducerIdRules.nextId(ids);
            if (id >= 0)
            {
                response.errorCode(Errors.NONE).producerId(id).producerEpoch((short)0);
            }
            else
            {
                response.errorCode(InitProducerIdRules.noIdError(id)).producerId(-1).producerEpoch((short)-1);
            }
            return outOffset + response.finish();
        }
        final String transactionalId = request.transactionalId();
        final int timeoutMs = request.transactionTimeoutMs();
        final long expectedId = version >= 3 ? request.producerId() : -1;
        final short expectedEpoch = version >= 3 ? request.producerEpoch() : -1;
        return submitAllowed(AclCodes.WRITE, AclCodes.TRANSACTIONAL_ID, transactionalId,
            Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, connection, out, outOffset, (c, now) -> c.initProducerId(transactionalId, timeoutMs, expectedId, expectedEpoch),
            (o, at, pending) -> write(o, at, version, pending.answer()), (o, at, error) -> write(o, at, version, TxnDecision.Answer.error(error)));
    }

    private int write(final MutableDirectBuffer out, final int outOffset, final short version, final TxnDecision.Answer answer)
    {
        final short error = TxnErrors.forInitProducerId(answer.error(), version);
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(error)
            .producerId(error == Errors.NONE ? answer.producerId() : -1).producerEpoch(error == Errors.NONE ? answer.producerEpoch() : -1);
        return outOffset + response.finish();
    }
}
