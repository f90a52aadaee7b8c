package io.ferrite.broker.acl;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Every ACL of the broker, immutable, indexed for {@link #authorize}: per resource type, the LITERAL ACLs by resource
 * name (the wildcard {@code *} one of them) and the PREFIXED ones in a list. A change makes a new index
 * ({@link Authorizer} swaps it), so readers on any thread take no lock. Each index has a version one above the one it
 * replaced: a cache of decisions ({@link TopicDecisions}) made from an older version is stale.
 *
 * <p>The rules are Kafka 4.4's {@code StandardAuthorizer}'s: an ACL applies when its pattern matches the resource
 * (LITERAL: the name, or {@code *}; PREFIXED: a prefix of the name), its principal is the caller's or {@code User:*},
 * its host is the caller's address or {@code *}, and its operation is the one asked, ALL, or — for an ALLOW only — one
 * implying it (READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS). A DENY that
 * applies wins over any ALLOW. With none applying the answer is DENIED when the resource has any ACL at all (for
 * anyone), else {@code allow.everyone.if.no.acl.found}'s.
 */
public final class AclIndex
{
    /** The decisions {@link #authorize} returns. */
    public static final byte DENIED = 0;
    public static final byte ALLOWED = 1;
    /** No ACL on the resource: the caller applies {@code allow.everyone.if.no.acl.found}. */
    public static final byte NO_ACLS = 2;

    private static final AclBinding[] NONE = new AclBinding[0];

    static final AclIndex EMPTY = new AclIndex(Set.of(), 0);

    private final Set<AclBinding> all;
    private final long version;
    @SuppressWarnings("unchecked")
    private final Map<String, AclBinding[]>[] literal = new Map[AclCodes.MAX_RESOURCE_TYPE + 1];
    private final AclBinding[][] prefixed = new AclBinding[AclCodes.MAX_RESOURCE_TYPE + 1][];

    AclIndex(final Collection<AclBinding> acls, final long version)
    {
        this.all = Collections.unmodifiableSet(new LinkedHashSet<>(acls));
        this.version = version;
        final List<Map<String, List<AclBinding>>> literalLists = new ArrayList<>();
        final List<List<AclBinding>> prefixedLists = new ArrayList<>();
        for (int t = 0; t <= AclCodes.MAX_RESOURCE_TYPE; t++)
        {
            literalLists.add(new HashMap<>());
            prefixedLists.add(new ArrayList<>());
        }
        for (final AclBinding acl : all)
        {
            if (acl.patternType() == AclCodes.PREFIXED)
            {
                prefixedLists.get(acl.resourceType()).add(acl);
            }
            else
            {
                literalLists.get(acl.resourceType()).computeIfAbsent(acl.resourceName(), n -> new ArrayList<>()).add(acl);
            }
        }
        for (int t = 0; t <= AclCodes.MAX_RESOURCE_TYPE; t++)
        {
            final Map<String, AclBinding[]> byName = new HashMap<>();
            literalLists.get(t).forEach((name, list) -> byName.put(name, list.toArray(NONE)));
            literal[t] = byName;
            prefixed[t] = prefixedLists.get(t).toArray(NONE);
        }
    }

    /** Every ACL, in the order they were made. */
    public Set<AclBinding> all()
    {
        return all;
    }

    public long version()
    {
        return version;
    }

    /** A new index: this one's ACLs and {@code added} less {@code removed}, one version up. */
    AclIndex with(final Collection<AclBinding> added, final Collection<AclBinding> removed)
    {
        final Set<AclBinding> next = new LinkedHashSet<>(all);
        next.removeAll(removed);
        next.addAll(added);
        return new AclIndex(next, version + 1);
    }

    /**
     * Whether {@code principal} at {@code host} may do {@code operation} on the resource: {@link #ALLOWED},
     * {@link #DENIED}, or {@link #NO_ACLS} when no ACL names it. Allocates nothing.
     */
    public byte authorize(final String principal, final String host, final byte operation, final byte resourceType, final String name)
    {
        final Map<String, AclBinding[]> byName = literal[resourceType];
        int state = scan(byName.get(name), principal, host, operation, FOUND_NONE);
        if (state != DENY_APPLIES && !AclCodes.WILDCARD.equals(name))
        {
            state = scan(byName.get(AclCodes.WILDCARD), principal, host, operation, state);
        }
        final AclBinding[] prefixes = prefixed[resourceType];
        for (int i = 0; i < prefixes.length && state != DENY_APPLIES; i++)
        {
            if (name.startsWith(prefixes[i].resourceName()))
            {
                final int one = applies(prefixes[i], principal, host, operation);
                state = one == DENY_APPLIES ? DENY_APPLIES : Math.max(state, one);
            }
        }
        return state == ALLOW_APPLIES ? ALLOWED : state == FOUND_NONE ? NO_ACLS : DENIED;
    }

    // what one ACL says of a request, ordered so that the strongest of several is their maximum, a DENY aside
    private static final int DENY_APPLIES = -1;
    private static final int FOUND_NONE = 0;
    private static final int FOUND = 1;
    private static final int ALLOW_APPLIES = 2;

    private static int scan(final AclBinding[] acls, final String principal, final String host, final byte operation, final int state)
    {
        if (acls == null)
        {
            return state;
        }
        int result = state;
        for (final AclBinding acl : acls)
        {
            final int one = applies(acl, principal, host, operation);
            if (one == DENY_APPLIES)
            {
                return DENY_APPLIES;
            }
            result = Math.max(result, one);
        }
        return result;
    }

    private static int applies(final AclBinding acl, final String principal, final String host, final byte operation)
    {
        if (!(acl.principal().equals(principal) || acl.principal().equals(AclCodes.WILDCARD_PRINCIPAL))
            || !(acl.host().equals(AclCodes.WILDCARD) || acl.host().equals(host)))
        {
            return FOUND;
        }
        if (acl.permission() == AclCodes.DENY)
        {
            return acl.operation() == AclCodes.ALL || acl.operation() == operation ? DENY_APPLIES : FOUND;
        }
        return implies(acl.operation(), operation) ? ALLOW_APPLIES : FOUND;
    }

    /**
     * Whether some ALLOW lets {@code principal} at {@code host} do {@code operation} (itself or ALL, no implication) on some
     * resource of {@code resourceType} that no DENY of theirs takes back — Kafka's {@code Authorizer.authorizeByResourceType}
     * after its check of a made-up name: a DENY on the LITERAL {@code *} denies all; an ALLOW on it allows all; else an
     * ALLOW on a LITERAL name not denied by name, or on a prefix, counts unless a DENY'd prefix is a prefix of it.
     */
    public boolean allowsSome(final String principal, final String host, final byte operation, final byte resourceType)
    {
        final Set<String> deniedLiterals = new HashSet<>();
        final Set<String> deniedPrefixes = new HashSet<>();
        final List<AclBinding> allows = new ArrayList<>();
        boolean wildcardAllow = false;
        for (final AclBinding acl : all)
        {
            if (acl.resourceType() != resourceType || !(acl.host().equals(host) || acl.host().equals(AclCodes.WILDCARD))
                || !(acl.principal().equals(principal) || acl.principal().equals(AclCodes.WILDCARD_PRINCIPAL))
                || !(acl.operation() == operation || acl.operation() == AclCodes.ALL))
            {
                continue;
            }
            final boolean literal = acl.patternType() == AclCodes.LITERAL;
            if (acl.permission() == AclCodes.DENY)
            {
                if (literal && AclCodes.WILDCARD.equals(acl.resourceName()))
                {
                    return false;
                }
                (literal ? deniedLiterals : deniedPrefixes).add(acl.resourceName());
            }
            else if (literal && AclCodes.WILDCARD.equals(acl.resourceName()))
            {
                wildcardAllow = true;
            }
            else
            {
                allows.add(acl);
            }
        }
        if (wildcardAllow)
        {
            return true;
        }
        for (final AclBinding allow : allows)
        {
            final String name = allow.resourceName();
            if (allow.patternType() == AclCodes.LITERAL && deniedLiterals.contains(name))
            {
                continue;
            }
            boolean dominated = false;
            for (int end = 1; end <= name.length() && !dominated; end++)
            {
                dominated = deniedPrefixes.contains(name.substring(0, end));
            }
            if (!dominated)
            {
                return true;
            }
        }
        return false;
    }

    /** Whether an ALLOW of {@code granted} allows {@code asked} (StandardAuthorizer's implications). */
    static boolean implies(final byte granted, final byte asked)
    {
        if (granted == asked || granted == AclCodes.ALL)
        {
            return true;
        }
        if (asked == AclCodes.DESCRIBE)
        {
            return granted == AclCodes.READ || granted == AclCodes.WRITE || granted == AclCodes.DELETE || granted == AclCodes.ALTER;
        }
        return asked == AclCodes.DESCRIBE_CONFIGS && granted == AclCodes.ALTER_CONFIGS;
    }
}
