package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult.ListOffsetsResultInfo;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ListOffsets over a batch damaged at rest, as {@code perf/bin/damage-at-rest} damages it (its rows flip-value-old,
 * flip-value-active and flip-length-old after a clean stop): batches of 16 records of 1 000 bytes, segments of 1 MiB, the
 * broker stopped cleanly, one bit flipped in batch 5 of an older or of the active segment, the broker started again on
 * the files and asked through kafka-clients' Admin and consumer. Kafka 4.4 reads a batch's records for a timestamp
 * without its CRC ({@code FileRecords.searchForTimestamp}), so a flipped value bit leaves every record of the batch
 * found by its own timestamp, and the consumer that seeks there meets the damage through its CRC check; Ferrite answers
 * the same. A batch length damaged to about 1 GiB ends Kafka's walk there (no offset, though a fetch past it is served);
 * Ferrite answers the batch its reads go on at. EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL and LATEST_TIERED are
 * answered as Kafka answers them over the same damage: from the offsets and the max-timestamp batch, which is whole.
 */
class DamagedBatchListOffsetsTest
{
    private static final String TOPIC = "damage";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final int PER_BATCH = 16;
    private static final int BATCHES = 150; // two full segments of ~64 batches, and the active one
    private static final int RECORDS = PER_BATCH * BATCHES;
    private static final int VALUE = 1000;
    private static final long STEP_MS = 10;
    /** Byte 100 of a batch's records: inside its first record's value (the record's fields before it take 8 bytes). */
    private static final int FIRST_VALUE_BYTE = 61 + 100;

    @TempDir
    Path dir;

    private final long t0 = System.currentTimeMillis() - 3_600_000;

    private long timestamp(final long offset)
    {
        return t0 + offset * STEP_MS;
    }

    enum Where
    {
        OLDER_SEGMENT, ACTIVE_SEGMENT
    }

