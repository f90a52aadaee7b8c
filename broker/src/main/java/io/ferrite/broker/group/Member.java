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
    final String clientId;
    final String clientHost;
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
    /** Joined in the current rebalance and not yet answered: Kafka expires such members sooner if they vanish. */
    boolean isNew;

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
