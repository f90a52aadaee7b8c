package io.ferrite.client;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.charset.StandardCharsets;

/** A topic the producer sends to: its name's bytes (written into requests, compared with answers) and its partitions. */
final class TopicState
{
    enum Status
    {
        /** Asked for, not answered yet. */
        PENDING,
        KNOWN,
        /** The broker answered UNKNOWN_TOPIC_OR_PARTITION or another error that is not retriable ({@link #error}). */
        FAILED
    }

    final String name;
    final UnsafeBuffer nameBytes;
    Status status = Status.PENDING;
    short error;
    PartitionState[] partitions = new PartitionState[0];
    int sticky;

    TopicState(final String name)
    {
        this.name = name;
        this.nameBytes = new UnsafeBuffer(name.getBytes(StandardCharsets.UTF_8));
    }

    boolean nameEquals(final DirectBuffer buffer, final int offset, final int length)
    {
        return nameEquals(nameBytes, buffer, offset, length);
    }

    /** Whether the {@code length} bytes at {@code offset} of {@code buffer} are {@code name}'s (a topic name's UTF-8). */
    static boolean nameEquals(final DirectBuffer name, final DirectBuffer buffer, final int offset, final int length)
    {
        if (length != name.capacity())
        {
            return false;
        }
        for (int i = 0; i < length; i++)
        {
            if (buffer.getByte(offset + i) != name.getByte(i))
            {
                return false;
            }
        }
        return true;
    }

    /** Makes room for {@code count} partitions (a topic only grows), keeping the state of those known. */
    void partitionCount(final int count)
    {
        if (count > partitions.length)
        {
            final PartitionState[] grown = java.util.Arrays.copyOf(partitions, count);
            for (int i = partitions.length; i < count; i++)
            {
                grown[i] = new PartitionState(i);
            }
            partitions = grown;
        }
    }
}
