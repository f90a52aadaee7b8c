package io.ferrite.client;

import io.ferrite.wire.message.JoinGroupResponseDecoder;
import io.ferrite.wire.message.SyncGroupRequestEncoder;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The leader's part of a join ({@link GroupMembership}): the members' subscriptions read from JoinGroup's answer, the
 * range assignment computed once the metadata knows every topic subscribed ({@link RangeAssignor}), and written into
 * the leader's SyncGroup. A follower writes no assignment. Single-threaded; allocates (maps, ids) once per rebalance.
 */
final class LeaderAssignment
{
    private final RangeAssignor assignor;
    private final ClusterMetadata metadata;
    private final ExpandableDirectByteBuffer scratch;
    /** Member id to its subscribed topics; null for a follower. */
    private TreeMap<String, List<String>> subscriptions;
    private Map<String, Map<String, List<Integer>>> assignment;

    LeaderAssignment(final RangeAssignor assignor, final ClusterMetadata metadata, final ExpandableDirectByteBuffer scratch)
    {
        this.assignor = assignor;
        this.metadata = metadata;
        this.scratch = scratch;
    }

    /** This member follows: its SyncGroup carries no assignment. */
    void follow()
    {
        subscriptions = null;
        assignment = null;
    }

    /** This member leads: the members' subscriptions of JoinGroup's answer (and fresh partition counts asked for). */
    void lead(final JoinGroupResponseDecoder joinResponse, final DirectBuffer buffer)
    {
        subscriptions = new TreeMap<>();
        for (var m = joinResponse.members(); m.hasNext(); )
        {
            m.next();
            subscriptions.put(m.memberId(), assignor.readSubscription(buffer, m.metadataOffset(), m.metadataLength(),
                metadata));
        }
        metadata.requestUpdate(); // the partition counts as they are now, as the leader's assignor reads them
    }

    /** Computes the assignment once the metadata knows every topic subscribed: false until then. */
    boolean assignWhenKnown()
    {
        assignment = RangeAssignor.assign(subscriptions, metadata);
        return assignment != null;
    }

    /** The SyncGroup's assignments: the leader's, none for a follower. */
    void write(final SyncGroupRequestEncoder syncRequest)
    {
        final var a = syncRequest.assignments(subscriptions == null ? 0 : assignment.size());
        if (subscriptions != null)
        {
            for (final Map.Entry<String, Map<String, List<Integer>>> m : assignment.entrySet())
            {
                final int length = assignor.writeAssignment(scratch, 0, m.getValue());
                a.next().memberId(m.getKey()).assignment(scratch, 0, length);
            }
        }
    }
}
