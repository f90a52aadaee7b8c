package io.ferrite.broker.e2e;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.KafkaStorageException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker on a real full disk (a 6 MiB tmpfs; mounting it needs root, which CI has): a producer
 * gets Kafka's KAFKA_STORAGE_ERROR, the broker keeps serving reads and offset commits answer (an
 * error or success, never a hang), nothing acknowledged is lost, produce works again once space is
 * freed, and the broker restarts on a full disk with every acknowledged record and the last
 * acknowledged commit. (Kafka takes the log directory offline instead, and with its only one the
 * broker stops: here the disk comes back without a restart.)
 */
class DiskFullBrokerTest
{
    private static final TopicPartition TP = new TopicPartition("full", 0);

    @TempDir
    Path temp;

    private Path mount;

    @BeforeEach
    void mountTmpfs() throws Exception
    {
        mount = temp.resolve("small-disk");
        Files.createDirectories(mount);
        final Process p = new ProcessBuilder("mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", mount.toString())
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        Assumptions.assumeTrue(p.waitFor() == 0, "mounting a 6 MiB tmpfs needs root (CI runs as root): " + out);
    }

    @AfterEach
    void unmount() throws Exception
    {
        new ProcessBuilder("umount", "-l", mount.toString()).start().waitFor();
    }

    @Test
    void aFullDiskIsKafkasStorageErrorAndTheBrokerKeepsServingAndRecovers() throws Exception
    {
        final Path data = mount.resolve("data");
        final Path filler = mount.resolve("filler");
        try (RunningBroker broker = new RunningBroker(data, Map.of("offsets.topic.num.partitions", "1")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TP.topic(), 1, (short)1).configs(Map.of("segment.bytes", "1048576"))))
                    .all().get();
            }
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of("group.id", "g")))
            {
                consumer.assign(List.of(TP));
                consumer.commitSync(Map.of(TP, new OffsetAndMetadata(0))); // __consumer_offsets exists before the disk fills
            }
            fill(filler, 2L * 1024 * 1024); // freed later: the space that comes back
            final List<String> acknowledged = new ArrayList<>();
            final Throwable refused;
            try (KafkaProducer<byte[], byte[]> producer = producer(broker))
            {
                refused = produceUntilRefused(producer, acknowledged);
            }
            System.out.println(acknowledged.size() + " records acknowledged before the disk was full; then: " + refused);
            assertInstanceOf(KafkaStorageException.class, refused, "what a full disk answers a produce");
            assertTrue(acknowledged.size() > 100, "the disk took " + acknowledged.size() + " records first");

            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of("group.id", "g")))
            {
                assertEquals(acknowledged, readAll(consumer, acknowledged.size()), "reads are served on a full disk");
                commitQuietly(consumer, acknowledged.size());
            }

            Files.delete(filler);
            try (KafkaProducer<byte[], byte[]> producer = producer(broker))
            {
                final String value = "after-" + acknowledged.size();
                final RecordMetadata m = producer.send(new ProducerRecord<>(TP.topic(), 0, null, bytes(value))).get();
                assertEquals(acknowledged.size(), m.offset(), "the next offset after what was acknowledged");
                acknowledged.add(value);
            }
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of("group.id", "g")))
            {
                consumer.assign(List.of(TP));
                consumer.commitSync(Map.of(TP, new OffsetAndMetadata(acknowledged.size())));
            }

            fill(filler, Long.MAX_VALUE); // the disk full again, then a clean stop and a start on it
            broker.restart();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of("group.id", "g")))
            {
                assertEquals(acknowledged, readAll(consumer, acknowledged.size()), "every acknowledged record after the restart");
                final OffsetAndMetadata committed = consumer.committed(java.util.Set.of(TP)).get(TP);
                assertNotNull(committed, "the committed offset survives the restart");
                assertEquals(acknowledged.size(), committed.offset());
            }
            Files.delete(filler);
            try (KafkaProducer<byte[], byte[]> producer = producer(broker))
            {
                assertEquals(acknowledged.size(), producer.send(new ProducerRecord<>(TP.topic(), 0, null, bytes("last"))).get().offset());
            }
        }
    }

    /** No retries, no idempotence: the first refusal reaches the test as the broker's own error. */
    private static KafkaProducer<byte[], byte[]> producer(final RunningBroker broker)
    {
        return broker.producer(Map.of("acks", "all", "enable.idempotence", "false", "retries", "0",
            "delivery.timeout.ms", "10000", "request.timeout.ms", "5000", "linger.ms", "0"));
    }

    private static Throwable produceUntilRefused(final KafkaProducer<byte[], byte[]> producer, final List<String> acknowledged)
        throws InterruptedException
    {
        final String pad = "x".repeat(1000);
        for (int i = 0; i < 20_000; i++)
        {
            final String value = i + pad;
            try
            {
                final RecordMetadata m = producer.send(new ProducerRecord<>(TP.topic(), 0, null, bytes(value))).get();
                assertEquals(acknowledged.size(), m.offset());
                acknowledged.add(value);
            }
            catch (final ExecutionException ex)
            {
                return ex.getCause();
            }
        }
        throw new AssertionError("20 000 records of 1 KiB fitted on a 6 MiB disk");
    }

    private static List<String> readAll(final KafkaConsumer<byte[], byte[]> consumer, final int expected)
    {
        consumer.assign(List.of(TP));
        consumer.seekToBeginning(List.of(TP));
        final List<String> values = new ArrayList<>();
        for (final ConsumerRecord<byte[], byte[]> r : Polling.pollCount(consumer, expected))
        {
            values.add(new String(r.value(), StandardCharsets.UTF_8));
        }
        return values;
    }

    /** A commit on a full disk may be refused; it must answer either way, and the broker go on. */
    private static void commitQuietly(final KafkaConsumer<byte[], byte[]> consumer, final long offset)
    {
        try
        {
            consumer.commitSync(Map.of(TP, new OffsetAndMetadata(offset)), Duration.ofSeconds(10));
            System.out.println("the commit on a full disk succeeded");
        }
        catch (final KafkaException ex)
        {
            System.out.println("the commit on a full disk was refused: " + ex);
        }
    }

    /** Writes zeros to {@code file} until {@code bytes} are written or the disk is full. */
    private static void fill(final Path file, final long bytes) throws IOException
    {
        final byte[] block = new byte[64 * 1024];
        long written = 0;
        try (OutputStream out = Files.newOutputStream(file))
        {
            while (written < bytes)
            {
                out.write(block, 0, (int)Math.min(block.length, bytes - written));
                written += Math.min(block.length, bytes - written);
            }
        }
        catch (final IOException full)
        {
            if (bytes != Long.MAX_VALUE)
            {
                throw full;
            }
        }
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
