package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorLog;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * DeleteGroups, OffsetDelete and offset expiry, each on the coordinator's agent (its caller runs
 * there): the tombstones are written to {@code __consumer_offsets} first, as one batch per partition of
 * that topic (Kafka's one write per coordinator shard), and only once their log thread answered the
 * append OK do the groups or offsets go from memory. A failed append keeps them: with memory changed
 * first a client would be told NONE and the group or its offsets would come back at the next restart
 * (or, with one batch per tombstone, part of them would). What is removed once appended is what the
 * log then says: the group's writes are applied in the order they were made (see {@link CoordinatorLog}),
 * so a commit made after the tombstones is stored after they are applied, as a replay would.
 */
final class GroupDeletions
{
    private static final Logger LOG = LoggerFactory.getLogger(GroupDeletions.class);

    /**
     * DeleteGroups' outcome: per group its own error and the index in {@code writes} of its partition's
     * batch (or -1): when that write fails, every group of the request on that partition gets its error.
     */
    record Deleted(short[] errors, int[] write, List<CoordinatorLog.Write> writes)
    {
        /** The answer for group {@code i}, given each write's outcome. */
        short error(final int i, final short[] outcomes)
        {
            return write[i] < 0 || outcomes[write[i]] == Errors.NONE ? errors[i] : outcomes[write[i]];
        }
    }

    /** OffsetDelete's outcome: the request's error, and the batch of tombstones (null if none was needed). */
    record OffsetsDeleted(short error, CoordinatorLog.Write write)
    {
    }

    private GroupDeletions()
    {
    }

    /**
     * Deletes the Empty groups among {@code groupIds} with their offsets. When a partition's batch
     * fails, every group of the request on that partition gets the write's error, as Kafka answers
     * every group of a failed shard write. A group this node does not coordinate (now) gets {@code owned}'s error
     * (NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS: the Admin retries it at its coordinator).
     */
    static Deleted deleteGroups(final Map<String, Group> groups, final TxnOffsets pending, final CommitsInFlight inFlight,
        final CoordinatorTopic store, final List<String> groupIds, final java.util.function.ToIntFunction<String> owned)
    {
        final short[] errors = new short[groupIds.size()];
        final int[] append = new int[groupIds.size()];
        final Map<Integer, List<Integer>> byPartition = new LinkedHashMap<>();
        for (int i = 0; i < groupIds.size(); i++)
        {
            append[i] = -1;
            final Group g = groups.get(groupIds.get(i));
            final short notHere = (short)owned.applyAsInt(groupIds.get(i));
            errors[i] = notHere != Errors.NONE ? notHere : g == null || g.is(Group.State.DEAD) ? Errors.GROUP_ID_NOT_FOUND :
                !g.is(Group.State.EMPTY) ? Errors.NON_EMPTY_GROUP : Errors.NONE;
            byPartition.computeIfAbsent(store.partitionOf(groupIds.get(i)), k -> new ArrayList<>()).add(i);
        }
        final List<CoordinatorLog.Write> writes = new ArrayList<>();
        for (final List<Integer> members : byPartition.values())
        {
            final List<byte[]> keys = new ArrayList<>();
            final List<String> deleting = new ArrayList<>();
            final List<Map.Entry<String, Group.TopicPartition>> tombstoned = new ArrayList<>();
            for (final int i : members)
            {
                final String groupId = groupIds.get(i);
                if (errors[i] == Errors.NONE && !deleting.contains(groupId))
                {
                    deleting.add(groupId);
                    for (final Group.TopicPartition tp : groups.get(groupId).offsets.keySet())
                    {
                        keys.add(GroupRecords.offsetKey(groupId, tp.topic(), tp.partition()));
                        tombstoned.add(Map.entry(groupId, tp));
                    }
                    // Kafka's deleteAllOffsets: a partition with only a transaction's offset gets its tombstone too, and
                    // so does one of a commit on its way (appended before these, kept by the group's tombstone at a replay)
                    final Set<Group.TopicPartition> more = new java.util.LinkedHashSet<>(pending.pendingPartitions(groupId));
                    more.addAll(inFlight.partitions(groupId));
                    for (final Group.TopicPartition tp : more)
                    {
                        if (!groups.get(groupId).offsets.containsKey(tp))
                        {
                            keys.add(GroupRecords.offsetKey(groupId, tp.topic(), tp.partition()));
                            tombstoned.add(Map.entry(groupId, tp));
                        }
                    }
                    keys.add(GroupRecords.groupKey(groupId));
                }
            }
            if (keys.isEmpty())
            {
                continue;
            }
            for (final int i : members)
            {
                append[i] = writes.size();
            }
            writes.add(store.write(groupIds.get(members.get(0)), keys, tombstones(keys.size()), error ->
            {
                if (error == Errors.NONE)
                {
                    // only the keys tombstoned, as a replay drops them: a transaction's offset written since
                    // (its batch before these in the log) has no tombstone, and the group's own does not drop it
                    tombstoned.forEach(e -> pending.drop(e.getKey(), e.getValue()));
                    deleting.forEach(groupId -> forget(groups, groupId, store.clock().wallMs()));
                }
            }));
        }
        return new Deleted(errors, append, writes);
    }

    /**
     * A group whose tombstone is appended: gone with every offset, as a replay forgets them: the batch has a
     * tombstone for each of its offsets, those in memory and those of commits on their way when it was made.
     * One that members joined since it was found Empty keeps them (their SyncGroup writes the group
     * again, after the tombstone) but not its offsets.
     */
    private static void forget(final Map<String, Group> groups, final String groupId, final long wallMs)
    {
        final Group g = groups.get(groupId);
        if (g == null)
        {
            return;
        }
        if (g.is(Group.State.EMPTY) || g.is(Group.State.DEAD))
        {
            groups.remove(groupId);
            g.transition(Group.State.DEAD, wallMs);
        }
        else
        {
            g.offsets.clear();
        }
    }

    /** OffsetDelete of {@code partitions} (known topics): GROUP_ID_NOT_FOUND or a write error for the whole request, else one per partition. */
    static OffsetsDeleted deleteOffsets(final Map<String, Group> groups, final TxnOffsets pending, final CoordinatorTopic store,
        final String groupId, final Collection<Group.TopicPartition> partitions, final Map<Group.TopicPartition, Short> results,
        final GroupMetrics metrics)
    {
        if (groupId == null || groupId.isEmpty())
        {
            return new OffsetsDeleted(Errors.INVALID_GROUP_ID, null);
        }
        final Group g = groups.get(groupId);
        if (g == null || g.is(Group.State.DEAD))
        {
            return new OffsetsDeleted(Errors.GROUP_ID_NOT_FOUND, null);
        }
        final Set<String> subscribed = g.is(Group.State.EMPTY) ? Set.of() : g.subscribedTopics();
        final List<Group.TopicPartition> deleting = new ArrayList<>();
        final List<byte[]> keys = new ArrayList<>();
        for (final Group.TopicPartition tp : partitions)
        {
            if (subscribed == null || subscribed.contains(tp.topic()))
            {
                results.put(tp, Errors.GROUP_SUBSCRIBED_TO_TOPIC);
                continue;
            }
            // Kafka writes the tombstone for a partition with only a transaction's offset too (its replay drops that offset)
            if ((g.offsets.containsKey(tp) || pending.isPending(groupId, tp)) && !deleting.contains(tp))
            {
                deleting.add(tp);
                keys.add(GroupRecords.offsetKey(groupId, tp.topic(), tp.partition()));
            }
            results.put(tp, Errors.NONE);
        }
        if (keys.isEmpty())
        {
            return new OffsetsDeleted(Errors.NONE, null);
        }
        return new OffsetsDeleted(Errors.NONE, store.write(groupId, keys, tombstones(keys.size()), error ->
        {
            final Group now = groups.get(groupId);
            if (error == Errors.NONE)
            {
                deleting.forEach(tp -> pending.drop(groupId, tp));
                metrics.deleted(deleting.size());
            }
            if (error == Errors.NONE && now != null)
            {
                deleting.forEach(now.offsets::remove);
            }
        }));
    }

    /**
     * offsets.retention.minutes: an Empty group's offsets go once it has been empty that long (the
     * group with them if none is left), one batch per group. Nobody waits for this: a failed write is
     * logged, memory keeps what it could not delete, and the next check tries again. A group with a
     * write still on its way (a commit from outside the group, sent before this check) is left to the
     * next check: its offsets' timestamps are not in memory yet, and a tombstone written behind that
     * commit would delete the offset it has just stored. A partition with a transaction's offset pending
     * keeps its offset, and a group with any keeps itself, as Kafka's cleanupExpiredOffsets. An Empty group with no
     * offset (and none pending) goes at the first check, whatever its age, as in Kafka.
     */
    static void expireOffsets(final Map<String, Group> groups, final TxnOffsets pending, final CoordinatorTopic store,
        final long retentionMs, final long now, final GroupMetrics metrics)
    {
        for (final Group group : new ArrayList<>(groups.values()))
        {
            // an Empty group without offsets goes whatever its age, as Kafka's cleanupGroupMetadata deletes it (its
            // cleanupExpiredOffsets is true for a group with no offsets and no open transaction): left so by a deleted topic
            if (!group.is(Group.State.EMPTY) || now - group.stateTimestamp < retentionMs && !group.offsets.isEmpty()
                || store.writing(group.groupId))
            {
                continue;
            }
            final List<Group.TopicPartition> expired = new ArrayList<>();
            final List<byte[]> keys = new ArrayList<>();
            for (final Map.Entry<Group.TopicPartition, Group.Offset> e : group.offsets.entrySet())
            {
                if (now - e.getValue().commitTimestamp() >= retentionMs && !pending.isPending(group.groupId, e.getKey()))
                {
                    expired.add(e.getKey());
                    keys.add(GroupRecords.offsetKey(group.groupId, e.getKey().topic(), e.getKey().partition()));
                }
            }
            final boolean groupGoes = expired.size() == group.offsets.size() && !pending.isPending(group.groupId);
            if (groupGoes)
            {
                keys.add(GroupRecords.groupKey(group.groupId));
            }
            if (keys.isEmpty())
            {
                continue;
            }
            store.write(group.groupId, keys, tombstones(keys.size()), error ->
            {
                expired(groups, store, group.groupId, expired, groupGoes, error);
                if (error == Errors.NONE)
                {
                    metrics.expired(expired.size());
                }
            });
        }
    }

    /** The answer to an expiry's tombstones: the offsets go once appended, and the group if its tombstone was written too. */
    private static void expired(final Map<String, Group> groups, final CoordinatorTopic store, final String groupId,
        final List<Group.TopicPartition> expired,
        final boolean groupGoes, final short error)
    {
        if (error != Errors.NONE)
        {
            LOG.warn("cannot expire {} offsets of group {} (writing the tombstones failed: {}); trying again at the next check",
                expired.size(), groupId, error);
            return;
        }
        if (groupGoes)
        {
            forget(groups, groupId, store.clock().wallMs());
        }
        else
        {
            final Group group = groups.get(groupId);
            if (group != null)
            {
                expired.forEach(group.offsets::remove);
            }
        }
        if (!expired.isEmpty())
        {
            LOG.info("expired {} offsets of group {}", expired.size(), groupId);
        }
    }

    static List<byte[]> tombstones(final int count)
    {
        final List<byte[]> values = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            values.add(null);
        }
        return values;
    }
}
