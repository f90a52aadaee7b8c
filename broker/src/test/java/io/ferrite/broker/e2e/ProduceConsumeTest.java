package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * kafka-clients' producer and consumer against a running Ferrite: every acks setting with every
 * compression, records read back byte-exact (keys, values, null values, headers, timestamps) in the
 * order they were sent per partition, keyed records where the default partitioner (murmur2) puts them.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ProduceConsumeTest
{
    private static final int PARTITIONS = 3;
    private static final int RECORDS = 300;

    @TempDir
    static Path dir;

    private RunningBroker broker;
    private Admin admin;

    @BeforeAll
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of());
        admin = broker.admin();
    }

    @AfterAll
    void stop() throws Exception
    {
        admin.close();
        broker.close();
    }

    static Stream<Arguments> acksAndCompression()
    {
        final List<Arguments> list = new ArrayList<>();
        for (final String acks : List.of("0", "1", "all"))
        {
            for (final String compression : List.of("none", "gzip", "snappy", "lz4", "zstd"))
            {
                list.add(Arguments.of(acks, compression));
            }
        }
        return list.stream();
    }

    /** What was sent, for comparison. */
    private record Sent(byte[] key, byte[] value, long timestamp, Header[] headers)
    {
    }

    @ParameterizedTest(name = "acks={0} compression={1}")
    @MethodSource("acksAndCompression")
    void recordsComeBackByteExactWherePartitionerPutsThem(final String acks, final String compression) throws Exception
    {
        final String topic = "t-" + acks + "-" + compression;
        admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short)1))).all().get(20, TimeUnit.SECONDS);
        final Random random = new Random(acks.hashCode() * 31L + compression.hashCode());
        final List<List<Sent>> expected = new ArrayList<>();
        for (int p = 0; p < PARTITIONS; p++)
        {
            expected.add(new ArrayList<>());
        }
        final long base = System.currentTimeMillis() - 60_000;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, acks,
            ProducerConfig.COMPRESSION_TYPE_CONFIG, compression, ProducerConfig.LINGER_MS_CONFIG, 5,
            ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, acks.equals("all"))))
        {
            final List<Future<RecordMetadata>> futures = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
            {
                final byte[] key = i % 10 == 9 ? null : ("key-" + random.nextInt(40)).getBytes(StandardCharsets.UTF_8);
                final byte[] value = i % 7 == 3 ? null : bytes(random, random.nextInt(2_000));
                final Header[] headers = i % 3 == 0 ? new Header[0] : new Header[] {
                    new RecordHeader("h" + i, bytes(random, random.nextInt(20))), new RecordHeader("empty", (byte[])null)};
                final long timestamp = base + i;
                // keyless records are spread by the client's sticky partitioner: pin them so the
                // expected order per partition is known
                final Integer partition = key == null ? i % PARTITIONS : null;
                futures.add(producer.send(new ProducerRecord<>(topic, partition, timestamp, key, value, List.of(headers))));
                final int expectedPartition = key == null ? i % PARTITIONS : Utils.toPositive(Utils.murmur2(key)) % PARTITIONS;
                expected.get(expectedPartition).add(new Sent(key, value, timestamp, headers));
            }
            producer.flush();
            for (int i = 0; i < futures.size(); i++)
            {
                final RecordMetadata metadata = futures.get(i).get(20, TimeUnit.SECONDS);
                if (!acks.equals("0"))
                {
                    assertTrue(metadata.offset() >= 0, "record " + i + " acknowledged with an offset");
                }
            }
        }

        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            final List<TopicPartition> partitions = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                partitions.add(new TopicPartition(topic, p));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            final List<List<ConsumerRecord<byte[], byte[]>>> got = new ArrayList<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                got.add(new ArrayList<>());
            }
            int total = 0;
            for (final ConsumerRecord<byte[], byte[]> r : Polling.pollCount(consumer, RECORDS))
            {
                got.get(r.partition()).add(r);
                total++;
            }
            assertEquals(RECORDS, total, "records consumed");
            for (int p = 0; p < PARTITIONS; p++)
            {
                final List<Sent> want = expected.get(p);
                final List<ConsumerRecord<byte[], byte[]>> have = got.get(p);
                assertEquals(want.size(), have.size(), "records in partition " + p);
                for (int i = 0; i < want.size(); i++)
                {
                    final Sent s = want.get(i);
                    final ConsumerRecord<byte[], byte[]> r = have.get(i);
                    final String where = topic + "-" + p + " record " + i;
                    assertEquals(i, r.offset(), where);
                    assertArrayEquals(s.key(), r.key(), where + " key");
                    assertArrayEquals(s.value(), r.value(), where + " value");
                    assertEquals(s.timestamp(), r.timestamp(), where + " timestamp");
                    assertEquals(TimestampType.CREATE_TIME, r.timestampType(), where);
                    final Header[] headers = r.headers().toArray();
                    assertEquals(s.headers().length, headers.length, where + " headers");
                    for (int h = 0; h < headers.length; h++)
                    {
                        assertEquals(s.headers()[h].key(), headers[h].key(), where);
                        assertArrayEquals(s.headers()[h].value(), headers[h].value(), where);
                    }
                }
            }
        }
    }

    static byte[] bytes(final Random random, final int length)
    {
        final byte[] b = new byte[length];
        random.nextBytes(b);
        return b;
    }
}
