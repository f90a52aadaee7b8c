package io.ferrite.broker.api;

import io.ferrite.wire.message.ApiKeys;

/**
 * DescribeAcls, CreateAcls and DeleteAcls ({@code kafka-acls.sh}, {@code Admin.describeAcls/createAcls/deleteAcls},
 * MirrorMaker 2's ACL sync): Ferrite has no authorizer, so it answers them as a Kafka 4.4 node with no
 * {@code authorizer.class.name} does (checked against one with {@code /work/shared/kafka-ref}): SECURITY_DISABLED,
 * which clients raise as {@code SecurityDisabledException}. Advertised with Kafka's ranges (v1-3) so a client gets
 * that answer rather than a closed connection. A request whose filter or creation has an UNKNOWN element (resource type,
 * pattern type, operation or permission type code 0) closes the connection, as Kafka's parse refuses it
 * (kafka-clients' {@code DescribeAclsRequest.normalizeAndValidate}, {@code CreateAclsRequest.validate},
 * {@code DeleteAclsRequest.normalizeAndValidate} throw; Kafka's network layer closes the connection on a request it
 * cannot parse). Only a raw client sends one: Admin's builders refuse them.
 */
public final class AclHandlers
{
    /** Kafka's message for a DescribeAcls without an authorizer. */
    static final String DESCRIBE_MESSAGE = "No Authorizer is configured on the broker";
    /** Kafka's message for each creation of a CreateAcls and each filter of a DeleteAcls without an authorizer. */
    static final String ALTER_MESSAGE = "No Authorizer is configured.";

    /** The code of UNKNOWN in each of Kafka's ACL enums (ResourceType, PatternType, AclOperation, AclPermissionType). */
    private static final byte UNKNOWN = 0;

    private AclHandlers()
    {
    }

    /** Whether Kafka refuses these codes of a filter or creation when it parses the request: any of them UNKNOWN. */
    static boolean hasUnknown(final byte resourceType, final byte patternType, final byte operation, final byte permissionType)
    {
        return resourceType == UNKNOWN || patternType == UNKNOWN || operation == UNKNOWN || permissionType == UNKNOWN;
    }

    public static void register(final Apis apis)
    {
        apis.registerLazily(ApiKeys.DESCRIBE_ACLS, DescribeAclsHandler::new)
            .registerLazily(ApiKeys.CREATE_ACLS, CreateAclsHandler::new)
            .registerLazily(ApiKeys.DELETE_ACLS, DeleteAclsHandler::new);
    }
}
