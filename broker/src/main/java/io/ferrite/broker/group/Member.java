package io.ferrite.broker.group;

import java.util.List;

/** A member of a classic group, as the coordinator keeps it. */
final class Member
{
    /** A protocol the member supports, with its metadata (the subscription for consumers). */
    record Protocol(String name, byte[] metadata)
    {
    }

    String memberId;
    final String groupInstanceId;
    String clientId;
    String clientHost;
    int rebalanceTimeoutMs;
    int sessionTimeoutMs;
    String protocolType;
    List<Protocol> protocols;
    byte[] assignment = new byte[0];
    /** Set while the member's JoinGroup waits for the rebalance to complete. */
    GroupCoordinator.JoinWaiter awaitingJoin;
    /** Set while the member's SyncGroup waits for the leader's assignment. */
    GroupCoordinator.SyncWaiter awaitingSync;
    long sessionDeadline;

    Member(final String memberId, final String groupInstanceId, final String clientId, final String clientHost,
        final int rebalanceTimeoutMs, final int sessionTimeoutMs, final String protocolType, final List<Protocol> protocols)
    {
        this.memberId = memberId;
        this.groupInstanceId = groupInstanceId;
        this.clientId = clientId;
        this.clientHost = clientHost;
        this.rebalanceTimeoutMs = rebalanceTimeoutMs;
        this.sessionTimeoutMs = sessionTimeoutMs;
        this.protocolType = protocolType;
        this.protocols = protocols;
    }

    byte[] metadata(final String protocol)
    {
        for (final Protocol p : protocols)
        {
            if (p.name().equals(protocol))
            {
                return p.metadata();
            }
        }
        return new byte[0];
    }

    boolean supports(final String protocol)
    {
        for (final Protocol p : protocols)
        {
            if (p.name().equals(protocol))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Whether a static member coming back asks for the same thing: for consumers the same
     * protocols and subscribed topics (the metadata also carries owned partitions and the last
     * generation, which a restarted consumer no longer knows); for other types the same bytes.
     */
    boolean sameSubscription(final String type, final List<Protocol> other)
    {
        if (!"consumer".equals(type))
        {
            return sameProtocols(other);
        }
        if (other.size() != protocols.size())
        {
            return false;
        }
        for (int i = 0; i < other.size(); i++)
        {
            final java.util.Set<String> mine = ConsumerProtocol.topics(protocols.get(i).metadata());
            if (!other.get(i).name().equals(protocols.get(i).name()) || mine == null ||
                !mine.equals(ConsumerProtocol.topics(other.get(i).metadata())))
            {
                return false;
            }
        }
        return true;
    }

    boolean sameProtocols(final List<Protocol> other)
    {
        if (other.size() != protocols.size())
        {
            return false;
        }
        for (int i = 0; i < other.size(); i++)
        {
            if (!other.get(i).name().equals(protocols.get(i).name()) ||
                !java.util.Arrays.equals(other.get(i).metadata(), protocols.get(i).metadata()))
            {
                return false;
            }
        }
        return true;
    }
}
