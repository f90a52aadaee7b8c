package io.ferrite.broker.acl;

import io.ferrite.broker.topic.Topic;
import org.agrona.DirectBuffer;

/**
 * One connection's latest decisions on topics (and on its latest transactional id), so that a produce or fetch in steady
 * state asks the authorizer nothing and allocates nothing: a few (topic, operation) pairs and their answers, looked up by
 * the topic's identity (a topic changed or re-created is a new {@link Topic}, hence a miss). Made for one principal and one version of the ACLs; an
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

    /** The latest transactional id decided (its UTF-8 bytes; {@code idLength} -1: none), for a transactional produce. */
    private byte[] id = new byte[0];
    private int idLength = -1;
    private byte idOperation;
    private boolean idAllowed;

    /** Empties the entries when the ACLs changed or another principal asks. */
    private void refresh(final Authorizer authorizer, final String principal)
    {
        final long current = authorizer.acls().version();
        if (current != version || principal != this.principal)
        {
            java.util.Arrays.fill(topics, null);
            idLength = -1;
            version = current;
            this.principal = principal;
        }
    }

    /** Whether {@code principal} may do {@code operation} on {@code topic}: cached, else asked of {@code authorizer}. */
    boolean allowed(final Authorizer authorizer, final String principal, final String host, final byte operation, final Topic topic)
    {
        refresh(authorizer, principal);
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

    /**
     * Whether {@code principal} may do {@code operation} on the transactional id whose UTF-8 bytes are {@code length} bytes at
     * {@code offset} in {@code in}: the latest id's decision when the bytes are the same (compared in place: a transactional
     * producer's requests allocate nothing), else the id read and asked of {@code authorizer}.
     */
    boolean transactionalIdAllowed(final Authorizer authorizer, final String principal, final String host, final byte operation,
        final DirectBuffer in, final int offset, final int length)
    {
        refresh(authorizer, principal);
        if (length == idLength && operation == idOperation && sameId(in, offset, length))
        {
            return idAllowed;
        }
        final boolean decision = authorizer.authorize(principal, host, operation, AclCodes.TRANSACTIONAL_ID,
            in.getStringWithoutLengthUtf8(offset, length));
        if (id.length < length)
        {
            id = new byte[length];
        }
        in.getBytes(offset, id, 0, length);
        idLength = length;
        idOperation = operation;
        idAllowed = decision;
        return decision;
    }

    private boolean sameId(final DirectBuffer in, final int offset, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            if (in.getByte(offset + i) != id[i])
            {
                return false;
            }
        }
        return true;
    }
}
