package io.ferrite.broker.acl;

import io.ferrite.broker.Errors;
import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.Listener;
import io.ferrite.broker.topic.Topic;
import org.agrona.DirectBuffer;

/**
 * The one check every handler makes: whether the connection's principal may do an operation on a resource, with the
 * broker's {@link Authorizer} (the connection's listener carries it). Without an authorizer each check is a branch and
 * says yes. A topic check goes through the connection's {@link TopicDecisions}, so the produce and fetch paths allocate
 * nothing once a connection's topics were decided.
 */
public final class Access
{
    private Access()
    {
    }

    /** The connection's authorizer, or null: none configured (every request allowed). */
    private static Authorizer authorizer(final Connection connection)
    {
        final Listener listener = connection.listener();
        final Authorizer authorizer = listener == null ? null : listener.authorizer();
        return authorizer == null || !authorizer.enabled() ? null : authorizer;
    }

    /** Whether the broker has an authorizer: the ACL APIs answer SECURITY_DISABLED without one. */
    public static boolean enabled(final Connection connection)
    {
        return authorizer(connection) != null;
    }

    /** Whether {@code operation} ({@link AclCodes}) on {@code topic} is allowed: cached per connection. */
    public static boolean topic(final Connection connection, final byte operation, final Topic topic)
    {
        final Authorizer authorizer = authorizer(connection);
        if (authorizer == null)
        {
            return true;
        }
        return decisions(connection).allowed(authorizer, connection.principal(), connection.host(), operation, topic);
    }

    /**
     * Whether {@code operation} on the topic a request names is allowed: by {@code topic} when the lookup found one
     * (cached: no allocation), else by its name in {@code in} (a topic that does not exist: its name read, on that error
     * path only), else — named by an id that matches no topic — yes: the lookup's error answers (UNKNOWN_TOPIC_ID). A
     * request by id passes {@code nameLength} -1: its decoder's name is absent (offset -1, length 0), not to be read.
     */
    public static boolean topic(final Connection connection, final byte operation, final Topic topic, final DirectBuffer in,
        final int nameOffset, final int nameLength)
    {
        if (topic != null)
        {
            return topic(connection, operation, topic);
        }
        return nameLength < 0 || authorizer(connection) == null
            || topic(connection, operation, in.getStringWithoutLengthUtf8(nameOffset, nameLength));
    }

    /**
     * Whether {@code operation} on the transactional id whose UTF-8 bytes are {@code length} bytes at {@code offset} in
     * {@code in} is allowed: cached per connection (the latest id, compared in place), so a transactional producer's
     * requests allocate nothing once decided.
     */
    public static boolean transactionalId(final Connection connection, final byte operation, final DirectBuffer in, final int offset,
        final int length)
    {
        final Authorizer authorizer = authorizer(connection);
        return authorizer == null || decisions(connection).transactionalIdAllowed(authorizer, connection.principal(), connection.host(),
            operation, in, offset, length);
    }

    private static TopicDecisions decisions(final Connection connection)
    {
        Object decisions = connection.decisions();
        if (decisions == null)
        {
            decisions = new TopicDecisions();
            connection.decisions(decisions);
        }
        return (TopicDecisions)decisions;
    }

    /** Whether {@code operation} on the topic named {@code name} (one that may not exist) is allowed. */
    public static boolean topic(final Connection connection, final byte operation, final String name)
    {
        return allowed(connection, operation, AclCodes.TOPIC, name);
    }

    /** Whether {@code operation} on the cluster is allowed. */
    public static boolean cluster(final Connection connection, final byte operation)
    {
        return allowed(connection, operation, AclCodes.CLUSTER, AclCodes.CLUSTER_NAME);
    }

    /** Whether {@code operation} on the consumer group {@code group} is allowed. */
    public static boolean group(final Connection connection, final byte operation, final String group)
    {
        return allowed(connection, operation, AclCodes.GROUP, group);
    }

    /** Whether {@code operation} on the transactional id {@code id} is allowed. */
    public static boolean transactionalId(final Connection connection, final byte operation, final String id)
    {
        return allowed(connection, operation, AclCodes.TRANSACTIONAL_ID, id);
    }

    /**
     * Kafka's error for a config resource (its {@code ConfigResource.Type} code) the principal may not do {@code operation}
     * (DESCRIBE_CONFIGS, ALTER_CONFIGS) on, or NONE: a topic's is checked on the topic (TOPIC_AUTHORIZATION_FAILED), a
     * group's on the group (GROUP_AUTHORIZATION_FAILED), a broker's, a broker logger's or client metrics' on the cluster
     * (CLUSTER_AUTHORIZATION_FAILED).
     */
    public static short configResource(final Connection connection, final byte operation, final byte configType, final String name)
    {
        switch (configType)
        {
            case CONFIG_TOPIC:
                return topic(connection, operation, name) ? Errors.NONE : Errors.TOPIC_AUTHORIZATION_FAILED;
            case CONFIG_GROUP:
                return group(connection, operation, name) ? Errors.NONE : Errors.GROUP_AUTHORIZATION_FAILED;
            default:
                return cluster(connection, operation) ? Errors.NONE : Errors.CLUSTER_AUTHORIZATION_FAILED;
        }
    }

