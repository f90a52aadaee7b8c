package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.acl.AclBinding;
import io.ferrite.broker.acl.AclRules;
import io.ferrite.broker.acl.Authorizer;
import io.ferrite.broker.admin.AdminCommand;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * A CreateAcls' additions or a DeleteAcls' removals on the admin agent, the authorizer's single writer: the filters
 * matched against the ACLs as they are when it runs, the whole change written in one file replacement
 * ({@link Authorizer#change}), and its outcome published to the network thread by the command's completion.
 */
final class AclChange extends AdminCommand
{
    private static final Logger LOG = LoggerFactory.getLogger(AclChange.class);

    private final Authorizer authorizer;
    private final List<AclBinding> additions;
    private final List<AclRules.Filter> filters;
    /** NONE, or UNKNOWN_SERVER_ERROR when the file could not be written (or made durable). */
    private short outcome = Errors.NONE;
    /** Per filter, the ACLs it removed (an ACL matched by two filters of a request is listed under the first only). */
    private final List<List<AclBinding>> removed = new ArrayList<>();

    private AclChange(final Authorizer authorizer, final List<AclBinding> additions, final List<AclRules.Filter> filters, final Runnable waker)
    {
        super(Long.MAX_VALUE, waker); // no timeout field: Kafka's Admin gives up after its request.timeout.ms
        this.authorizer = authorizer;
        this.additions = additions;
        this.filters = filters;
    }

    static AclChange create(final Authorizer authorizer, final List<AclBinding> additions, final Runnable waker)
    {
        return new AclChange(authorizer, additions, List.of(), waker);
    }

    static AclChange delete(final Authorizer authorizer, final List<AclRules.Filter> filters, final Runnable waker)
    {
        return new AclChange(authorizer, List.of(), filters, waker);
    }

    short outcome()
    {
        return outcome;
    }

    /** The ACLs filter {@code i} removed. */
    List<AclBinding> removed(final int i)
    {
        return removed.get(i);
    }

    @Override
    protected void run()
    {
        final Set<AclBinding> gone = new LinkedHashSet<>();
        for (final AclRules.Filter filter : filters)
        {
            final List<AclBinding> matched = new ArrayList<>();
            for (final AclBinding acl : authorizer.acls().all())
            {
                if (filter.matches(acl) && gone.add(acl))
                {
                    matched.add(acl);
                }
            }
            removed.add(matched);
        }
        if (additions.isEmpty() && gone.isEmpty())
        {
            return;
        }
        try
        {
            authorizer.change(additions, gone);
        }
        catch (final IOException ex)
        {
            // NotDurable: in effect, maybe not durable; otherwise nothing changed. Either way no durable success is claimed
            LOG.error("{}: {}", filters.isEmpty() ? "CreateAcls" : "DeleteAcls", ex.toString());
            outcome = Errors.UNKNOWN_SERVER_ERROR;
        }
    }

    @Override
    protected void failed(final Throwable cause)
    {
        LOG.error("{} failed", filters.isEmpty() ? "CreateAcls" : "DeleteAcls", cause);
        outcome = Errors.UNKNOWN_SERVER_ERROR;
        removed.clear();
        filters.forEach(f -> removed.add(List.of()));
    }
}
