package io.ferrite.broker.group;

import io.ferrite.broker.Errors;
import io.ferrite.broker.coordinator.CoordinatorRuntime;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A deleted topic's committed offsets deleted, as Kafka 4.4's group coordinator does when the metadata says a topic is
 * gone ({@code GroupCoordinatorService.onMetadataUpdate} → {@code OffsetMetadataManager.onTopicsDeleted}): a tombstone for
 * every group's offset of the topic, and for every partition of it with an offset pending in a transaction, written to
 * {@code __consumer_offsets} (one batch per group), so the offsets are gone after a restart too; once their log thread
 * answered OK they go from memory, and with them their lag counters ({@link GroupLag}'s next refresh frees them). A
 * group left Empty with no offset goes at the next retention check, as in Kafka ({@link GroupDeletions#expireOffsets}).
 *
 * <p>Who does what: the admin agent deletes the topic (DeleteTopics) and tells {@link #deleted} the name and partition
 * count, from its own thread; the coordinators' agent, the one writer of the groups, drains those names and writes the
 * tombstones. It drains them before each pass's calls and, to be exact, before the work of every OffsetCommit and
 * TxnOffsetCommit ({@link #drain}): a commit checked against a topic of the same name created again after the deletion
 * is queued after the name, so the tombstones are made before that commit's record and never delete it. Kafka keys by
 * name too (an offset carries no topic id unless committed by id) and its metadata publisher waits for these writes
 * before it publishes the next change, so there too no commit of the new topic comes before them.
 *
 * <p>Commits on their way: Kafka applies a commit to its maps when it makes the records, so its deletion sees a commit
 * not written yet. Here a commit is stored in memory when its write is answered, so a group with a write of its own on
 * the way at the drain ({@link CoordinatorTopic#writing}: an OffsetCommit, a TxnOffsetCommit, its join or sync) gets a
 * tombstone for every partition of the deleted topic, whatever memory holds: its batch comes after that write in the
 * log, and its answer after that write's answer, so what the write stored it removes again (in the log as in memory).
 *
 * <p>A write that fails is tried again at the next retention check ({@code offsets.retention.check.interval.ms}), for
 * the offsets not committed again since (Kafka 4.4 logs the failure and leaves them to expire), and only while the
 * group has no write on its way: a tombstone written behind a commit of a topic of that name created again would delete
 * an offset its client was told is committed.
 */
final class TopicDeletions
{
    private static final Logger LOG = LoggerFactory.getLogger(TopicDeletions.class);

    /** A deleted topic, as the admin agent tells it. */
    private record Deleted(String topic, int partitions)
    {
    }

    /**
     * Tombstones to write again: per partition, the offset memory held when the write failed (a map value of null: none,
     * only a transaction's offset pending, if any).
     */
    private record Failed(String groupId, Map<Group.TopicPartition, Group.Offset> offsets)
    {
    }

    private final Map<String, Group> groups;
    private final TxnOffsets pending;
    private final CoordinatorTopic store;
    private final long retryIntervalMs;
    /** Deleted topics' names, from the admin agent to the coordinators' agent (unbounded: a name is never refused). */
    private final ManyToOneConcurrentLinkedQueue<Deleted> deletedTopics = new ManyToOneConcurrentLinkedQueue<>();
    private final Runnable wake;
    private final List<Failed> failed = new ArrayList<>();
    private long nextRetryMs;

    TopicDeletions(final Map<String, Group> groups, final TxnOffsets pending, final CoordinatorTopic store,
        final CoordinatorRuntime runtime, final long retryIntervalMs)
    {
        this.groups = groups;
        this.pending = pending;
        this.store = store;
        this.retryIntervalMs = retryIntervalMs;
        this.wake = runtime.agent()::wake;
        runtime.onBeforeCalls(this::drain);
        runtime.onTick(this::retry);
    }

    /** Any thread (the admin agent's, once DeleteTopics deleted {@code topic} of {@code partitions}): its offsets are to be deleted. */
    void deleted(final String topic, final int partitions)
    {
        deletedTopics.offer(new Deleted(topic, partitions));
        wake.run();
    }

    /** On the agent: the tombstones of the topics deleted since the last drain sent; returns how many (the agent's work count). */
    int drain()
    {
        if (deletedTopics.isEmpty())
        {
            return 0;
        }
        final Map<String, Integer> names = new HashMap<>();
        for (Deleted d = deletedTopics.poll(); d != null; d = deletedTopics.poll())
        {
            names.merge(d.topic(), d.partitions(), Math::max);
        }
        final Map<String, Map<Group.TopicPartition, Group.Offset>> byGroup = new LinkedHashMap<>();
        groups.forEach((groupId, group) -> group.offsets.forEach((tp, offset) ->
        {
            if (names.containsKey(tp.topic()))
            {
                byGroup.computeIfAbsent(groupId, g -> new LinkedHashMap<>()).put(tp, offset);
            }
        }));
        for (final String groupId : pending.pendingGroups())
        {
            for (final Group.TopicPartition tp : pending.pendingPartitions(groupId))
            {
                if (names.containsKey(tp.topic()))
                {
                    byGroup.computeIfAbsent(groupId, g -> new LinkedHashMap<>()).putIfAbsent(tp, null);
                }
            }
        }
        // a group's write on its way may hold an offset of the topic that memory does not have yet: every partition
        store.forEachWriting(groupId -> names.forEach((topic, partitions) ->
        {
            final Map<Group.TopicPartition, Group.Offset> offsets = byGroup.computeIfAbsent(groupId, g -> new LinkedHashMap<>());
            for (int p = 0; p < partitions; p++)
            {
                offsets.putIfAbsent(new Group.TopicPartition(topic, p), null);
            }
        }));
        byGroup.forEach(this::write);
        if (!byGroup.isEmpty())
        {
            LOG.info("deleting the offsets of {} groups for deleted topics {}", byGroup.size(), names.keySet());
        }
        return names.size();
    }

    private void write(final String groupId, final Map<Group.TopicPartition, Group.Offset> offsets)
    {
        final List<byte[]> keys = new ArrayList<>(offsets.size());
        offsets.keySet().forEach(tp -> keys.add(GroupRecords.offsetKey(groupId, tp.topic(), tp.partition())));
        store.write(groupId, keys, GroupDeletions.tombstones(keys.size()), error ->
        {
            if (error != Errors.NONE)
            {
                LOG.warn("cannot delete {} offsets of group {} for a deleted topic (writing the tombstones failed: {}); "
                    + "trying again at the next retention check", offsets.size(), groupId, error);
                if (failed.isEmpty())
                {
                    nextRetryMs = store.clock().nowMs() + retryIntervalMs;
                }
                // what memory holds now was written before these tombstones (answers come in the order of the writes):
                // a commit that was on its way at the drain included
                final Group holder = groups.get(groupId);
                final Map<Group.TopicPartition, Group.Offset> held = new LinkedHashMap<>();
                offsets.keySet().forEach(tp -> held.put(tp, holder == null ? null : holder.offsets.get(tp)));
                failed.add(new Failed(groupId, held));
                return;
            }
            // as a replay drops them: the group's committed offsets and every transaction's pending one of these keys; all
            // that memory holds of them was written before the tombstones (a later write is answered later), so all goes
            offsets.keySet().forEach(tp -> pending.drop(groupId, tp));
            final Group group = groups.get(groupId);
            if (group != null)
            {
                offsets.keySet().forEach(group.offsets::remove);
            }
        });
    }

    /**
     * Each tick: the failed tombstones written again once the retention check interval passed, except for a group with
     * a write on its way (kept for a later tick): memory does not say yet what that write holds.
     */
    private void retry(final long nowMs)
    {
        if (failed.isEmpty() || nowMs < nextRetryMs)
        {
            return;
        }
        final List<Failed> again = new ArrayList<>(failed);
        failed.clear();
        for (final Failed f : again)
        {
            if (store.writing(f.groupId()))
            {
                failed.add(f);
                continue;
            }
            final Group group = groups.get(f.groupId());
            final Map<Group.TopicPartition, Group.Offset> still = new LinkedHashMap<>();
            f.offsets().forEach((tp, offset) ->
            {
                final Group.Offset now = group == null ? null : group.offsets.get(tp);
                // the same offset, not one committed since (to a topic of that name created again)
                if (offset != null ? now == offset : now == null && pending.isPending(f.groupId(), tp))
                {
                    still.put(tp, offset);
                }
            });
            if (!still.isEmpty())
            {
                write(f.groupId(), still);
            }
        }
    }
}
