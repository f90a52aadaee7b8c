package io.ferrite.broker.api;

import io.ferrite.broker.acl.AclRules;
import io.ferrite.broker.admin.AdminAgent;
import io.ferrite.wire.message.ApiKeys;

/**
 * DescribeAcls, CreateAcls and DeleteAcls ({@code kafka-acls.sh}, {@code Admin.describeAcls/createAcls/deleteAcls},
 * MirrorMaker 2's ACL sync), advertised with Kafka's ranges (v1-3).
 *
 * <p>With an authorizer ({@code authorizer.class.name}, {@link io.ferrite.broker.acl.Authorizer}) they are answered as a
 * Kafka 4.4 broker with StandardAuthorizer answers them: DescribeAcls needs DESCRIBE on the cluster, CreateAcls and
 * DeleteAcls ALTER on it (else CLUSTER_AUTHORIZATION_FAILED); a creation Kafka refuses is INVALID_REQUEST with its message
 * ({@link AclRules#refusal}); filters match as kafka-clients' {@code AclBindingFilter} (ANY, MATCH, null names). Changes run
 * on the admin agent, one request after another, and are answered once the ACLs' file holds them.
 *
 * <p>Without one they are answered as a Kafka 4.4 node with no {@code authorizer.class.name} (checked against one with
 * {@code /work/shared/kafka-ref}): SECURITY_DISABLED, which clients raise as {@code SecurityDisabledException}.
 *
 * <p>Either way, a request Kafka cannot parse closes the connection (kafka-clients' {@code DescribeAclsRequest},
 * {@code CreateAclsRequest}, {@code DeleteAclsRequest} throw while reading it; Kafka's network layer closes the
 * connection): a filter or creation with an UNKNOWN element (code 0, or one out of the enum), a creation with ANY (or a
 * MATCH pattern) where it needs a value. Only a raw client sends one: Admin's builders refuse them.
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

    /** Whether Kafka refuses these codes of a filter when it parses the request. */
    static boolean hasUnknown(final byte resourceType, final byte patternType, final byte operation, final byte permissionType)
    {
        return !AclRules.parsable(resourceType, patternType, operation, permissionType);
    }

    /** Registers the three APIs; {@code waker} wakes the network thread of {@code apis} when a change is answered. */
    public static void register(final Apis apis, final AdminAgent admin, final Runnable waker)
    {
        apis.registerLazily(ApiKeys.DESCRIBE_ACLS, DescribeAclsHandler::new)
            .registerLazily(ApiKeys.CREATE_ACLS, () -> new CreateAclsHandler(admin, waker))
            .registerLazily(ApiKeys.DELETE_ACLS, () -> new DeleteAclsHandler(admin, waker));
    }
}
