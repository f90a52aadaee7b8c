package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.CreateAclsRequestDecoder;
import io.ferrite.wire.message.CreateAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * CreateAcls without an authorizer, as Kafka 4.4 answers it: one result per creation, in order, each SECURITY_DISABLED
 * with "No Authorizer is configured." ({@link AclHandlers}); nothing is stored. A creation with an UNKNOWN element closes
 * the connection, as Kafka's parse refuses the request.
 */
final class CreateAclsHandler implements RequestHandler
{
    private final CreateAclsRequestDecoder request = new CreateAclsRequestDecoder();
    private final CreateAclsResponseEncoder response = new CreateAclsResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        int count = 0;
        for (final CreateAclsRequestDecoder.AclCreation creations = request.creations(); creations.hasNext(); count++)
        {
            final CreateAclsRequestDecoder.AclCreation one = creations.next();
            if (AclHandlers.hasUnknown(one.resourceType(), one.resourcePatternType(), one.operation(), one.permissionType()))
            {
                return CLOSE;
            }
        }
        final CreateAclsResponseEncoder.AclCreationResult results = response.wrap(out, outOffset, version).throttleTimeMs(0)
            .results(count);
        for (int i = 0; i < count; i++)
        {
            results.next().errorCode(Errors.SECURITY_DISABLED).errorMessage(AclHandlers.ALTER_MESSAGE);
        }
        return outOffset + response.finish();
    }
}
