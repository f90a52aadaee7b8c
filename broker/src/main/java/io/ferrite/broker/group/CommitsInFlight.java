package io.ferrite.broker.group;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * Per group, the partitions of its OffsetCommit batches sent to their log thread and not answered yet
 * (on the agent). Memory takes a commit only once it is answered, so DeleteGroups looks here too: its
 * tombstones must cover these partitions, as Kafka 4.4's deleteAllOffsets sees the uncommitted writes in
 * its state, or such an offset, appended before the group's tombstone and kept by it, comes back at a restart.
 */
final class CommitsInFlight
{
    private final Map<String, Map<Group.TopicPartition, Integer>> sent = new HashMap<>();

    /** A batch with the group's offsets for {@code partitions} goes to its log thread. */
    void sent(final String groupId, final Set<Group.TopicPartition> partitions)
    {
        final Map<Group.TopicPartition, Integer> counts = sent.computeIfAbsent(groupId, g -> new HashMap<>());
        partitions.forEach(tp -> counts.merge(tp, 1, Integer::sum));
    }

    /** A batch {@link #sent} is answered, OK or not. */
    void answered(final String groupId, final Set<Group.TopicPartition> partitions)
    {
        final Map<Group.TopicPartition, Integer> counts = sent.get(groupId);
        if (counts != null)
        {
            partitions.forEach(tp -> counts.computeIfPresent(tp, (k, n) -> n > 1 ? n - 1 : null));
            if (counts.isEmpty())
            {
                sent.remove(groupId);
            }
        }
    }

    /** The group's partitions with a commit on its way (empty when none). */
    Set<Group.TopicPartition> partitions(final String groupId)
    {
        final Map<Group.TopicPartition, Integer> counts = sent.get(groupId);
        return counts == null ? Set.of() : counts.keySet();
    }
}
