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
import io.ferrite.wire.message.CreateAclsRequestDecoder;
import io.ferrite.wire.message.CreateAclsResponseEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.ArrayList;
import java.util.List;

/**
 * CreateAcls ({@link AclHandlers}): one result per creation, in order. With an authorizer: CLUSTER_AUTHORIZATION_FAILED
 * for each without ALTER on the cluster; INVALID_REQUEST with Kafka's message for a creation Kafka refuses; the others
 * added together on the admin agent ({@link AclChange}) and answered once the ACLs' file holds them (an ACL that exists
 * already is a success, as in Kafka). Without one, SECURITY_DISABLED each and nothing stored. A creation Kafka cannot parse
 * closes the connection.
 */
final class CreateAclsHandler implements RequestHandler
{
    private final AdminAgent admin;
    private final Runnable waker;
    private final CreateAclsRequestDecoder request = new CreateAclsRequestDecoder();
    private final CreateAclsResponseEncoder response = new CreateAclsResponseEncoder();

    CreateAclsHandler(final AdminAgent admin, final Runnable waker)
    {
        this.admin = admin;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        request.wrap(in, offset, limit, version);
        final List<AclBinding> creations = new ArrayList<>();
        for (final CreateAclsRequestDecoder.AclCreation c = request.creations(); c.hasNext(); )
        {
            c.next();
            if (!AclRules.creatable(c.resourceType(), c.resourcePatternType(), c.operation(), c.permissionType()))
            {
                return CLOSE;
            }
            creations.add(new AclBinding(c.resourceType(), c.resourceName(), c.resourcePatternType(), c.principal(), c.host(),
                c.operation(), c.permissionType()));
        }
        final boolean enabled = Access.enabled(connection);
        if (!enabled || !Access.cluster(connection, AclCodes.ALTER))
        {
            final CreateAclsResponseEncoder.AclCreationResult results = response.wrap(out, outOffset, version).throttleTimeMs(0)
                .results(creations.size());
            for (int i = 0; i < creations.size(); i++)
            {
                results.next().errorCode(enabled ? Errors.CLUSTER_AUTHORIZATION_FAILED : Errors.SECURITY_DISABLED)
                    .errorMessage(enabled ? Access.clusterRefusal(connection, AclCodes.ALTER) : AclHandlers.ALTER_MESSAGE);
            }
            return outOffset + response.finish();
        }
        final List<String> refusals = new ArrayList<>();
        final List<AclBinding> valid = new ArrayList<>();
        for (final AclBinding acl : creations)
        {
            final String refusal = AclRules.refusal(acl);
            refusals.add(refusal);
            if (refusal == null)
            {
                valid.add(acl);
            }
        }
        final AclChange change = AclChange.create(connection.listener().authorizer(), valid, waker);
        return AdminAnswer.submit(admin, change, (o, at, timedOut) ->
        {
            final CreateAclsResponseEncoder.AclCreationResult results = response.wrap(o, at, version).throttleTimeMs(0)
                .results(creations.size());
            final short outcome = timedOut ? Errors.REQUEST_TIMED_OUT : change.outcome();
            for (final String refusal : refusals)
            {
                if (refusal == null)
                {
                    results.next().errorCode(outcome).errorMessage(null);
                }
                else
                {
                    results.next().errorCode(Errors.INVALID_REQUEST).errorMessage(refusal);
                }
            }
            return at + response.finish();
        }, connection);
    }
}
