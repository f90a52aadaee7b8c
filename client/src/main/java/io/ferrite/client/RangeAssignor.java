package io.ferrite.client;

import io.ferrite.wire.message.ConsumerProtocolAssignmentDecoder;
import io.ferrite.wire.message.ConsumerProtocolAssignmentEncoder;
import io.ferrite.wire.message.ConsumerProtocolSubscriptionDecoder;
import io.ferrite.wire.message.ConsumerProtocolSubscriptionEncoder;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToIntFunction;

/**
 * The classic group protocol's "consumer" metadata and kafka-clients' "range" assignor, so this consumer and a
 * kafka-clients consumer with {@code partition.assignment.strategy=RangeAssignor} share one group (either may lead).
 * The bytes are kafka-clients' {@code ConsumerProtocol}: a big-endian int16 version, then the
 * {@code ConsumerProtocolSubscription} (JoinGroup's member metadata) or {@code ConsumerProtocolAssignment} (SyncGroup's
 * assignment) of that version; a newer version than this side knows is read as the newest it knows (the protocol only
 * adds fields). The range assignment, per topic: the members subscribed to it sorted by member id, its partitions in
 * order, member i of c gets n / c partitions, and one more if i < n % c (no racks, no static members: kafka-clients'
 * {@code RangeAssignor} gives the same). Only the leader assigns, once per rebalance: this allocates (maps, lists,
 * strings), as a rebalance is no steady state.
 */
final class RangeAssignor
{
    static final String NAME = "range";
    /** kafka-clients 4.4 writes version 3 of both (rack id in the subscription). */
    private static final short SUBSCRIPTION_VERSION = 3;
    private static final short ASSIGNMENT_VERSION = 3;

    private final ConsumerProtocolSubscriptionEncoder subscriptionEncoder = new ConsumerProtocolSubscriptionEncoder();
    private final ConsumerProtocolSubscriptionDecoder subscriptionDecoder = new ConsumerProtocolSubscriptionDecoder();
    private final ConsumerProtocolAssignmentEncoder assignmentEncoder = new ConsumerProtocolAssignmentEncoder();
    private final ConsumerProtocolAssignmentDecoder assignmentDecoder = new ConsumerProtocolAssignmentDecoder();

    /** Writes this member's subscription at {@code offset}: eager protocol, so it owns no partitions when it joins. */
    int writeSubscription(final MutableDirectBuffer buffer, final int offset, final List<String> topics, final int generation)
    {
        buffer.putShort(offset, SUBSCRIPTION_VERSION, ByteOrder.BIG_ENDIAN);
        subscriptionEncoder.wrap(buffer, offset + 2, SUBSCRIPTION_VERSION);
        final var t = subscriptionEncoder.topics(topics.size());
        for (int i = 0; i < topics.size(); i++)
        {
            t.addString(topics.get(i));
        }
        subscriptionEncoder.userDataNull().ownedPartitions(0);
        subscriptionEncoder.generationId(generation);
        return 2 + subscriptionEncoder.finish();
    }

    /** The topics of a member's subscription (JoinGroup's answer to the leader), each made known to the metadata. */
    List<String> readSubscription(final DirectBuffer buffer, final int offset, final int length,
        final ClusterMetadata metadata)
    {
        final short version = (short)Math.min(buffer.getShort(offset, ByteOrder.BIG_ENDIAN),
            ConsumerProtocolSubscriptionDecoder.HIGHEST_VERSION);
        subscriptionDecoder.wrap(buffer, offset + 2, offset + length, version);
        final ArrayList<String> topics = new ArrayList<>();
        for (var t = subscriptionDecoder.topics(); t.hasNext(); )
        {
            topics.add(t.next().value());
            metadata.topic(topics.get(topics.size() - 1));
        }
        return topics;
    }

    /** The range assignment once the metadata knows every topic subscribed (null until then). */
    static Map<String, Map<String, List<Integer>>> assign(final Map<String, List<String>> subscriptions,
        final ClusterMetadata metadata)
    {
        for (final List<String> theirs : subscriptions.values())
        {
            for (int i = 0; i < theirs.size(); i++)
            {
                if (metadata.topic(theirs.get(i)).status == TopicState.Status.PENDING)
                {
                    return null;
                }
            }
        }
        return assign(subscriptions, name ->
        {
            final TopicState t = metadata.topic(name);
            return t.status == TopicState.Status.KNOWN ? t.partitions.length : -1;
        });
    }

    /**
     * The range assignment: member id to (topic to partitions). {@code partitionsOf} gives a topic's partition count,
     * or a negative number for a topic the cluster does not have (no member gets it, as kafka-clients).
     */
    static Map<String, Map<String, List<Integer>>> assign(final Map<String, List<String>> subscriptions,
        final ToIntFunction<String> partitionsOf)
    {
        final TreeMap<String, Map<String, List<Integer>>> result = new TreeMap<>();
        final TreeMap<String, List<String>> membersOfTopic = new TreeMap<>();
        for (final Map.Entry<String, List<String>> e : subscriptions.entrySet())
        {
            result.put(e.getKey(), new TreeMap<>());
            for (final String topic : e.getValue())
            {
                membersOfTopic.computeIfAbsent(topic, k -> new ArrayList<>()).add(e.getKey());
            }
        }
        for (final Map.Entry<String, List<String>> e : membersOfTopic.entrySet())
        {
            final int partitions = partitionsOf.applyAsInt(e.getKey());
            final List<String> members = e.getValue();
            members.sort(null);
            if (partitions <= 0)
            {
                continue;
            }
            final int each = partitions / members.size();
            final int extra = partitions % members.size();
            for (int i = 0; i < members.size(); i++)
            {
                final int start = each * i + Math.min(i, extra);
                final int count = each + (i < extra ? 1 : 0);
                if (count > 0)
                {
                    final ArrayList<Integer> mine = new ArrayList<>(count);
                    for (int p = start; p < start + count; p++)
                    {
                        mine.add(p);
                    }
                    result.get(members.get(i)).put(e.getKey(), mine);
                }
            }
        }
        return result;
    }

    /** Writes one member's assignment at {@code offset}. */
    int writeAssignment(final MutableDirectBuffer buffer, final int offset, final Map<String, List<Integer>> partitions)
    {
        buffer.putShort(offset, ASSIGNMENT_VERSION, ByteOrder.BIG_ENDIAN);
        assignmentEncoder.wrap(buffer, offset + 2, ASSIGNMENT_VERSION);
        final var t = assignmentEncoder.assignedPartitions(partitions.size());
        for (final Map.Entry<String, List<Integer>> e : partitions.entrySet())
        {
            final var list = t.next().topic(e.getKey()).partitions(e.getValue().size());
            for (final int p : e.getValue())
            {
                list.addInt32(p);
            }
        }
        assignmentEncoder.userDataNull();
        return 2 + assignmentEncoder.finish();
    }

    /** Reads this member's assignment (SyncGroup's answer) in place: iterate the result. Empty bytes: none assigned. */
    ConsumerProtocolAssignmentDecoder.TopicPartition readAssignment(final DirectBuffer buffer, final int offset,
        final int length)
    {
        if (length < 2)
        {
            return null; // a member given nothing may get empty bytes (the coordinator's default)
        }
        final short version = (short)Math.min(buffer.getShort(offset, ByteOrder.BIG_ENDIAN),
            ConsumerProtocolAssignmentDecoder.HIGHEST_VERSION);
        assignmentDecoder.wrap(buffer, offset + 2, offset + length, version);
        return assignmentDecoder.assignedPartitions();
    }
}
