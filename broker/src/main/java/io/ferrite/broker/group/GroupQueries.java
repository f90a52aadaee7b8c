package io.ferrite.broker.group;

import io.ferrite.broker.group.GroupCoordinator.Committed;
import io.ferrite.broker.group.GroupCoordinator.Description;
import io.ferrite.broker.group.GroupCoordinator.MemberDescription;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What OffsetFetch, ListGroups and DescribeGroups read: committed offsets and groups as the answers
 * report them, copied out so that the network threads write their responses from them.
 * Called on the coordinator's agent.
 */
final class GroupQueries
{
    private GroupQueries()
    {
    }

    /**
     * The committed offset of a partition, or null; {@link GroupCoordinator#UNSTABLE} when {@code unstable} (the pending
     * transactional offsets, for a RequireStable fetch; null: not asked) has an offset pending or on its way for it.
     */
    static Committed committed(final Map<String, Group> groups, final TxnOffsets unstable, final String groupId, final String topic,
        final int partition)
    {
        if (unstable != null && unstable.isUnstable(groupId, new Group.TopicPartition(topic, partition)))
        {
            return GroupCoordinator.UNSTABLE;
        }
        final Group group = groups.get(groupId);
        final Group.Offset o = group == null ? null : group.offsets.get(new Group.TopicPartition(topic, partition));
        return o == null ? null : new Committed(o.offset(), o.leaderEpoch(), o.metadata());
    }

    /** Every committed offset of a group, by topic then partition (sorted); {@code unstable} as in the partition's. */
    static Map<String, Map<Integer, Committed>> committed(final Map<String, Group> groups, final TxnOffsets unstable, final String groupId)
    {
        final Map<String, Map<Integer, Committed>> all = new TreeMap<>();
        final Group group = groups.get(groupId);
        if (group != null)
        {
            for (final Map.Entry<Group.TopicPartition, Group.Offset> e : group.offsets.entrySet())
            {
                final Group.Offset o = e.getValue();
                all.computeIfAbsent(e.getKey().topic(), k -> new TreeMap<>())
                    .put(e.getKey().partition(), new Committed(o.offset(), o.leaderEpoch(), o.metadata()));
            }
        }
        if (unstable != null && unstable.isUnstable(groupId))
        {
            all.forEach((topic, partitions) -> partitions.replaceAll((partition, c) ->
                unstable.isUnstable(groupId, new Group.TopicPartition(topic, partition)) ? GroupCoordinator.UNSTABLE : c));
        }
        return all;
    }

    static List<Description> list(final Map<String, Group> groups)
    {
        final List<Description> list = new ArrayList<>();
        for (final Group g : groups.values())
        {
            if (!g.is(Group.State.DEAD))
            {
                list.add(new Description(g.groupId, g.state.label, g.protocolType == null ? "" : g.protocolType, "", List.of()));
            }
        }
        return list;
    }

    /** A group's description, or null when there is no such group. */
    static Description describe(final Map<String, Group> groups, final String groupId)
    {
        final Group g = groups.get(groupId);
        if (g == null || g.is(Group.State.DEAD))
        {
            return null;
        }
        final List<MemberDescription> members = new ArrayList<>();
        final boolean stable = g.is(Group.State.STABLE);
        for (final Member m : g.members.values())
        {
            members.add(new MemberDescription(m.memberId, m.groupInstanceId, m.clientId, m.clientHost,
                g.protocolName == null ? new byte[0] : m.metadata(g.protocolName), stable ? m.assignment : new byte[0]));
        }
        return new Description(g.groupId, g.state.label, g.protocolType == null ? "" : g.protocolType,
            stable && g.protocolName != null ? g.protocolName : "", members);
    }
}
