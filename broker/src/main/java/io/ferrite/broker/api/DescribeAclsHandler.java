package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclBinding;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.AclRules;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DescribeAclsRequestDecoder;
import io.ferrite.wire.message.DescribeAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * DescribeAcls ({@link AclHandlers}): with an authorizer, the ACLs the filter matches, grouped by resource pattern as
 * Kafka's {@code DescribeAclsResponse.aclsResources}; CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster.
 * Without one, SECURITY_DISABLED and no resources. A filter with an UNKNOWN element closes the connection.
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
        response.wrap(out, outOffset, version).throttleTimeMs(0);
        if (!Access.enabled(connection))
        {
            response.errorCode(Errors.SECURITY_DISABLED).errorMessage(AclHandlers.DESCRIBE_MESSAGE).resources(0);
            return outOffset + response.finish();
        }
        if (!Access.cluster(connection, AclCodes.DESCRIBE))
        {
            response.errorCode(Errors.CLUSTER_AUTHORIZATION_FAILED).errorMessage(Access.clusterRefusal(connection, AclCodes.DESCRIBE))
                .resources(0);
            return outOffset + response.finish();
        }
        final AclRules.Filter filter = new AclRules.Filter(request.resourceTypeFilter(),
            request.resourceNameFilterIsNull() ? null : request.resourceNameFilter(), request.patternTypeFilter(),
            request.principalFilterIsNull() ? null : request.principalFilter(), request.hostFilterIsNull() ? null : request.hostFilter(),
            request.operation(), request.permissionType());
        final Map<AclBinding, List<AclBinding>> byPattern = new LinkedHashMap<>();
        for (final AclBinding acl : connection.listener().authorizer().acls().all())
        {
            if (filter.matches(acl))
            {
                // keyed by the pattern alone: the entry's fields blanked
                byPattern.computeIfAbsent(new AclBinding(acl.resourceType(), acl.resourceName(), acl.patternType(), "", "", (byte)0, (byte)0),
                    k -> new ArrayList<>()).add(acl);
            }
        }
        final DescribeAclsResponseEncoder.DescribeAclsResource resources = response.errorCode(Errors.NONE).errorMessage(null)
            .resources(byPattern.size());
        for (final Map.Entry<AclBinding, List<AclBinding>> e : byPattern.entrySet())
        {
            final AclBinding pattern = e.getKey();
            final DescribeAclsResponseEncoder.AclDescription acls = resources.next().resourceType(pattern.resourceType())
                .resourceName(pattern.resourceName()).patternType(pattern.patternType()).acls(e.getValue().size());
            for (final AclBinding acl : e.getValue())
            {
                acls.next().principal(acl.principal()).host(acl.host()).operation(acl.operation()).permissionType(acl.permission());
            }
        }
        return outOffset + response.finish();
    }
}
