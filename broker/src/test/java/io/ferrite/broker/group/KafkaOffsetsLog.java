package io.ferrite.broker.group;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.MessageUtil;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;

import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * For tests: a {@code __consumer_offsets} partition as Kafka 4.4 writes it, its keys and values made by
 * Kafka's own serializers (kafka-group-coordinator's generated record classes, through
 * {@code MessageUtil}), the records written as v2 batches (one, unless {@link #batch} or {@link #garbledBatch} closed some) into the segment file
 * {@code __consumer_offsets-0/00000000000000000000.log} of a log dir, as Kafka leaves it.
 *
 * <p>kafka-group-coordinator is kept off the broker's test class path (see the pom: the jars beside
 * it there are the configs tool's, {@code target/configs-tool.classpath}); its classes are loaded
 * here from that list, over the test class path (kafka-clients), and their setters called by name.
 */
final class KafkaOffsetsLog
{
    private static final String GENERATED = "org.apache.kafka.coordinator.group.generated.";
    private static ClassLoader loader;

    private final List<SimpleRecord> records = new ArrayList<>();
    /** The batches closed so far ({@link #batch}, {@link #garbledBatch}), in order; the records added after them are one more batch. */
    private final List<java.nio.ByteBuffer> batches = new ArrayList<>();
    private int closed;

    /** A Kafka record class ({@code OffsetCommitValue}, ...) with {@code setters}: name, value, name, value... */
    static ApiMessage message(final String className, final Object... setters)
    {
        try
        {
            final Object m = load(className).getConstructor().newInstance();
            for (int i = 0; i < setters.length; i += 2)
            {
                final String setter = "set" + setters[i];
                final Method method = setterOf(m.getClass(), setter);
                method.invoke(m, setters[i + 1]);
            }
            return (ApiMessage)m;
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new IllegalStateException(className, ex);
        }
    }

    /** A Kafka class of kafka-group-coordinator by its simple name in the generated package. */
    static Class<?> load(final String className) throws ClassNotFoundException
    {
        return Class.forName(GENERATED + className, true, loader());
    }

    /** A key as Kafka writes it: its record type (the message's "apiKey"), then the key at version 0. */
    static byte[] key(final ApiMessage key)
    {
        return MessageUtil.toCoordinatorTypePrefixedBytes(key);
    }

    /** A value as Kafka writes it: its version, then the value at that version. */
    static byte[] value(final ApiMessage value, final int version)
    {
        return MessageUtil.toVersionPrefixedBytes((short)version, value);
    }

    KafkaOffsetsLog add(final byte[] key, final byte[] value)
    {
        records.add(new SimpleRecord(System.currentTimeMillis(), key, value));
        return this;
    }

    /** The offset the next record added gets. */
    int next()
    {
        return closed + records.size();
    }

    /**
     * Closes the records added since the last batch into one gzip batch whose compressed bytes are
     * garbled (its CRC recomputed, so that the log takes it): a batch whose records do not decompress.
     * Returns its base offset.
     */
    long garbledBatch()
    {
        final int base = closed;
        final java.nio.ByteBuffer batch = MemoryRecords.withRecords(base, Compression.gzip().build(), records.toArray(new SimpleRecord[0]))
            .buffer();
        final int recordsAt = 61; // a v2 batch's header: the compressed records start here
        for (int i = recordsAt; i < Math.min(batch.limit(), recordsAt + 16); i++)
        {
            batch.put(i, (byte)~batch.get(i));
        }
        final java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(batch.duplicate().position(21)); // the CRC covers the batch from its attributes on
        batch.putInt(17, (int)crc.getValue());
        batches.add(batch);
        closed += records.size();
        records.clear();
        return base;
    }

    /** Closes the records added since the last batch into one uncompressed batch. */
    KafkaOffsetsLog batch()
    {
        flush(Compression.NONE);
        return this;
    }

    private void flush(final Compression compression)
    {
        if (!records.isEmpty())
        {
            batches.add(MemoryRecords.withRecords(closed, compression, records.toArray(new SimpleRecord[0])).buffer());
            closed += records.size();
            records.clear();
        }
    }

    /** Writes the records, from offset 0, into {@code logDir}'s {@code __consumer_offsets-0}. */
    void writeTo(final Path logDir) throws IOException
    {
        final Path partition = Files.createDirectories(logDir.resolve(GroupCoordinator.OFFSETS_TOPIC + "-0"));
        flush(Compression.NONE);
        try (FileChannel ch = FileChannel.open(partition.resolve("00000000000000000000.log"), StandardOpenOption.CREATE_NEW,
            StandardOpenOption.WRITE))
        {
            for (final java.nio.ByteBuffer bytes : batches)
            {
                while (bytes.hasRemaining())
                {
                    ch.write(bytes);
                }
            }
        }
    }

    private static Method setterOf(final Class<?> type, final String name)
    {
        for (final Method m : type.getMethods())
        {
            if (m.getName().equals(name) && m.getParameterCount() == 1)
            {
                return m;
            }
        }
        throw new IllegalArgumentException(type.getSimpleName() + " has no " + name);
    }

    private static synchronized ClassLoader loader()
    {
        if (loader == null)
        {
            try
            {
                final List<URL> urls = new ArrayList<>();
                for (final String jar : Files.readString(Path.of("target/configs-tool.classpath")).trim().split(java.io.File.pathSeparator))
                {
                    if (jar.contains("kafka-group-coordinator"))
                    {
                        urls.add(Path.of(jar).toUri().toURL());
                    }
                }
                loader = new URLClassLoader(urls.toArray(new URL[0]), KafkaOffsetsLog.class.getClassLoader());
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("target/configs-tool.classpath (written by the build)", ex);
            }
        }
        return loader;
    }
}
