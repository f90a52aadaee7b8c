package io.ferrite.broker.acl;

import io.ferrite.broker.topic.Topic;

/**
 * One connection's latest decisions on topics, so that a produce or fetch in steady state asks the authorizer nothing
 * and allocates nothing: a few (topic, operation) pairs and their answers, looked up by the topic's identity (a topic
 * changed or re-created is a new {@link Topic}, hence a miss). Made for one principal and one version of the ACLs; an
 * ACL change (a new {@link AclIndex#version}) or another principal (a SASL connection authenticating after its first
 * request) empties it. Network thread only.
 *
 * <p>{@value #SIZE} entries: a producer or consumer touches a handful of topics at a time; a client cycling through
 * more keeps missing, which costs one index lookup (map gets, no allocation) per topic and request — not a hot-path
 * allocation, only the cache's benefit lost.
 */
final class TopicDecisions
{
    static final int SIZE = 16;

    private final Topic[] topics = new Topic[SIZE];
    private final byte[] operations = new byte[SIZE];
    private final boolean[] allowed = new boolean[SIZE];
    private int next;
    private long version = -1;
    private String principal;

    /** Whether {@code principal} may do {@code operation} on {@code topic}: cached, else asked of {@code authorizer}. */
    boolean allowed(final Authorizer authorizer, final String principal, final String host, final byte operation, final Topic topic)
    {
        final long current = authorizer.acls().version();
        if (current != version || principal != this.principal)
        {
            java.util.Arrays.fill(topics, null);
            version = current;
            this.principal = principal;
        }
        for (int i = 0; i < SIZE; i++)
        {
            if (topics[i] == topic && operations[i] == operation)
            {
                return allowed[i];
            }
        }
        // the decision is made against the version read above or a newer one: never staler than the version it is stored under
        final boolean decision = authorizer.authorize(principal, host, operation, AclCodes.TOPIC, topic.name);
        topics[next] = topic;
        operations[next] = operation;
        allowed[next] = decision;
        next = (next + 1) % SIZE;
        return decision;
    }
}
