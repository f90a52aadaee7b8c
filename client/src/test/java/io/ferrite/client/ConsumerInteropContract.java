package io.ferrite.client;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.Record;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@link Consumer} against a broker over a socket (a JUnit test interface: the producer's interop classes run it
 * against Ferrite and Apache Kafka 4.4 beside {@link ProducerInteropContract}): records written by kafka-clients'
 * producer read byte-exact (keys, null keys and values, headers with a null value, timestamps, offsets) under every
 * compression; records written by this client's producer; seeks (into a batch: the records before the offset are
 * skipped), OFFSET_OUT_OF_RANGE under each {@code auto.offset.reset}, and an unknown topic's error; many answers of
 * mixed sizes per partition (pipelined, the receive buffer grown), a seek while a Fetch is in flight, and a
 * transactional producer's control batches skipped.
 */
interface ConsumerInteropContract
{
    int RECORDS = 40;
    long DEADLINE_NS = TimeUnit.SECONDS.toNanos(60);

    /** The broker's {@code host:port}. */
    String bootstrap();

    /** Creates a topic of one replica and returns once the broker serves it. */
    void createTopic(String name, int partitions) throws Exception;

    /** A record read by the consumer, copied out of the flyweight for the assertions. */
    record Read(String topic, int partition, long offset, long timestamp, byte[] key, byte[] value, List<byte[][]> headers)
    {
        static Read of(final String topic, final int partition, final Record r)
        {
            final List<byte[][]> headers = new ArrayList<>();
            while (r.nextHeader())
            {
                headers.add(new byte[][] {bytes(r.buffer(), r.headerKeyOffset(), r.headerKeyLength()),
                    bytes(r.buffer(), r.headerValueOffset(), r.headerValueLength())});
            }
            return new Read(topic, partition, r.offset(), r.timestamp(), bytes(r.buffer(), r.keyOffset(), r.keyLength()),
                bytes(r.buffer(), r.valueOffset(), r.valueLength()), headers);
        }

        private static byte[] bytes(final DirectBuffer b, final int offset, final int length)
        {
            if (length < 0)
            {
                return null;
            }
            final byte[] out = new byte[length];
            b.getBytes(offset, out);
            return out;
        }
    }

