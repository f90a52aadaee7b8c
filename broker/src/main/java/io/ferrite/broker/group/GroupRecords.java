package io.ferrite.broker.group;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The keys and values written to {@code __consumer_offsets}, in Kafka's layout so that Kafka's own
 * tools can read them: an offset commit is key version 1 (group, topic, partition) with value
 * version 3 (offset, leader epoch, metadata, commit timestamp); group metadata is key version 2
 * (group) with value version 3 (protocol type, generation, protocol, leader, state timestamp,
 * members). A null value (tombstone) deletes the key. What Kafka writes (every version of these, and
 * its other record types) is read by {@link OffsetsTopicRecord}.
 */
final class GroupRecords
{
    static final short OFFSET_KEY = 1;
    static final short GROUP_KEY = 2;

    private GroupRecords()
    {
    }

    static byte[] offsetKey(final String group, final String topic, final int partition)
    {
        final byte[] g = utf8(group);
        final byte[] t = utf8(topic);
        return ByteBuffer.allocate(2 + 2 + g.length + 2 + t.length + 4).putShort(OFFSET_KEY)
            .putShort((short)g.length).put(g).putShort((short)t.length).put(t).putInt(partition).array();
    }

    static byte[] offsetValue(final Group.Offset o)
    {
        final byte[] m = utf8(o.metadata() == null ? "" : o.metadata());
        return ByteBuffer.allocate(2 + 8 + 4 + 2 + m.length + 8).putShort((short)3).putLong(o.offset()).putInt(o.leaderEpoch())
            .putShort((short)m.length).put(m).putLong(o.commitTimestamp()).array();
    }

    static byte[] groupKey(final String group)
    {
        final byte[] g = utf8(group);
        return ByteBuffer.allocate(2 + 2 + g.length).putShort(GROUP_KEY).putShort((short)g.length).put(g).array();
    }

    /** Group metadata without members: they rejoin after a restart (see GroupCoordinator). */
    static byte[] groupValue(final Group group)
    {
        final byte[] type = utf8(group.protocolType == null ? "" : group.protocolType);
        final byte[] protocol = group.protocolName == null ? null : utf8(group.protocolName);
        final byte[] leader = group.leaderId == null ? null : utf8(group.leaderId);
        final ByteBuffer b = ByteBuffer.allocate(2 + 2 + type.length + 4 + 2 + (protocol == null ? 0 : protocol.length) +
            2 + (leader == null ? 0 : leader.length) + 8 + 4);
        b.putShort((short)3).putShort((short)type.length).put(type).putInt(group.generationId);
        nullable(b, protocol);
        nullable(b, leader);
        b.putLong(group.stateTimestamp).putInt(0);
        return b.array();
    }

    private static void nullable(final ByteBuffer b, final byte[] s)
    {
        if (s == null)
        {
            b.putShort((short)-1);
        }
        else
        {
            b.putShort((short)s.length).put(s);
        }
    }

    private static byte[] utf8(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
