package io.ferrite.broker.api;

import io.ferrite.wire.message.ApiKeys;

/**
 * DescribeAcls, CreateAcls and DeleteAcls ({@code kafka-acls.sh}, {@code Admin.describeAcls/createAcls/deleteAcls},
 * MirrorMaker 2's ACL sync): Ferrite has no authorizer, so it answers them as a Kafka 4.4 node with no
 * {@code authorizer.class.name} does (checked against one with {@code /work/shared/kafka-ref}): SECURITY_DISABLED,
 * which clients raise as {@code SecurityDisabledException}. Advertised with Kafka's ranges (v1-3) so a client gets
 * that answer rather than a closed connection.
 */
public final class AclHandlers
{
    /** Kafka's message for a DescribeAcls without an authorizer. */
    static final String DESCRIBE_MESSAGE = "No Authorizer is configured on the broker";
    /** Kafka's message for each creation of a CreateAcls and each filter of a DeleteAcls without an authorizer. */
    static final String ALTER_MESSAGE = "No Authorizer is configured.";

    private AclHandlers()
    {
    }

    public static void register(final Apis apis)
    {
        apis.registerLazily(ApiKeys.DESCRIBE_ACLS, DescribeAclsHandler::new)
            .registerLazily(ApiKeys.CREATE_ACLS, CreateAclsHandler::new)
            .registerLazily(ApiKeys.DELETE_ACLS, DeleteAclsHandler::new);
    }
}