    @ParameterizedTest(name = "compression={0}")
    @EnumSource(CompressionType.class)
    default void kafkaProducerRecordsReadByteExact(final CompressionType compression) throws Exception
    {
        final String topic = "consume-kafka-" + compression.title;
        createTopic(topic, 1);
        final long startMs = System.currentTimeMillis();
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(
            "bootstrap.servers", bootstrap(), "compression.type", compression.title, "linger.ms", 5, "batch.size", 1024,
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class)))
        {
            for (int i = 0; i < RECORDS; i++)
            {
                final RecordHeaders headers = new RecordHeaders();
                if (i % 3 == 0)
                {
                    headers.add("h", value(i));
                    headers.add("n", null);
                }
                producer.send(new ProducerRecord<>(topic, 0, timestamp(startMs, i), key(i), value(i), headers));
            }
            producer.flush();
        }
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            final List<Read> read = read(consumer, RECORDS);
            for (int i = 0; i < RECORDS; i++)
            {
                final Read r = read.get(i);
                assertEquals(topic, r.topic());
                assertEquals(0, r.partition());
                assertEquals(i, r.offset(), "offset");
                assertEquals(timestamp(startMs, i), r.timestamp(), "timestamp " + i);
                assertArrayEquals(key(i), r.key(), "key " + i);
                assertArrayEquals(value(i), r.value(), "value " + i);
                assertEquals(i % 3 == 0 ? 2 : 0, r.headers().size(), "headers of " + i);
                if (i % 3 == 0)
                {
                    assertArrayEquals("h".getBytes(StandardCharsets.UTF_8), r.headers().get(0)[0]);
                    assertArrayEquals(value(i), r.headers().get(0)[1]);
                    assertArrayEquals("n".getBytes(StandardCharsets.UTF_8), r.headers().get(1)[0]);
                    assertNull(r.headers().get(1)[1]);
                }
            }
            assertEquals(RECORDS, consumer.position(topic, 0));
        }
    }

    @Test
    default void ferriteProducerRecordsRead() throws Exception
    {
        final String topic = "consume-ferrite";
        createTopic(topic, 2);
        final long startMs = System.currentTimeMillis();
        produce(topic, 2, RECORDS, CompressionType.LZ4, startMs);
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            consumer.assign(topic, 1);
            final List<Read> read = read(consumer, RECORDS);
            final long[] next = new long[2];
            for (final Read r : read)
            {
                assertEquals(next[r.partition()]++, r.offset(), "offsets of partition " + r.partition() + " in order");
                final int i = Integer.parseInt(new String(r.key(), StandardCharsets.UTF_8).substring(4));
                assertEquals(i % 2, r.partition());
                assertArrayEquals(value(i), r.value());
                assertEquals(timestamp(startMs, i), r.timestamp());
            }
            assertEquals(RECORDS / 2, next[0]);
            assertEquals(RECORDS / 2, next[1]);
        }
    }

    @Test
    default void seekIntoABatchAndToBothEnds() throws Exception
    {
        final String topic = "consume-seek";
        createTopic(topic, 1);
        final long startMs = System.currentTimeMillis();
        produce(topic, 1, 20, CompressionType.NONE, startMs); // one batch: the seek lands inside it
        try (Consumer consumer = new Consumer(config()))
        {
            consumer.assign(topic, 0);
            consumer.seek(topic, 0, 7);
            List<Read> read = read(consumer, 13);
            assertEquals(7, read.get(0).offset(), "the first record after a seek to 7");
            assertEquals(19, read.get(12).offset());
            consumer.seekToBeginning(topic, 0);
            read = read(consumer, 20);
            assertEquals(0, read.get(0).offset());
            consumer.seekToEnd(topic, 0);
            awaitPosition(consumer, topic, 20);
            produce(topic, 1, 3, CompressionType.NONE, startMs);
            read = read(consumer, 3);
            assertEquals(20, read.get(0).offset(), "the first record after a seek to the end");
            assertEquals(22, read.get(2).offset());
        }
    }

    @Test
    default void outOfRangeResetsByAutoOffsetReset() throws Exception
    {
        final String topic = "consume-range";
        createTopic(topic, 1);
        produce(topic, 1, 10, CompressionType.NONE, System.currentTimeMillis());
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            consumer.seek(topic, 0, 1_000);
            assertEquals(0, read(consumer, 10).get(0).offset(), "earliest: from the log start");
        }
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.LATEST)))
        {
            consumer.assign(topic, 0);
            awaitPosition(consumer, topic, 10);
            consumer.seek(topic, 0, 1_000);
            awaitPosition(consumer, topic, 10); // latest: the log end, after the out-of-range answer
        }
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.NONE)))
        {
            consumer.assign(topic, 0);
            final ConsumerException none = assertThrows(ConsumerException.class, () -> read(consumer, 1));
            assertEquals(ClientErrors.NO_OFFSET_FOR_PARTITION, none.errorCode(), none.getMessage());
            consumer.seek(topic, 0, 1_000);
            final ConsumerException e = assertThrows(ConsumerException.class, () -> read(consumer, 1));
            assertEquals(ClientErrors.OFFSET_OUT_OF_RANGE, e.errorCode(), e.getMessage());
            assertEquals(topic, e.topic());
            assertTrue(e.getMessage().contains(topic + "-0"), e.getMessage());
            consumer.seek(topic, 0, 4);
            assertEquals(4, read(consumer, 6).get(0).offset(), "a seek starts the partition again");
        }
    }

    /**
     * Thousands of records of mixed sizes in small batches, read with a small {@code max.partition.fetch.bytes}: many
     * answers per partition, pipelined (the next Fetch goes while the last answer is read), some larger than the
     * receive buffer's first 64 KiB (it grows on demand), all read in order, none missing.
     */
    @Test
    default void manyAnswersOfMixedSizesReadInOrder() throws Exception
    {
        final String topic = "consume-many";
        final int perPartition = 1_500;
        createTopic(topic, 2);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class,
            "batch.size", 4096, "linger.ms", 5)))
        {
            final List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < perPartition * 2; i++)
            {
                sent.add(producer.send(new ProducerRecord<>(topic, i % 2, null, sized(i / 2))));
            }
            producer.flush();
            for (int i = 0; i < sent.size(); i++)
            {
                assertEquals(i / 2, sent.get(i).get(30, TimeUnit.SECONDS).offset(), "record " + i + " written");
            }
        }
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)
            .maxPartitionFetchBytes(96 * 1024)))
        {
            consumer.assign(topic, 0);
            consumer.assign(topic, 1);
            final long[] next = new long[2];
            final long deadline = System.nanoTime() + DEADLINE_NS;
            while (next[0] < perPartition || next[1] < perPartition)
            {
                assertTrue(System.nanoTime() - deadline < 0, () -> "all read in time: " + next[0] + ", " + next[1]);
                consumer.doWork();
                consumer.poll((t, p, r) ->
                {
                    assertEquals(next[p], r.offset(), "partition " + p + " in order");
                    assertEquals(sized((int)next[p]).length, r.valueLength(), "the value of offset " + r.offset());
                    assertEquals((byte)next[p], r.buffer().getByte(r.valueOffset() + r.valueLength() - 1));
                    next[p]++;
                }, 1_000);
            }
        }
    }

    /** A seek while a Fetch is in flight: that Fetch's answer (asked at the old offset) is dropped, not handed out. */
    @Test
    default void seekWhileAFetchIsInFlightDropsItsAnswer() throws Exception
    {
        final String topic = "consume-seek-inflight";
        createTopic(topic, 1);
        final long startMs = System.currentTimeMillis();
        produce(topic, 1, 20, CompressionType.NONE, startMs);
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            assertEquals(19, read(consumer, 20).get(19).offset());
            final FetchPosition p = consumer.assignedPosition(topic, 0);
            final long deadline = System.nanoTime() + DEADLINE_NS;
            while (p.fetchNode < 0)
            {
                assertTrue(System.nanoTime() - deadline < 0, "a Fetch at 20 in flight");
                consumer.doWork();
            }
            consumer.seek(topic, 0, 5);
            produce(topic, 1, 3, CompressionType.NONE, startMs); // the Fetch at 20 in flight may answer with these
            final List<Read> read = read(consumer, 18);
            for (int i = 0; i < 18; i++)
            {
                assertEquals(5 + i, read.get(i).offset(), "from the seek on, each once");
            }
            awaitPosition(consumer, topic, 23);
        }
    }

    /**
     * A transactional producer's records (read_uncommitted: the aborted ones too) with the commit and abort markers
     * skipped, the offsets around them as the log has them and the position past the last marker.
     */
    @Test
    default void controlBatchesAreSkipped() throws Exception
    {
        final String topic = "consume-txn";
        createTopic(topic, 1);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class,
            "transactional.id", "consume-txn-" + System.nanoTime())))
        {
            producer.initTransactions();
            for (int t = 0; t < 3; t++)
            {
                producer.beginTransaction();
                for (int i = 0; i < 3; i++)
                {
                    producer.send(new ProducerRecord<>(topic, 0, null, new byte[] {(byte)(t * 3 + i)}));
                }
                producer.flush();
                if (t == 1)
                {
                    producer.abortTransaction();
                }
                else
                {
                    producer.commitTransaction();
                }
            }
        }
        try (Consumer consumer = new Consumer(config().autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST)))
        {
            consumer.assign(topic, 0);
            final List<Read> read = read(consumer, 9);
            final long[] offsets = new long[9];
            for (int i = 0; i < 9; i++)
            {
                offsets[i] = read.get(i).offset();
                assertEquals((byte)i, read.get(i).value()[0], "record " + i + " (read_uncommitted: the aborted too)");
            }
            assertArrayEquals(new long[] {0, 1, 2, 4, 5, 6, 8, 9, 10}, offsets, "a marker after each transaction");
            awaitPosition(consumer, topic, 12);
        }
    }

    private static byte[] sized(final int i)
    {
        final byte[] v = new byte[(i * 37) % 1_500 + 1];
        v[v.length - 1] = (byte)i;
        return v;
    }

    @Test
    default void unknownTopicIsAClearError()
    {
        try (Consumer consumer = new Consumer(config()))
        {
            consumer.assign("consume-no-such-topic", 0);
            final ConsumerException e = assertThrows(ConsumerException.class, () -> read(consumer, 1));
            assertEquals(ClientErrors.UNKNOWN_TOPIC_OR_PARTITION, e.errorCode());
            assertEquals("Topic partition consume-no-such-topic-0 does not exist (UNKNOWN_TOPIC_OR_PARTITION)", e.getMessage());
        }
    }

    private ConsumerConfig config()
    {
        return new ConsumerConfig().bootstrapServers(bootstrap()).fetchMaxWaitMs(100);
    }

    /** Runs the duty cycle and polls until {@code count} records are read (60 s at most), copying each. */
    static List<Read> read(final Consumer consumer, final int count)
    {
        final List<Read> read = new ArrayList<>();
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (read.size() < count)
        {
            assertTrue(System.nanoTime() - deadline < 0, () -> count + " records read in time, " + read.size() + " were");
            consumer.doWork();
            consumer.poll((t, p, r) -> read.add(Read.of(t, p, r)), count - read.size());
        }
        return read;
    }

    /** Runs the duty cycle until the partition 0's position is {@code position}, no record handed out meanwhile. */
    static void awaitPosition(final Consumer consumer, final String topic, final long position)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (consumer.position(topic, 0) != position)
        {
            assertTrue(System.nanoTime() - deadline < 0, () -> "position " + position + ", not " + consumer.position(topic, 0));
            consumer.doWork();
            assertEquals(0, consumer.poll((t, p, r) -> { }, 100), "records read");
        }
    }

    /** {@code count} records with this client's producer, record i to partition i % partitions, in one flush. */
    private void produce(final String topic, final int partitions, final int count, final CompressionType compression,
        final long startMs)
    {
        final short[] errors = new short[count];
        try (Producer producer = new Producer(new ProducerConfig().bootstrapServers(bootstrap()).compression(compression)
            .lingerMs(60_000), (tag, t, partition, offset, error) -> errors[(int)tag] = error))
        {
            assertEquals(partitions, producer.awaitPartitions(topic, 30_000));
            for (int i = 0; i < count; i++)
            {
                final byte[] k = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                final byte[] v = value(i) == null ? new byte[0] : value(i);
                assertEquals(i % partitions, producer.send(topic, i % partitions, new UnsafeBuffer(k), 0, k.length,
                    new UnsafeBuffer(v), 0, value(i) == null ? -1 : v.length, null, timestamp(startMs, i), i));
            }
            FerriteFixture.drain(producer);
        }
        for (int i = 0; i < count; i++)
        {
            assertEquals(0, errors[i], "record " + i + " produced");
        }
    }

    private static byte[] key(final int i)
    {
        return i % 4 == 1 ? null : ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] value(final int i)
    {
        return i % 5 == 2 ? null : ("value-" + i + "-" + "x".repeat(i * 7)).getBytes(StandardCharsets.UTF_8);
    }

    /** Recent timestamps, as {@link ProducerInteropContract} explains (Kafka's retention judges a segment by them). */
    private static long timestamp(final long startMs, final int i)
    {
        return startMs - (RECORDS - i) * 1_000L;
    }
}
