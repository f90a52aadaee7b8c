package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.MetadataHandler;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.FindCoordinatorRequestDecoder;
import io.ferrite.wire.message.FindCoordinatorResponseEncoder;
import io.ferrite.wire.message.StringArrayDecoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * FindCoordinator: this node for every group. Transaction coordinators do not exist yet, so a
 * transactional id gets TRANSACTIONAL_ID_AUTHORIZATION_FAILED (as InitProducerId does) rather than
 * an error a client would retry for ever; other key types are INVALID_REQUEST. The first one for a
 * group has the admin agent create {@code __consumer_offsets} (without waiting for it).
 */
final class FindCoordinatorHandler implements RequestHandler
{
    private static final byte GROUP_KEY = 0;
    private static final byte TRANSACTION_KEY = 1;

    private final GroupCoordinator coordinator;
    private final int nodeId;
    private final MetadataHandler address;
    private final FindCoordinatorRequestDecoder request = new FindCoordinatorRequestDecoder();
    private final FindCoordinatorResponseEncoder response = new FindCoordinatorResponseEncoder();

    FindCoordinatorHandler(final GroupCoordinator coordinator, final int nodeId, final MetadataHandler address)
    {
        this.coordinator = coordinator;
        this.nodeId = nodeId;
        this.address = address;
    }

    private short error(final byte keyType, final String key)
    {
        if (keyType == TRANSACTION_KEY)
        {
            return Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        }
        if (keyType != GROUP_KEY)
        {
            return Errors.INVALID_REQUEST;
        }
        return key == null || key.isEmpty() ? Errors.INVALID_REQUEST : Errors.NONE;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final byte keyType = version >= 1 ? request.keyType() : GROUP_KEY;
        if (keyType == GROUP_KEY)
        {
            coordinator.offsetsTopicWanted(); // created by the admin agent, as Kafka creates it on the first FindCoordinator
        }
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (version < 4)
        {
            final short error = error(keyType, request.key());
            response.errorCode(error).errorMessage(error == Errors.NONE ? null : "The coordinator is not available.")
                .nodeId(error == Errors.NONE ? nodeId : -1).host(error == Errors.NONE ? address.advertisedHost() : "")
                .port(error == Errors.NONE ? address.advertisedPort() : -1);
        }
        else
        {
            final StringArrayDecoder keys = request.coordinatorKeys();
            final FindCoordinatorResponseEncoder.Coordinator c = response.coordinators(keys.elementCount());
            while (keys.hasNext())
            {
                final String key = keys.next().value();
                final short error = error(keyType, key);
                c.next().key(key).nodeId(error == Errors.NONE ? nodeId : -1)
                    .host(error == Errors.NONE ? address.advertisedHost() : "")
                    .port(error == Errors.NONE ? address.advertisedPort() : -1).errorCode(error)
                    .errorMessage((CharSequence)null);
            }
        }
        return outOffset + response.finish();
    }
}
