package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 11's bit flip in an older segment after an unclean stop, as a client meets it. The recovery scan starts at the
 * recovery point and never sees the flip; a fetch ships the batch's bytes as they are on disk (zero copy, as Kafka 4.4,
 * which checks no CRC on fetch either), and kafka-clients' CRC check ({@code check.crcs}, on by default) is what catches
 * it. What a consumer reading from offset 0 gets: every record before the damaged batch, then the client's CRC error at
 * that batch's offset (its {@code CorruptRecordException}'s message in a {@code KafkaException}); a seek past it reads
 * every later record; the partition next to it is served whole. A ListOffsets by timestamp that lands on the damaged
 * batch answers it, as Kafka 4.4 does (its {@code FileRecords.searchForTimestamp} reads the records without a CRC
 * check; the flip is in a value, the timestamps hold): the consumer that seeks there meets the damage, as above.
 */
class FlippedBitFetchTest
{
    private static final int RECORDS = 400;
    private static final int OTHER_RECORDS = 50;
    private static final int VALUE = 10 * 1024;
    private static final long STEP_MS = 10;

    @TempDir
    Path dir;

    @Test
    void aConsumerGetsTheRecordsBeforeAFlippedBatchThenTheClientsCrcErrorAndReadsOnPastIt() throws Exception
    {
        final String topic = "flip";
        final long t0 = System.currentTimeMillis() - 60_000;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(topic, 2, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                    .all().get(20, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
            {
                // one record a batch: a batch's base offset is its record's offset
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(topic, 0, t0 + i * STEP_MS, ("k" + i).getBytes(), value(i))).get(20, TimeUnit.SECONDS);
                }
                for (int i = 0; i < OTHER_RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(topic, 1, t0 + i * STEP_MS, ("k" + i).getBytes(), value(i))).get(20, TimeUnit.SECONDS);
                }
            }
            broker.broker.close();
            // the stop made unclean: without the marker the next start recovers from the recovery point checkpoint
            Files.delete(dir.resolve(".kafka_cleanshutdown"));

            final List<Path> logs;
            try (Stream<Path> files = Files.list(dir.resolve(topic + "-0")))
            {
                logs = files.filter(p -> p.toString().endsWith(".log")).sorted().toList();
            }
            assertTrue(logs.size() >= 3, "segments: " + logs.size());
            final long damaged = flipAByteInTheValueOfTheMiddleBatch(logs.get(1));
            assertTrue(damaged > 0 && damaged < RECORDS - 1, "damaged batch at " + damaged);
            broker.start();

