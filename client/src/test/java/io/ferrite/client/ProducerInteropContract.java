package io.ferrite.client;

import io.ferrite.wire.compress.CompressionType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Records sent by this client to a broker over a socket, read back by kafka-clients' KafkaConsumer
 * byte-exact — keys, null keys and values, headers (a null header value too), timestamps — under every
 * acks setting and every compression; each completion names the offset the consumer reads the record at.
 */
abstract class ProducerInteropContract
{
    private static final int RECORDS = 40;

    /** When the case began (a new instance per case). */
    private final long startMs = System.currentTimeMillis();

    /** The broker's {@code host:port}. */
    abstract String bootstrap();

    /** Creates a topic of one replica and returns once the broker serves it. */
    abstract void createTopic(String name, int partitions) throws Exception;

    static Stream<Arguments> settings()
    {
        final List<Arguments> all = new ArrayList<>();
        for (final int acks : new int[] {0, 1, -1})
        {
            for (final CompressionType c : CompressionType.values())
            {
                all.add(Arguments.of(acks, c));
            }
        }
        return all.stream();
    }

    @ParameterizedTest(name = "acks={0} compression={1}")
    @MethodSource("settings")
    void recordsReadBackByteExactByKafkaConsumer(final int acks, final CompressionType compression) throws Exception
    {
        final String topic = "interop-" + (acks < 0 ? "all" : acks) + "-" + compression.title;
        createTopic(topic, 1);
        final long[] offsets = new long[RECORDS];
        final short[] errors = new short[RECORDS];
        java.util.Arrays.fill(errors, (short)-99);
        final ProducerConfig config = new ProducerConfig().bootstrapServers(bootstrap()).acks(acks)
            .compression(compression).lingerMs(1).batchSize(512);
        try (Producer producer = new Producer(config, (tag, t, partition, offset, error) ->
        {
            offsets[(int)tag] = offset;
            errors[(int)tag] = error;
        }))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            final OutgoingHeaders headers = new OutgoingHeaders();
            for (int i = 0; i < RECORDS; i++)
            {
                final UnsafeBuffer key = new UnsafeBuffer(key(i) == null ? new byte[0] : key(i));
                final UnsafeBuffer value = new UnsafeBuffer(value(i) == null ? new byte[0] : value(i));
                headers.clear();
                if (i % 3 == 0)
                {
                    final UnsafeBuffer hk = new UnsafeBuffer("h".getBytes(StandardCharsets.UTF_8));
                    headers.add(hk, 0, 1, value, 0, value(i) == null ? -1 : value(i).length);
                    headers.add(hk, 0, 1, null, 0, -1);
                }
                assertEquals(0, producer.send(topic, 0, key, 0, key(i) == null ? -1 : key(i).length,
                    value, 0, value(i) == null ? -1 : value(i).length, headers, timestamp(i), i));
            }
            FerriteFixture.drain(producer);
        }
        assertEquals("[0]", java.util.Arrays.toString(distinct(errors)), "the completions' distinct error codes");
        final List<ConsumerRecord<byte[], byte[]>> read = FerriteFixture.read(bootstrap(), topic, 0, RECORDS);
        assertEquals(RECORDS, read.size());
        for (int i = 0; i < RECORDS; i++)
        {
            final ConsumerRecord<byte[], byte[]> r = read.get(i);
            assertEquals(0, errors[i], "record " + i);
            assertEquals(acks == 0 ? -1 : i, offsets[i], "record " + i + "'s offset");
            assertEquals(i, r.offset());
            assertArrayEquals(key(i), r.key(), "key " + i);
            assertArrayEquals(value(i), r.value(), "value " + i);
            assertEquals(timestamp(i), r.timestamp());
            final Header[] hs = r.headers().toArray();
            assertEquals(i % 3 == 0 ? 2 : 0, hs.length);
            if (i % 3 == 0)
            {
                assertEquals("h", hs[0].key());
                assertArrayEquals(value(i), hs[0].value());
                assertNull(hs[1].value());
            }
        }
    }

    private static short[] distinct(final short[] codes)
    {
        final java.util.TreeSet<Short> set = new java.util.TreeSet<>();
        for (final short c : codes)
        {
            set.add(c);
        }
        final short[] out = new short[set.size()];
        int i = 0;
        for (final short c : set)
        {
            out[i++] = c;
        }
        return out;
    }

    private static byte[] key(final int i)
    {
        return i % 4 == 1 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(final int i)
    {
        return i % 5 == 2 ? null : ("value-" + i + "-" + "x".repeat(i * 7)).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Record {@code i}'s timestamp: one second apart, the last a second before the case began. Recent, as the
     * broker's retention judges a segment by its largest record timestamp: with 2023's timestamps Kafka 4.4 rolled
     * and deleted each partition's segment at its first retention pass (its active one too, once below the high
     * watermark), and the consumer read only the records appended after it, though each had been acknowledged.
     */
    private long timestamp(final int i)
    {
        return startMs - (RECORDS - i) * 1_000L;
    }
}
