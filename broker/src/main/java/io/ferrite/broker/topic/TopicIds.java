package io.ferrite.broker.topic;

import io.ferrite.broker.StartupException;
import io.ferrite.log.config.DurableFile;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

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

    /**
     * The id a partition directory's {@code partition.metadata} holds, or null (no such file, or no id in it). A file
     * that cannot be read as one (not UTF-8 text, a {@code topic_id} that is not 16 bytes of base64url) refuses the start
     * with one line naming it, as Kafka 4.4 refuses it ("Error while reading partition metadata file ...").
     */
    static long[] read(final Path partitionDir) throws IOException
    {
        final Path file = partitionDir.resolve(PARTITION_METADATA);
        if (!Files.exists(file))
        {
            return null;
        }
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(file);
        }
        catch (final IOException ex)
        {
            throw new StartupException(file + " is not a valid partition.metadata: " + StartupException.reason(ex), ex);
        }
        for (final String line : lines)
        {
            if (line.startsWith("topic_id:"))
            {
                final String id = line.substring("topic_id:".length()).trim();
                final byte[] bytes;
                try
                {
                    bytes = Base64.getUrlDecoder().decode(id);
                }
                catch (final IllegalArgumentException ex)
                {
                    throw new StartupException(notATopicId(file, id), ex);
                }
                if (bytes.length != 16)
                {
                    throw new StartupException(notATopicId(file, id));
                }
                return decode(id);
            }
        }
        return null;
    }

    private static String notATopicId(final Path file, final String id)
    {
        return file + " is not a valid partition.metadata: topic_id '" + id + "' is not a topic id (16 bytes in base64url)";
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
