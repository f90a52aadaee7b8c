package io.ferrite.broker.group;

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
 */
final class GroupReplay
{
    private GroupReplay()
    {
    }

    /** Replays every partition into {@code groups} (their state timestamp: {@code wallMs}, the load's); returns the records read. */
    static int load(final TopicRegistry topics, final Map<String, Group> groups, final long wallMs)
    {
        final Topic topic = topics.topic(GroupCoordinator.OFFSETS_TOPIC);
        if (topic == null)
        {
            return 0;
        }
        final RecordBatch read = new RecordBatch();
        final RecordReader reader = new RecordReader();
        int records = 0;
        for (final Partition p : topic.partitions)
        {
            final LogTailer tailer = new LogTailer(p.log, p.log.logStartOffset());
            final long end = p.log.logEndOffset();
            while (tailer.next(end, read))
            {
                reader.reset(read);
                while (reader.hasNext())
                {
                    apply(groups, reader.next(), wallMs);
                    records++;
                }
            }
        }
        return records;
    }

    private static void apply(final Map<String, Group> groups, final Record record, final long wallMs)
    {
        if (!record.hasKey())
        {
            return;
        }
        final ByteBuffer key = ByteBuffer.wrap(bytes(record, record.keyOffset(), record.keyLength()));
        final short keyVersion = key.getShort();
        final String groupId = GroupRecords.string(key);
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
