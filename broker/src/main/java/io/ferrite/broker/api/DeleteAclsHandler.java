package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DeleteAclsRequestDecoder;
import io.ferrite.wire.message.DeleteAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * DeleteAcls without an authorizer, as Kafka 4.4 answers it: one result per filter, in order, each SECURITY_DISABLED
 * with "No Authorizer is configured." and no matching ACLs ({@link AclHandlers}). A filter with an UNKNOWN element closes
 * the connection, as Kafka's parse refuses the request.
 */
final class DeleteAclsHandler implements RequestHandler
{
    private final DeleteAclsRequestDecoder request = new DeleteAclsRequestDecoder();
    private final DeleteAclsResponseEncoder response = new DeleteAclsResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        int count = 0;
        for (final DeleteAclsRequestDecoder.DeleteAclsFilter filters = request.filters(); filters.hasNext(); count++)
        {
            final DeleteAclsRequestDecoder.DeleteAclsFilter one = filters.next();
            if (AclHandlers.hasUnknown(one.resourceTypeFilter(), one.patternTypeFilter(), one.operation(), one.permissionType()))
            {
                return CLOSE;
            }
        }
        final DeleteAclsResponseEncoder.DeleteAclsFilterResult results = response.wrap(out, outOffset, version).throttleTimeMs(0)
            .filterResults(count);
        for (int i = 0; i < count; i++)
        {
            results.next().errorCode(Errors.SECURITY_DISABLED).errorMessage(AclHandlers.ALTER_MESSAGE).matchingAcls(0);
        }
        return outOffset + response.finish();
    }
}
