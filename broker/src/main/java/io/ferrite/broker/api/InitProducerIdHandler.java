package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.ProducerIds;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.InitProducerIdRequestDecoder;
import io.ferrite.wire.message.InitProducerIdResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;

/**
 * InitProducerId for idempotent producers: as Kafka does without a transactional id, every request
 * gets a fresh producer id with epoch 0 (an epoch bump asked for with the old id and epoch is also
 * a new id). Transactional ids are refused with TRANSACTIONAL_ID_AUTHORIZATION_FAILED: there is no
 * transaction coordinator yet, and a clear failure beats a client retrying for ever.
 */
public final class InitProducerIdHandler implements RequestHandler
{
    private static final Logger LOG = LoggerFactory.getLogger(InitProducerIdHandler.class);

    private final ProducerIds ids;
    private final InitProducerIdRequestDecoder request = new InitProducerIdRequestDecoder();
    private final InitProducerIdResponseEncoder response = new InitProducerIdResponseEncoder();

    public InitProducerIdHandler(final ProducerIds ids)
    {
        this.ids = ids;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (!request.transactionalIdIsNull())
        {
            response.errorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED).producerId(-1).producerEpoch((short)-1);
        }
        else
        {
            try
            {
                response.errorCode(Errors.NONE).producerId(ids.next()).producerEpoch((short)0);
            }
            catch (final IOException ex)
            {
                LOG.error("cannot allocate producer ids", ex);
                response.errorCode(Errors.KAFKA_STORAGE_ERROR).producerId(-1).producerEpoch((short)-1);
            }
        }
        return outOffset + response.finish();
    }
}
