package io.ferrite.broker.acl;

/**
 * What Kafka 4.4 accepts in CreateAcls, DescribeAcls and DeleteAcls, and how a filter matches an ACL (kafka-clients'
 * {@code AclBindingFilter.matches}). A request Kafka cannot parse — a code it reads as UNKNOWN anywhere, ANY or MATCH
 * where a creation needs a value — closes the connection ({@link #parsable}, {@link #creatable}); a parsed creation
 * Kafka refuses gets INVALID_REQUEST with Kafka's message ({@link #refusal}).
 */
public final class AclRules
{
    private AclRules()
    {
    }

    /** Whether Kafka parses a filter of these codes (none UNKNOWN or out of its enum). */
    public static boolean parsable(final byte resourceType, final byte patternType, final byte operation, final byte permission)
    {
        return AclCodes.known(AclCodes.RESOURCE_TYPES, resourceType) && AclCodes.known(AclCodes.PATTERN_TYPES, patternType)
            && AclCodes.known(AclCodes.OPERATIONS, operation) && AclCodes.known(AclCodes.PERMISSIONS, permission);
    }

    /**
     * Whether Kafka parses a creation of these codes: a filter's codes, and none of them ANY (nor MATCH) —
     * {@code ResourcePattern} and {@code AccessControlEntry} refuse those when the request is read.
     */
    public static boolean creatable(final byte resourceType, final byte patternType, final byte operation, final byte permission)
    {
        return parsable(resourceType, patternType, operation, permission) && resourceType != AclCodes.ANY
            && (patternType == AclCodes.LITERAL || patternType == AclCodes.PREFIXED) && operation != AclCodes.ANY
            && permission != AclCodes.ANY;
    }

    /** Kafka's INVALID_REQUEST message for a parsed creation it refuses, or null: it is accepted. */
    public static String refusal(final AclBinding acl)
    {
        if (acl.resourceType() == AclCodes.CLUSTER && !AclCodes.CLUSTER_NAME.equals(acl.resourceName()))
        {
            return "The only valid name for the CLUSTER resource is " + AclCodes.CLUSTER_NAME;
        }
        if (acl.resourceName().isEmpty())
        {
            return "Invalid empty resource name";
        }
        if (acl.principal().indexOf(':') < 0)
        {
            return "Could not parse principal from `" + acl.principal()
                + "` (no colon is present separating the principal type from the principal name)";
        }
        if (acl.host().isEmpty())
        {
            return "Host pattern cannot be null or empty";
        }
        return null;
    }

    /** A DescribeAcls or DeleteAcls filter: null strings match any value. */
    public record Filter(byte resourceType, String resourceName, byte patternType, String principal, String host, byte operation,
        byte permission)
    {
        /** Whether this filter matches {@code acl}, as kafka-clients' {@code AclBindingFilter.matches}. */
        public boolean matches(final AclBinding acl)
        {
            return patternMatches(acl) && (principal == null || principal.equals(acl.principal()))
                && (host == null || host.equals(acl.host())) && (operation == AclCodes.ANY || operation == acl.operation())
                && (permission == AclCodes.ANY || permission == acl.permission());
        }

        private boolean patternMatches(final AclBinding acl)
        {
            if (resourceType != AclCodes.ANY && resourceType != acl.resourceType())
            {
                return false;
            }
            if (patternType != AclCodes.ANY && patternType != AclCodes.MATCH && patternType != acl.patternType())
            {
                return false;
            }
            if (resourceName == null)
            {
                return true;
            }
            if (patternType == AclCodes.ANY || patternType == acl.patternType())
            {
                return resourceName.equals(acl.resourceName());
            }
            // MATCH: the ACLs that would apply to a resource of this name
            return acl.patternType() == AclCodes.LITERAL ? resourceName.equals(acl.resourceName()) || AclCodes.WILDCARD.equals(acl.resourceName())
                : resourceName.startsWith(acl.resourceName());
        }
    }
}
