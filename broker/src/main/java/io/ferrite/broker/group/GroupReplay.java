package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogTailer;
import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordReader;

import java.nio.ByteBuffer;
import java.util.Map;

/**
 * The groups as {@code __consumer_offsets} holds them, replayed at start (before any write goes to
 * the topic): offsets and their tombstones, group records (a group comes back Empty: its members
 * rejoin) and group tombstones, in log order.
 *
 * <p>A group's records belong in its partition ({@link CoordinatorTopic#partitionFor}). Records found
 * in another partition ("strays": written by a Ferrite that placed groups by a different hash, or
 * before the topic's partition count changed) are older than every record in the group's own
 * partition, since every write goes there: they are replayed first, then the groups' own
 * partitions, so that what a group wrote last wins whatever the partitions' order. Kafka's files
 * have no strays, nor do Ferrite's written since; that common case is one pass over the topic.
 *
 * <p>Control batches (transaction markers: Kafka's files have them once transactional offset commits
 * were made) are skipped. Transactional offset commits are not applied as Kafka does (pending until
 * their marker, dropped on an ABORT): a transactional commit's records are applied as written, and
 * its marker ignored — issue 12 (the transaction coordinator) replaces that.
 */
final class GroupReplay
{
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(GroupReplay.class);
    private enum Pass
    {
        ALL, STRAYS, HOME
    }

    private final Topic topic;
    private final Map<String, Group> groups;
    private final long wallMs;
    private final RecordBatch read = new RecordBatch();
    private final RecordReader reader = new RecordReader();
    private boolean sawStray;

    private GroupReplay(final Topic topic, final Map<String, Group> groups, final long wallMs)
    {
        this.topic = topic;
        this.groups = groups;
        this.wallMs = wallMs;
    }

    /**
     * Replays every partition into {@code groups} (their state timestamp: {@code wallMs}, the load's);
     * returns the records applied (offset and group records and their tombstones).
     */
    static int load(final TopicRegistry topics, final Map<String, Group> groups, final long wallMs)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null)
        {
            return 0;
        }
        final GroupReplay replay = new GroupReplay(topic, groups, wallMs);
        final int records = replay.run(Pass.ALL);
        if (!replay.sawStray)
        {
            return records;
        }
        groups.clear();
        return replay.run(Pass.STRAYS) + replay.run(Pass.HOME);
    }

    /** One pass over every partition, applying the records {@code pass} takes; returns how many it applied. */
    private int run(final Pass pass)
    {
        final int partitions = topic.partitions.length;
        int records = 0;
        for (final Partition p : topic.partitions)
        {
            final LogTailer tailer = new LogTailer(p.log, p.log.logStartOffset());
            final long end = p.log.logEndOffset();
            while (tailer.next(end, read))
            {
                if (read.isControl())
                {
                    continue; // a transaction marker (see the class's javadoc): its key is no group's
                }
                reader.reset(read);
                while (reader.hasNext())
                {
                    final Record record = reader.next();
                    if (!record.hasKey())
                    {
                        continue;
                    }
                    final ByteBuffer key = ByteBuffer.wrap(bytes(record, record.keyOffset(), record.keyLength()));
                    final short keyVersion = key.getShort();
                    if (keyVersion != 0 && keyVersion != GroupRecords.OFFSET_KEY && keyVersion != GroupRecords.GROUP_KEY)
                    {
                        continue; // a record kind this coordinator does not keep (KIP-848's, share groups', streams')
                    }
                    final String groupId = GroupRecords.string(key);
                    if (groupId == null)
                    {
                        LOG.warn("{}-{}: a record with a null group id, skipped", topic.name, p.index);
                        continue;
                    }
                    final boolean home = CoordinatorTopic.partitionFor(groupId, partitions) == p.index;
                    sawStray |= !home;
                    if (pass == Pass.ALL || (pass == Pass.HOME) == home)
                    {
                        apply(groups, record, keyVersion, groupId, key, wallMs);
                        records++;
                    }
                }
            }
        }
        return records;
    }

    /** Applies one record whose key (read up to its group id, in {@code key}) was {@code keyVersion}, {@code groupId}. */
    private static void apply(final Map<String, Group> groups, final Record record, final short keyVersion, final String groupId,
        final ByteBuffer key, final long wallMs)
    {
        final ByteBuffer value = record.hasValue() ? ByteBuffer.wrap(bytes(record, record.valueOffset(), record.valueLength())) : null;
        if (keyVersion == GroupRecords.OFFSET_KEY || keyVersion == 0)
        {
            final Group.TopicPartition tp = new Group.TopicPartition(GroupRecords.string(key), key.getInt());
            if (value == null)
            {
                final Group g = groups.get(groupId);
                if (g != null)
                {
                    g.offsets.remove(tp);
                }
                return;
            }
            value.getShort();
            final long committed = value.getLong();
            final int epoch = value.getInt();
            final String metadata = GroupRecords.string(value);
            final long timestamp = value.getLong();
            groups.computeIfAbsent(groupId, Group::new).offsets.put(tp, new Group.Offset(committed, epoch, metadata, timestamp));
        }
        else if (keyVersion == GroupRecords.GROUP_KEY)
        {
            if (value == null)
            {
                groups.remove(groupId);
                return;
            }
            value.getShort();
            final Group g = groups.computeIfAbsent(groupId, Group::new);
            g.protocolType = GroupRecords.string(value);
            g.generationId = value.getInt();
            g.protocolName = null; // the members rejoin: no protocol until they do
            g.leaderId = null;
            g.state = Group.State.EMPTY;
            g.stateTimestamp = wallMs;
        }
    }

    private static byte[] bytes(final Record record, final int offset, final int length)
    {
        final byte[] b = new byte[length];
        record.buffer().getBytes(offset, b);
        return b;
    }
}
