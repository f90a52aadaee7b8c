package io.ferrite.broker.topic;

import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;

/**
 * A topic's id as Kafka keeps it: in each partition directory's {@code partition.metadata} file ({@code version: 0} and
 * {@code topic_id: <base64url>}), and as text the 16 bytes of the UUID in base64url without padding. The registry
 * rebuilds its topics' ids from these files at a start.
 */
public final class TopicIds
{
    static final String PARTITION_METADATA = "partition.metadata";

    private TopicIds()
    {
    }

    /** Writes a partition directory's {@code partition.metadata} unless it already says {@code id}; durable on return. */
    static void write(final Path partitionDir, final long[] id) throws IOException
    {
        final Path file = partitionDir.resolve(PARTITION_METADATA);
        final byte[] text = text(id);
        if (!Files.exists(file) || !Arrays.equals(Files.readAllBytes(file), text))
        {
            DurableFile.write(file, text);
        }
    }

    /** As {@link #write} in a partition directory being created, which its creation fsyncs once. */
    static void writeNew(final Path partitionDir, final long[] id) throws IOException
    {
        DurableFile.writeContent(partitionDir.resolve(PARTITION_METADATA), text(id));
    }

    /** The id a partition directory's {@code partition.metadata} holds, or null (no such file, or no id in it). */
    static long[] read(final Path partitionDir) throws IOException
    {
        final Path file = partitionDir.resolve(PARTITION_METADATA);
        if (!Files.exists(file))
        {
            return null;
        }
        for (final String line : Files.readAllLines(file))
        {
            if (line.startsWith("topic_id:"))
            {
                return decode(line.substring("topic_id:".length()).trim());
            }
        }
        return null;
    }

    private static byte[] text(final long[] id)
    {
        return ("version: 0\ntopic_id: " + encode(id[0], id[1]) + "\n").getBytes(StandardCharsets.UTF_8);
    }

    /** Kafka's text form of a UUID: the 16 bytes, base64url without padding. */
    public static String encode(final long msb, final long lsb)
    {
        final ByteBuffer b = ByteBuffer.allocate(16).putLong(msb).putLong(lsb);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(b.array());
    }

    static long[] decode(final String text)
    {
        final ByteBuffer b = ByteBuffer.wrap(Base64.getUrlDecoder().decode(text));
        return new long[] {b.getLong(), b.getLong()};
    }
}
