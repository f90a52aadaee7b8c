package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeAclsRequestDecoder;
import io.ferrite.wire.message.DescribeAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * DescribeAcls without an authorizer, as Kafka 4.4 answers it: SECURITY_DISABLED with "No Authorizer is configured on
 * the broker" and no resources for any filter Kafka parses; one with an UNKNOWN element closes the connection
 * ({@link AclHandlers}).
 */
final class DescribeAclsHandler implements RequestHandler
{
    private final DescribeAclsRequestDecoder request = new DescribeAclsRequestDecoder();
    private final DescribeAclsResponseEncoder response = new DescribeAclsResponseEncoder();

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        if (AclHandlers.hasUnknown(request.resourceTypeFilter(), request.patternTypeFilter(), request.operation(), request.permissionType()))
        {
            return CLOSE;
        }
        response.wrap(out, outOffset, version).throttleTimeMs(0).errorCode(Errors.SECURITY_DISABLED)
            .errorMessage(AclHandlers.DESCRIBE_MESSAGE).resources(0);
        return outOffset + response.finish();
    }
}
