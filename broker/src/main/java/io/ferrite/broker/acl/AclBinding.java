package io.ferrite.broker.acl;

/**
 * One ACL as Kafka's {@code AclBinding}: a resource pattern (type, name, LITERAL or PREFIXED) and an entry (principal,
 * host, operation, ALLOW or DENY). Codes are {@link AclCodes}'. Equal bindings are one ACL: creating it twice keeps one.
 */
public record AclBinding(byte resourceType, String resourceName, byte patternType, String principal, String host,
    byte operation, byte permission)
{
    @Override
    public String toString()
    {
        return "(pattern=ResourcePattern(resourceType=" + AclCodes.name(AclCodes.RESOURCE_TYPES, resourceType) + ", name=" + resourceName
            + ", patternType=" + AclCodes.name(AclCodes.PATTERN_TYPES, patternType) + "), entry=(principal=" + principal + ", host=" + host
            + ", operation=" + AclCodes.name(AclCodes.OPERATIONS, operation) + ", permissionType=" + AclCodes.name(AclCodes.PERMISSIONS, permission) + "))";
    }
}
