package io.ferrite.broker.group;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;

/**
 * Reads the topics out of a consumer's subscription (the member metadata of protocol type
 * "consumer": int16 version, then an array of topic names, the same layout in every version).
 * OffsetDelete needs them: an offset of a topic the group is subscribed to cannot be deleted.
 */
final class ConsumerProtocol
{
    private ConsumerProtocol()
    {
    }

    /** The subscribed topics, or null when the bytes are not a subscription. */
    static Set<String> topics(final byte[] subscription)
    {
        try
        {
            final ByteBuffer b = ByteBuffer.wrap(subscription);
            b.getShort();
            final int count = b.getInt();
            if (count < 0 || count > b.remaining() / 2)
            {
                return null;
            }
            final Set<String> topics = new HashSet<>();
            for (int i = 0; i < count; i++)
            {
                final int length = b.getShort();
                if (length < 0 || length > b.remaining())
                {
                    return null;
                }
                final byte[] name = new byte[length];
                b.get(name);
                topics.add(new String(name, StandardCharsets.UTF_8));
            }
            return topics;
        }
        catch (final BufferUnderflowException ex)
        {
            return null;
        }
    }
}