            final TopicPartition tp = new TopicPartition(topic, 0);
            final List<Long> before = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(tp));
                consumer.seekToBeginning(List.of(tp));
                final KafkaException[] error = new KafkaException[1];
                await(() ->
                {
                    try
                    {
                        for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                        {
                            assertArrayEquals(value((int)r.offset()), r.value(), "record " + r.offset());
                            before.add(r.offset());
                        }
                        return false;
                    }
                    catch (final KafkaException ex)
                    {
                        error[0] = ex;
                        return true;
                    }
                }, Duration.ofSeconds(60), () -> "the client's CRC error (read up to " + before.size() + ")");
                assertEquals(damaged, before.size(), "every record before the damaged batch, and none of it: " + error[0]);
                for (int i = 0; i < before.size(); i++)
                {
                    assertEquals(i, before.get(i), "the records before the damaged batch in order");
                }
                // kafka-clients 4.4: "Received exception when fetching the next record from flip-0. If needed, please seek
                // past the record ...", caused by its CorruptRecordException's message put in a KafkaException
                final String crc = batchInvalid(error[0]);
                assertNotNull(crc, "the client's CRC check: " + error[0]);
                assertTrue(crc.contains("Record batch for partition " + tp + " at offset " + damaged + " is invalid")
                    && crc.contains("Record is corrupt (stored crc = "), crc);
                assertEquals(damaged, consumer.position(tp), "the consumer stays at the damaged batch");

                consumer.seek(tp, damaged + 1);
                final List<Long> after = readToTheEnd(consumer, tp, RECORDS);
                assertEquals(RECORDS - damaged - 1, after.size(), "every record after the damaged batch");
                assertEquals(damaged + 1, after.get(0));
            }

            final TopicPartition other = new TopicPartition(topic, 1);
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(other));
                consumer.seekToBeginning(List.of(other));
                final List<Long> offsets = readToTheEnd(consumer, other, OTHER_RECORDS);
                assertEquals(OTHER_RECORDS, offsets.size(), "the other partition whole");
            }

            try (Admin admin = broker.admin())
            {
                assertEquals(damaged - 1, offsetForTime(admin, tp, t0 + (damaged - 1) * STEP_MS), "a timestamp before the damage");
                // the damaged batch's header and its record's timestamp are intact, its CRC fails: answered, as Kafka
                assertEquals(damaged, offsetForTime(admin, tp, t0 + damaged * STEP_MS), "the damaged batch's timestamp");
                assertEquals(damaged, offsetForTime(admin, tp, t0 + damaged * STEP_MS - STEP_MS / 2),
                    "a timestamp between the batch before and the damaged one");
                assertEquals(damaged + 1, offsetForTime(admin, tp, t0 + (damaged + 1) * STEP_MS), "the batch after it");
                assertEquals(damaged + 2, offsetForTime(admin, tp, t0 + (damaged + 2) * STEP_MS), "a timestamp after it");
            }
        }
    }

    /** Polls {@code consumer} (assigned {@code tp} alone) until its position is {@code end}: the offsets it got, each value checked. */
    private static List<Long> readToTheEnd(final KafkaConsumer<byte[], byte[]> consumer, final TopicPartition tp, final long end)
    {
        final List<Long> offsets = new ArrayList<>();
        await(() ->
        {
            for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
            {
                assertArrayEquals(value((int)r.offset()), r.value(), "record " + r.offset());
                offsets.add(r.offset());
            }
            return consumer.position(tp) >= end;
        }, Duration.ofSeconds(60), () -> tp + " to offset " + end + " (" + offsets.size() + " records read)");
        return offsets;
    }

    /** A distinct value per offset, so a record the client hands over is checked byte for byte. */
    private static byte[] value(final int offset)
    {
        final byte[] v = new byte[VALUE];
        for (int i = 0; i < v.length; i++)
        {
            v[i] = (byte)(offset + i);
        }
        return v;
    }

    /** Flips one bit in the middle of the value of the batch half-way through {@code log}; returns its base offset. */
    private static long flipAByteInTheValueOfTheMiddleBatch(final Path log) throws Exception
    {
        try (RandomAccessFile raf = new RandomAccessFile(log.toFile(), "rw"))
        {
            final ByteBuffer header = ByteBuffer.allocate(12);
            long p = 0;
            while (true)
            {
                header.clear();
                raf.getChannel().read(header, p);
                final int length = header.getInt(8);
                if (p >= raf.length() / 2)
                {
                    // the value is the batch's last VALUE bytes but the record's header count (a varint 0) at its end
                    final long at = p + 12 + length - VALUE / 2;
                    raf.seek(at);
                    final int b = raf.read();
                    raf.seek(at);
                    raf.write(b ^ 0x10);
                    return header.getLong(0);
                }
                p += 12 + length;
            }
        }
    }

    private static long offsetForTime(final Admin admin, final TopicPartition tp, final long timestamp) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(timestamp))).partitionResult(tp).get(20, TimeUnit.SECONDS).offset();
    }

    /** The message in {@code error}'s cause chain that says a batch is invalid, or null. */
    private static String batchInvalid(final Throwable error)
    {
        for (Throwable t = error; t != null; t = t.getCause())
        {
            if (t.getMessage() != null && t.getMessage().startsWith("Record batch for partition"))
            {
                return t.getMessage();
            }
        }
        return null;
    }
}