    @ParameterizedTest
    @EnumSource(Where.class)
    void aRecordOfABatchWhoseValueBitFlippedIsFoundByItsTimestampAsKafkaFindsIt(final Where where) throws Exception
    {
        try (RunningBroker broker = filled())
        {
            final long damaged = damageBatch5(broker, where == Where.OLDER_SEGMENT ? 1 : -1, FIRST_VALUE_BYTE, 0x10);
            try (Admin admin = broker.admin())
            {
                for (final int k : new int[] {0, 1, PER_BATCH - 1})
                {
                    final ListOffsetsResultInfo found = byTimestamp(admin, timestamp(damaged + k));
                    assertEquals(damaged + k, found.offset(), "record " + k + " of the damaged batch, by its own timestamp");
                    assertEquals(timestamp(damaged + k), found.timestamp());
                }
                assertEquals(damaged, byTimestamp(admin, timestamp(damaged) - STEP_MS / 2).offset(),
                    "a timestamp between the batch before and the damaged one");
                assertEquals(damaged + PER_BATCH, byTimestamp(admin, timestamp(damaged + PER_BATCH)).offset(), "the batch after it");
                theSpecialTimestampsAsKafka(admin);
            }
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                final OffsetAndTimestamp at = consumer.offsetsForTimes(Map.of(TP, timestamp(damaged)), Duration.ofSeconds(20)).get(TP);
                assertNotNull(at, "an offset for the damaged batch's timestamp");
                assertEquals(damaged, at.offset());
                assertEquals(timestamp(damaged), at.timestamp());
                assertEquals(0L, consumer.beginningOffsets(List.of(TP), Duration.ofSeconds(20)).get(TP));
                assertEquals((long)RECORDS, consumer.endOffsets(List.of(TP), Duration.ofSeconds(20)).get(TP));
                // the consumer that seeks to the answer meets the damage there, through its CRC check, as against Kafka
                consumer.assign(List.of(TP));
                consumer.seek(TP, at.offset());
                final String crc = crcErrorOnPoll(consumer);
                assertTrue(crc.contains("Record batch for partition " + TP + " at offset " + damaged + " is invalid"), crc);
            }
        }
    }

    /** Damage to batch 5's frame: the damage-at-rest rows flip-length-old and zero-page-old. */
    enum Frame
    {
        /** Bit 0x40 of the batch length's high byte: a frame of about 1 GiB, running past the segment (Kafka: no offset). */
        LENGTH,
        /** The 4 KiB page holding the batch's start zeroed, and with it the last records of batch 4 (Kafka: CORRUPT_MESSAGE). */
        ZERO_PAGE
    }

    @ParameterizedTest
    @EnumSource(Frame.class)
    void aTimestampInABatchWhoseFrameWasDamagedFindsTheBatchAFetchGoesOnAt(final Frame how) throws Exception
    {
        try (RunningBroker broker = filled())
        {
            final long damaged = how == Frame.LENGTH ? damageBatch5(broker, 1, 8, 0x40) : zeroThePageOfBatch5(broker);
            final long next = damaged + PER_BATCH;
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(TP));
                consumer.seek(TP, damaged);
                final List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
                await(() ->
                {
                    consumer.poll(Duration.ofMillis(200)).forEach(got::add);
                    return !got.isEmpty();
                }, Duration.ofSeconds(30), "a record after the damaged batch");
                assertEquals(next, got.get(0).offset(), "a fetch at the damaged batch goes on at the next one");
                assertArrayEquals(value(next), got.get(0).value());

                final OffsetAndTimestamp at = consumer.offsetsForTimes(Map.of(TP, timestamp(damaged)), Duration.ofSeconds(20)).get(TP);
                assertNotNull(at, "an offset for a timestamp of the damaged batch");
                assertEquals(next, at.offset(), "the first record a fetch serves at or after the timestamp");
                assertEquals(timestamp(next), at.timestamp());
            }
            try (Admin admin = broker.admin())
            {
                assertEquals(next, byTimestamp(admin, timestamp(damaged + PER_BATCH - 1)).offset());
                assertEquals(next + 1, byTimestamp(admin, timestamp(next + 1)).offset());
                // batch 4: whole when its successor's length was damaged; its last records zeroed with the page, which
                // pass it over from there on (its first records, before the page, are still found)
                assertEquals(how == Frame.LENGTH ? damaged - 1 : next, byTimestamp(admin, timestamp(damaged - 1)).offset(), "batch 4's last");
                assertEquals(damaged - PER_BATCH, byTimestamp(admin, timestamp(damaged - PER_BATCH)).offset(), "batch 4's first");
                theSpecialTimestampsAsKafka(admin);
            }
        }
    }

    /** The other specs over the damage: from the offsets, and the max-timestamp batch (the last, whole), as Kafka. */
    private void theSpecialTimestampsAsKafka(final Admin admin) throws Exception
    {
        assertEquals(0, list(admin, OffsetSpec.earliest()).offset(), "EARLIEST");
        assertEquals(RECORDS, list(admin, OffsetSpec.latest()).offset(), "LATEST");
        final ListOffsetsResultInfo max = list(admin, OffsetSpec.maxTimestamp());
        assertEquals(RECORDS - 1, max.offset(), "MAX_TIMESTAMP");
        assertEquals(timestamp(RECORDS - 1), max.timestamp());
        assertEquals(0, list(admin, OffsetSpec.earliestLocal()).offset(), "EARLIEST_LOCAL");
        // Kafka 4.4 without tiered storage: offset -1 (and leader epoch -1)
        assertEquals(-1, list(admin, OffsetSpec.latestTiered()).offset(), "LATEST_TIERED");
    }

    /** A broker with {@value #RECORDS} records in batches of {@value #PER_BATCH} (value i at offset i), stopped cleanly. */
    private RunningBroker filled() throws Exception
    {
        final RunningBroker broker = new RunningBroker(dir, Map.of());
        try (Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                .all().get(20, TimeUnit.SECONDS);
        }
        // a batch per flush: 16 records of ~1 KB fit in one 32 KiB batch, and the linger never ends one early
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 10_000,
            ProducerConfig.BATCH_SIZE_CONFIG, 32 * 1024, ProducerConfig.ACKS_CONFIG, "all", ProducerConfig.COMPRESSION_TYPE_CONFIG, "none")))
        {
            for (int b = 0; b < BATCHES; b++)
            {
                final List<Future<RecordMetadata>> sent = new ArrayList<>();
                for (int k = 0; k < PER_BATCH; k++)
                {
                    final int offset = b * PER_BATCH + k;
                    sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, timestamp(offset), null, value(offset))));
                }
                producer.flush();
                for (int k = 0; k < PER_BATCH; k++)
                {
                    assertEquals(b * PER_BATCH + k, sent.get(k).get(20, TimeUnit.SECONDS).offset());
                }
            }
        }
        broker.broker.close();
        return broker;
    }

    /**
     * Flips {@code mask} in byte {@code at} of batch 5 of segment {@code segment} (-1: the active one) of the stopped
     * broker's partition, starts the broker again; returns the batch's base offset.
     */
    private long damageBatch5(final RunningBroker broker, final int segment, final int at, final int mask) throws Exception
    {
        final List<Path> logs = logs();
        final Path log = logs.get(segment < 0 ? logs.size() - 1 : segment);
        final long[] batch5 = batch5(log);
        try (RandomAccessFile raf = new RandomAccessFile(log.toFile(), "rw"))
        {
            raf.seek(batch5[1] + at);
            final int b = raf.read();
            raf.seek(batch5[1] + at);
            raf.write(b ^ mask);
        }
        broker.start();
        return batch5[2];
    }

    /**
     * Zeroes the 4 KiB page of the second segment that holds batch 5's start (as damage-at-rest's zero-page-old: a lost
     * page write) — the last records of batch 4 with it, its first records before the page — starts the broker again;
     * returns batch 5's base offset.
     */
    private long zeroThePageOfBatch5(final RunningBroker broker) throws Exception
    {
        final Path log = logs().get(1);
        final long[] batch5 = batch5(log);
        final long page = batch5[1] / 4096 * 4096;
        assertTrue(page > batch5[0] + 61 + 2 * VALUE && page < batch5[1], "the page cuts batch 4 after its first records");
        try (RandomAccessFile raf = new RandomAccessFile(log.toFile(), "rw"))
        {
            raf.seek(page);
            raf.write(new byte[4096]);
        }
        broker.start();
        return batch5[2];
    }

    /** The partition's segments, oldest first: three of them. */
    private List<Path> logs() throws Exception
    {
        try (Stream<Path> files = Files.list(dir.resolve(TOPIC + "-0")))
        {
            final List<Path> logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
            assertEquals(3, logs.size(), "segments: " + logs);
            return logs;
        }
    }

    /** Batch 4's position, batch 5's position and base offset in {@code log}; batch 5 checked to hold {@value #PER_BATCH} records. */
    private static long[] batch5(final Path log) throws Exception
    {
        try (FileChannel ch = FileChannel.open(log, StandardOpenOption.READ))
        {
            final ByteBuffer header = ByteBuffer.allocate(61);
            long p = 0;
            long before = 0;
            for (int i = 0; i < 4; i++)
            {
                header.clear();
                ch.read(header, p);
                before = p;
                p += 12 + header.getInt(8);
            }
            header.clear();
            ch.read(header, p);
            assertEquals(PER_BATCH - 1, header.getInt(23), "batch 5's last offset delta");
            return new long[] {before, p, header.getLong(0)};
        }
    }

    /** Polls until the consumer raises its CRC error; its batch-invalid message. */
    private static String crcErrorOnPoll(final KafkaConsumer<byte[], byte[]> consumer)
    {
        final String[] message = new String[1];
        await(() ->
        {
            try
            {
                final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                assertTrue(records.isEmpty(), "no record before the damaged batch's CRC error");
                return false;
            }
            catch (final KafkaException ex)
            {
                for (Throwable t = ex; t != null; t = t.getCause())
                {
                    if (t.getMessage() != null && t.getMessage().startsWith("Record batch for partition"))
                    {
                        message[0] = t.getMessage();
                    }
                }
                assertNotNull(message[0], "the client's CRC error: " + ex);
                return true;
            }
        }, Duration.ofSeconds(30), "the client's CRC error");
        return message[0];
    }

    private static ListOffsetsResultInfo byTimestamp(final Admin admin, final long timestamp) throws Exception
    {
        return list(admin, OffsetSpec.forTimestamp(timestamp));
    }

    private static ListOffsetsResultInfo list(final Admin admin, final OffsetSpec spec) throws Exception
    {
        return admin.listOffsets(Map.of(TP, spec)).partitionResult(TP).get(20, TimeUnit.SECONDS);
    }

    /** 1 000 bytes particular to {@code offset}. */
    private static byte[] value(final long offset)
    {
        final byte[] v = new byte[VALUE];
        for (int i = 0; i < v.length; i++)
        {
            v[i] = (byte)(offset * 7 + i);
        }
        return v;
    }
}
