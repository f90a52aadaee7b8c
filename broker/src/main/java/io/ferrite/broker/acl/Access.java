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
        Object decisions = connection.decisions();
        if (decisions == null)
        {
            decisions = new TopicDecisions();
            connection.decisions(decisions);
        }
        return ((TopicDecisions)decisions).allowed(authorizer, connection.principal(), connection.host(), operation, topic);
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
