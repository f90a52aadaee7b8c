package io.ferrite.broker.group;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The offsets committed inside transactions (TxnOffsetCommit) whose transaction has not ended yet,
 * by producer id, as Kafka 4.4's {@code OffsetMetadataManager} keeps them
 * ({@code pendingTransactionalOffsets}, {@code openTransactions}): never returned by OffsetFetch; a
 * partition with one answers UNSTABLE_OFFSET_COMMIT to a RequireStable fetch; offset expiry passes it
 * by. The transaction's marker on the {@code __consumer_offsets} partition they were written to (the
 * group's; a stray's, the one it was found in) ends them: a
 * COMMIT makes each the group's committed offset unless the committed one's record is later in the
 * log (a plain commit written after it), an ABORT drops them. A tombstone of the key (OffsetDelete,
 * DeleteGroups) drops them too. Filled by the writes' answers and by the replay at start (so a
 * transaction open across a restart keeps its offsets pending until its marker). It also counts the
 * transactional batches sent and not answered yet, per partition they hold an offset for
 * ({@link #isUnstable}): Kafka runs a RequireStable fetch as a write operation, behind the writes
 * already on their way, so it sees their offsets pending. Agent only.
 */
final class TxnOffsets
{
    private static final Logger LOG = LoggerFactory.getLogger(TxnOffsets.class);

    /** A pending offset and the {@code __consumer_offsets} partition its record is in (where its marker comes). */
    private record Written(Group.Offset offset, int partition)
    {
    }

    /** Producer id, then group, then partition: the pending offset (the last one written for the key). */
    private final Map<Long, Map<String, Map<Group.TopicPartition, Written>>> byProducer = new HashMap<>();
    /** Group, then partition: the producers with an offset pending there. */
    private final Map<String, Map<Group.TopicPartition, Set<Long>>> open = new HashMap<>();
    /** Group, then partition: how many transactional batches with an offset for it are sent and not answered yet. */
    private final Map<String, Map<Group.TopicPartition, Integer>> writing = new HashMap<>();

    /** Forgets every pending offset (a replay that starts again); the writes on their way are still counted until answered. */
    void clear()
    {
        byProducer.clear();
        open.clear();
    }

    /**
     * An offset written in producer {@code producerId}'s transaction (its write answered, or replayed) to
     * partition {@code partition} of {@code __consumer_offsets}: the group's, or for a stray the one it was found in.
     */
    void add(final long producerId, final String groupId, final Group.TopicPartition tp, final Group.Offset offset, final int partition)
    {
        byProducer.computeIfAbsent(producerId, p -> new HashMap<>()).computeIfAbsent(groupId, g -> new HashMap<>())
            .put(tp, new Written(offset, partition));
        open.computeIfAbsent(groupId, g -> new HashMap<>()).computeIfAbsent(tp, p -> new HashSet<>()).add(producerId);
    }

    /** A transactional batch with an offset for the group's partition is sent to its log thread. */
    void sent(final String groupId, final Group.TopicPartition tp)
    {
        writing.computeIfAbsent(groupId, g -> new HashMap<>()).merge(tp, 1, Integer::sum);
    }

    /** A batch {@link #sent} is answered, OK or not (an OK one's offsets are {@link #add}ed as well). */
    void answered(final String groupId, final Group.TopicPartition tp)
    {
        final Map<Group.TopicPartition, Integer> partitions = writing.get(groupId);
        if (partitions != null)
        {
            partitions.computeIfPresent(tp, (k, n) -> n > 1 ? n - 1 : null);
            if (partitions.isEmpty())
            {
                writing.remove(groupId);
            }
        }
    }

    /** For a RequireStable fetch: whether an offset for the group's partition is pending, or in a batch on its way. */
    boolean isUnstable(final String groupId, final Group.TopicPartition tp)
    {
        final Map<Group.TopicPartition, Integer> partitions = writing.get(groupId);
        return isPending(groupId, tp) || partitions != null && partitions.containsKey(tp);
    }

    /** For a RequireStable fetch: whether {@link #isUnstable(String, Group.TopicPartition)} may hold for some partition of the group. */
    boolean isUnstable(final String groupId)
    {
        return isPending(groupId) || writing.containsKey(groupId);
    }

    /** Whether some transaction has an offset pending for the group's partition. */
    boolean isPending(final String groupId, final Group.TopicPartition tp)
    {
        final Map<Group.TopicPartition, Set<Long>> partitions = open.get(groupId);
        return partitions != null && partitions.containsKey(tp);
    }

    /**
     * Forgets the pending offsets of the groups {@code unloaded} picks (their coordinator moved away: a cluster's
     * {@link GroupOwnership}); the writes on their way are still counted until answered.
     */
    void forget(final java.util.function.Predicate<String> unloaded)
    {
        open.keySet().removeIf(unloaded);
        byProducer.values().forEach(groups -> groups.keySet().removeIf(unloaded));
        byProducer.values().removeIf(Map::isEmpty);
    }

    /** Whether some transaction has an offset pending for the group. */
    boolean isPending(final String groupId)
    {
        return open.containsKey(groupId);
    }

    /** The groups with an offset pending in some transaction. */
    Set<String> pendingGroups()
    {
        return open.keySet();
    }

    /** The group's partitions with an offset pending (empty when none). */
    Set<Group.TopicPartition> pendingPartitions(final String groupId)
    {
        final Map<Group.TopicPartition, Set<Long>> partitions = open.get(groupId);
        return partitions == null ? Set.of() : partitions.keySet();
    }

    /** A tombstone of the key: every transaction's pending offset for it goes (Kafka's replay of a tombstone). */
    void drop(final String groupId, final Group.TopicPartition tp)
    {
        final Map<Group.TopicPartition, Set<Long>> partitions = open.get(groupId);
        final Set<Long> producers = partitions == null ? null : partitions.remove(tp);
        if (producers == null)
        {
            return;
        }
        for (final Long producerId : producers)
        {
            final Map<String, Map<Group.TopicPartition, Written>> groups = byProducer.get(producerId);
            final Map<Group.TopicPartition, Written> offsets = groups == null ? null : groups.get(groupId);
            if (offsets != null)
            {
                offsets.remove(tp);
                if (offsets.isEmpty())
                {
                    groups.remove(groupId);
                }
                if (groups.isEmpty())
                {
                    byProducer.remove(producerId);
                }
            }
        }
        if (partitions.isEmpty())
        {
            open.remove(groupId);
        }
    }

    /**
     * Producer {@code producerId}'s transaction ended by a marker on partition {@code partition} of
     * {@code __consumer_offsets} (Kafka's {@code replayEndTransactionMarker}): its offsets written there,
     * of the groups {@code which} accepts, end. On a COMMIT they become committed offsets of {@code groups}
     * (a group made if none: Kafka creates it at the offset's replay), unless the committed offset's record
     * is later in the log; on an ABORT they are dropped. Returns how many offsets it ended. The offsets
     * written to another partition (a stray's, found where an older placement put it) wait for that
     * partition's marker.
     */
    int complete(final long producerId, final boolean commit, final int partition, final Predicate<String> which,
        final Map<String, Group> groups, final long wallMs)
    {
        final Map<String, Map<Group.TopicPartition, Written>> pending = byProducer.get(producerId);
        if (pending == null)
        {
            return 0;
        }
        int ended = 0;
        for (final Iterator<Map.Entry<String, Map<Group.TopicPartition, Written>>> it = pending.entrySet().iterator(); it.hasNext(); )
        {
            final Map.Entry<String, Map<Group.TopicPartition, Written>> e = it.next();
            final String groupId = e.getKey();
            if (!which.test(groupId))
            {
                continue;
            }
            for (final Iterator<Map.Entry<Group.TopicPartition, Written>> o = e.getValue().entrySet().iterator(); o.hasNext(); )
            {
                final Map.Entry<Group.TopicPartition, Written> w = o.next();
                if (w.getValue().partition() != partition)
                {
                    continue;
                }
                o.remove();
                closeOpen(groupId, w.getKey(), producerId);
                ended++;
                if (commit)
                {
                    materialize(groups, groupId, w.getKey(), w.getValue().offset(), wallMs);
                }
            }
            if (e.getValue().isEmpty())
            {
                it.remove();
            }
        }
        if (pending.isEmpty())
        {
            byProducer.remove(producerId);
        }
        return ended;
    }

    private void closeOpen(final String groupId, final Group.TopicPartition tp, final long producerId)
    {
        final Map<Group.TopicPartition, Set<Long>> partitions = open.get(groupId);
        final Set<Long> producers = partitions == null ? null : partitions.get(tp);
        if (producers != null && producers.remove(producerId) && producers.isEmpty())
        {
            partitions.remove(tp);
            if (partitions.isEmpty())
            {
                open.remove(groupId);
            }
        }
    }

    private static void materialize(final Map<String, Group> groups, final String groupId, final Group.TopicPartition tp,
        final Group.Offset offset, final long wallMs)
    {
        Group group = groups.get(groupId);
        if (group == null)
        {
            group = new Group(groupId);
            group.stateTimestamp = wallMs;
            groups.put(groupId, group);
        }
        final Group.Offset committed = group.offsets.get(tp);
        if (committed != null && offset.recordOffset() <= committed.recordOffset())
        {
            LOG.info("group {}: the transactional offset of {} at record {} is not committed, the committed one's record {} is later",
                groupId, tp, offset.recordOffset(), committed.recordOffset());
            return;
        }
        if (group.is(Group.State.EMPTY))
        {
            group.stateTimestamp = wallMs; // retention counts from the last activity, as for a plain commit
        }
        group.offsets.put(tp, offset);
    }
}
