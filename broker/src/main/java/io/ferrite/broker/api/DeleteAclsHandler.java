package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclBinding;
import io.ferrite.broker.acl.AclCodes;
import io.ferrite.broker.acl.AclRules;
import io.ferrite.broker.acl.Access;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.broker.admin.AdminAnswer;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.wire.message.ApiKeys;
import io.ferrite.wire.message.DeleteAclsRequestDecoder;
import io.ferrite.wire.message.DeleteAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * DeleteAcls ({@link AclHandlers}): one result per filter, in order. With an authorizer: CLUSTER_AUTHORIZATION_FAILED for
 * each without ALTER on the cluster; else the ACLs each filter matches are removed together on the admin agent
 * ({@link AclChange}) and listed under their filter once the ACLs' file no longer holds them. Without one,
 * SECURITY_DISABLED each with no matching ACLs. A filter with an UNKNOWN element closes the connection.
 */
final class DeleteAclsHandler implements RequestHandler
{
    private final AdminAgent admin;
    private final Runnable waker;
    private final DeleteAclsRequestDecoder request = new DeleteAclsRequestDecoder();
    private final DeleteAclsResponseEncoder response = new DeleteAclsResponseEncoder();

    DeleteAclsHandler(final AdminAgent admin, final Runnable waker)
    {
        this.admin = admin;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final List<AclRules.Filter> filters = new ArrayList<>();
        for (final DeleteAclsRequestDecoder.DeleteAclsFilter f = request.filters(); f.hasNext(); )
        {
            f.next();
            if (AclHandlers.hasUnknown(f.resourceTypeFilter(), f.patternTypeFilter(), f.operation(), f.permissionType()))
            {
                return CLOSE;
            }
            filters.add(new AclRules.Filter(f.resourceTypeFilter(), f.resourceNameFilterIsNull() ? null : f.resourceNameFilter(),
                f.patternTypeFilter(), f.principalFilterIsNull() ? null : f.principalFilter(), f.hostFilterIsNull() ? null : f.hostFilter(),
                f.operation(), f.permissionType()));
        }
        final boolean enabled = Access.enabled(connection);
        if (!enabled || !Access.cluster(connection, AclCodes.ALTER))
        {
            final DeleteAclsResponseEncoder.DeleteAclsFilterResult results = response.wrap(out, outOffset, version).throttleTimeMs(0)
                .filterResults(filters.size());
            for (int i = 0; i < filters.size(); i++)
            {
                results.next().errorCode(enabled ? Errors.CLUSTER_AUTHORIZATION_FAILED : Errors.SECURITY_DISABLED)
                    .errorMessage(enabled ? Access.clusterRefusal(connection, AclCodes.ALTER) : AclHandlers.ALTER_MESSAGE).matchingAcls(0);
            }
            return outOffset + response.finish();
        }
        final AclChange change = AclChange.delete(connection.listener().authorizer(), filters, waker);
        return AdminAnswer.submit(admin, change, (o, at, timedOut) ->
        {
            final DeleteAclsResponseEncoder.DeleteAclsFilterResult results = response.wrap(o, at, version).throttleTimeMs(0)
                .filterResults(filters.size());
            for (int i = 0; i < filters.size(); i++)
            {
                final short outcome = timedOut ? Errors.REQUEST_TIMED_OUT : change.outcome();
                final List<AclBinding> removed = outcome == Errors.NONE ? change.removed(i) : List.of();
                final DeleteAclsResponseEncoder.DeleteAclsMatchingAcl matching = results.next().errorCode(outcome).errorMessage(null)
                    .matchingAcls(removed.size());
                for (final AclBinding acl : removed)
                {
                    matching.next().errorCode(Errors.NONE).errorMessage(null).resourceType(acl.resourceType())
                        .resourceName(acl.resourceName()).patternType(acl.patternType()).principal(acl.principal()).host(acl.host())
                        .operation(acl.operation()).permissionType(acl.permission());
                }
            }
            return at + response.finish();
        }, connection);
    }
}
