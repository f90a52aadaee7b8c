package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.AwaitingWrites;
import io.ferrite.broker.coordinator.CoordinatorClock;

import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/** A classic group: its state machine's state, members and committed offsets. */
final class Group
{
    /** Kafka's classic group states, named as DescribeGroups and ListGroups report them. */
    enum State
    {
        EMPTY("Empty"), PREPARING_REBALANCE("PreparingRebalance"), COMPLETING_REBALANCE("CompletingRebalance"),
        STABLE("Stable"), DEAD("Dead");

        final String label;

        State(final String label)
        {
            this.label = label;
        }
    }

    /**
     * A committed offset; {@code recordOffset}: where its record is in {@code __consumer_offsets} (-1
     * before its write is answered), which decides between a transaction's offset and a later plain
     * commit when the transaction commits (Kafka's OffsetAndMetadata.recordOffset). A stray's, replayed
     * from a partition other than the group's, is below -1: its partition's order kept, below every
     * record of the group's own partition ({@link GroupReplay}).
     */
    record Offset(long offset, int leaderEpoch, String metadata, long commitTimestamp, long recordOffset)
    {
        Offset(final long offset, final int leaderEpoch, final String metadata, final long commitTimestamp)
        {
            this(offset, leaderEpoch, metadata, commitTimestamp, -1);
        }

        /** This offset with its record at {@code at}. */
        Offset at(final long at)
        {
            return new Offset(offset, leaderEpoch, metadata, commitTimestamp, at);
        }
    }

    /** Topic and partition, the key of committed offsets. */
    record TopicPartition(String topic, int partition)
    {
    }

    final String groupId;
    State state = State.EMPTY;
    String protocolType;
    String protocolName;
    int generationId;
    String leaderId;
    final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
    // deadlines below (and Member.sessionDeadline) are CoordinatorClock.nowMs times (monotonic); stateTimestamp is a wall time
    /** Member ids given out with MEMBER_ID_REQUIRED, not yet joined with them, and when they expire. */
    final Map<String, Long> pendingMembers = new HashMap<>();
    final Map<String, String> staticMembers = new HashMap<>();
    final Map<TopicPartition, Offset> offsets = new HashMap<>();
    /** When a rebalance must complete (members that did not rejoin by then are removed). */
    long rebalanceDeadline;
    /** group.initial.rebalance.delay.ms: while joining an empty group, wait until this for others. */
    long initialDelayUntil;
    long initialDelayLimit;
    /** When the group entered its state (wall time: written in its record; offset retention of an Empty group counts from it). */
    long stateTimestamp;
    /**
     * The generation whose leader's assignment is on its way to {@code __consumer_offsets} (the group
     * stays CompletingRebalance until answered), or -1. A generation, not a flag: a rebalance can come
     * while an older generation's write is on its way, and the next generation's sync must not wait for it.
     */
    int assignmentWriting = -1;
    /** When that write counts as timed out (Kafka's offsets.commit.timeout.ms for a write, {@link AwaitingWrites#TIMEOUT_MS}). */
    long assignmentDeadline;

    Group(final String groupId)
    {
        this.groupId = groupId;
    }

    /**
     * NONE when the static identity fits (or the member has none), FENCED_INSTANCE_ID when the
     * instance id belongs to another member id, UNKNOWN_MEMBER_ID for an unknown instance.
     */
    short checkStatic(final String memberId, final String groupInstanceId)
    {
        if (groupInstanceId == null)
        {
            return Errors.NONE;
        }
        final String registered = staticMembers.get(groupInstanceId);
        if (registered == null)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        return registered.equals(memberId) ? Errors.NONE : Errors.FENCED_INSTANCE_ID;
    }

    boolean is(final State s)
    {
        return state == s;
    }

    void transition(final State next, final long wallMs)
    {
        state = next;
        stateTimestamp = wallMs;
    }

    boolean hasAllMembersJoined()
    {
        for (final Member m : members.values())
        {
            if (m.awaitingJoin == null)
            {
                return false;
            }
        }
        return pendingMembers.isEmpty();
    }

    int maxRebalanceTimeoutMs()
    {
        int max = 0;
        for (final Member m : members.values())
        {
            max = Math.max(max, m.rebalanceTimeoutMs);
        }
        return max;
    }

    /** The protocol every member supports that most members prefer (Kafka's vote). */
    String selectProtocol()
    {
        final Set<String> candidates = new java.util.LinkedHashSet<>();
        boolean first = true;
        for (final Member m : members.values())
        {
            final Set<String> names = new java.util.LinkedHashSet<>();
            m.protocols.forEach(p -> names.add(p.name()));
            if (first)
            {
                candidates.addAll(names);
                first = false;
            }
            else
            {
                candidates.retainAll(names);
            }
        }
        final Map<String, Integer> votes = new LinkedHashMap<>();
        for (final Member m : members.values())
        {
            for (final Member.Protocol p : m.protocols)
            {
                if (candidates.contains(p.name()))
                {
                    votes.merge(p.name(), 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        int bestVotes = -1;
        for (final Map.Entry<String, Integer> e : votes.entrySet())
        {
            if (e.getValue() > bestVotes)
            {
                best = e.getKey();
                bestVotes = e.getValue();
            }
        }
        return best;
    }

    /** Whether a joining member's protocols fit this group (Kafka's INCONSISTENT_GROUP_PROTOCOL check). */
    boolean supportsProtocols(final String type, final java.util.List<Member.Protocol> protocols)
    {
        if (members.isEmpty())
        {
            return type != null && !type.isEmpty() && !protocols.isEmpty();
        }
        if (!type.equals(protocolType))
        {
            return false;
        }
        for (final Member.Protocol p : protocols)
        {
            boolean all = true;
            for (final Member m : members.values())
            {
                if (!m.supports(p.name()))
                {
                    all = false;
                    break;
                }
            }
            if (all)
            {
                return true;
            }
        }
        return false;
    }

    /** Topics the members subscribe to, when the protocol is the consumer's and readable; null when unknown. */
    Set<String> subscribedTopics()
    {
        if (!"consumer".equals(protocolType) || protocolName == null)
        {
            return null;
        }
        final Set<String> topics = new HashSet<>();
        for (final Member m : members.values())
        {
            final Set<String> t = ConsumerProtocol.topics(m.metadata(protocolName));
            if (t == null)
            {
                return null;
            }
            topics.addAll(t);
        }
        return topics;
    }
}