    /** Kafka's default message of an authorization error (its {@code Errors} enum's), where Kafka answers it. */
    public static String message(final short error)
    {
        switch (error)
        {
            case Errors.TOPIC_AUTHORIZATION_FAILED:
                return "Topic authorization failed.";
            case Errors.GROUP_AUTHORIZATION_FAILED:
                return "Group authorization failed.";
            case Errors.CLUSTER_AUTHORIZATION_FAILED:
                return "Cluster authorization failed.";
            case Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
                return "Transactional Id authorization failed.";
            default:
                return null;
        }
    }

    /** Kafka's {@code AclEntry.supportedOperations} of a topic, a group and the cluster: what authorized operations report. */
    private static final byte[] TOPIC_OPERATIONS = {AclCodes.READ, AclCodes.WRITE, AclCodes.CREATE, AclCodes.DESCRIBE, AclCodes.DELETE,
        AclCodes.ALTER, AclCodes.DESCRIBE_CONFIGS, AclCodes.ALTER_CONFIGS};
    private static final byte[] GROUP_OPERATIONS = {AclCodes.READ, AclCodes.DESCRIBE, AclCodes.DELETE, AclCodes.DESCRIBE_CONFIGS,
        AclCodes.ALTER_CONFIGS};
    private static final byte[] CLUSTER_OPERATIONS = {AclCodes.CREATE, AclCodes.CLUSTER_ACTION, AclCodes.DESCRIBE_CONFIGS,
        AclCodes.ALTER_CONFIGS, AclCodes.IDEMPOTENT_WRITE, AclCodes.ALTER, AclCodes.DESCRIBE};

    /**
     * Kafka's authorized operations of a topic, group or the cluster ({@link AclCodes#TOPIC}, {@link AclCodes#GROUP},
     * {@link AclCodes#CLUSTER}) for the connection's principal: bit {@code 1 << code} set for each operation the resource
     * type supports that is allowed (implications included: READ allows DESCRIBE); without an authorizer every supported
     * one, as Kafka's {@code AuthHelper.authorizedOperations}. Metadata, DescribeCluster and DescribeGroups report it when asked.
     */
    public static int authorizedOperations(final Connection connection, final byte resourceType, final String name)
    {
        final byte[] supported = resourceType == AclCodes.TOPIC ? TOPIC_OPERATIONS : resourceType == AclCodes.GROUP ? GROUP_OPERATIONS :
            CLUSTER_OPERATIONS;
        int bits = 0;
        for (final byte operation : supported)
        {
            if (allowed(connection, operation, resourceType, name))
            {
                bits |= 1 << operation;
            }
        }
        return bits;
    }

    /**
     * The cluster's authorized operations as Metadata v8-10 and DescribeCluster report them when asked: none (0) without
     * DESCRIBE on the cluster, as Kafka 4.4.
     */
    public static int clusterOperations(final Connection connection)
    {
        return cluster(connection, AclCodes.DESCRIBE) ? authorizedOperations(connection, AclCodes.CLUSTER, AclCodes.CLUSTER_NAME) : 0;
    }

    /**
     * Kafka 4.4's message of a CLUSTER_AUTHORIZATION_FAILED for want of {@code operation} on the cluster, where its answer
     * has a message (DescribeAcls, CreateAcls, DeleteAcls, ElectLeaders): {@code Request <the request> needs <OPERATION>
     * permission.}, the request as Kafka describes it (as Kafka describes it).
     */
    public static String clusterRefusal(final Connection connection, final byte operation)
    {
        return "Request " + requestText(connection) + " needs " + AclCodes.name(AclCodes.OPERATIONS, operation) + " permission.";
    }

    /**
     * How Kafka 4.4 describes a request in its authorization messages ({@code RequestChannel.Request}'s text): the network
     * thread as the processor, Kafka's connection id (the listener's address, the client's, a sequence number), an identity
     * for the session, the listener. Allocates: a refusal's message only.
     */
    private static String requestText(final Connection connection)
    {
        final Listener listener = connection.listener();
        final String remote = connection.remote().startsWith("/") ? connection.remote().substring(1) : connection.remote();
        final String local = listener.advertisedHost() == null ? "" : listener.advertisedHost() + ":" + listener.advertisedPort();
        return "Request(processor=" + (connection.id >>> 48) + ", connectionId=" + local + "-" + remote + "-"
            + (connection.id & 0xFFFF_FFFF_FFFFL) + ", session=org.apache.kafka.network.Session@"
            + Integer.toHexString(System.identityHashCode(connection))
            + ", listenerName=ListenerName(" + listener.name() + "), securityProtocol=" + listener.protocol()
            + ", buffer=null, envelope=Optional.empty)";
    }

    /** Kafka's {@code ConfigResource.Type} codes of a topic and a group. */
    private static final byte CONFIG_TOPIC = 2;
    private static final byte CONFIG_GROUP = 32;

    /** Whether {@code operation} on some resource of {@code resourceType} is allowed ({@link Authorizer#authorizeSome}). */
    public static boolean some(final Connection connection, final byte operation, final byte resourceType)
    {
        final Authorizer authorizer = authorizer(connection);
        return authorizer == null || authorizer.authorizeSome(connection.principal(), connection.host(), operation, resourceType);
    }

    /** Whether {@code operation} on the resource of {@code resourceType} named {@code name} is allowed. */
    public static boolean allowed(final Connection connection, final byte operation, final byte resourceType, final String name)
    {
        final Authorizer authorizer = authorizer(connection);
        return authorizer == null || authorizer.authorize(connection.principal(), connection.host(), operation, resourceType, name);
    }
}
