package io.ferrite.broker.e2e;

import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetOutOfRangeException;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Retention of a partition whose newest record is past {@code retention.ms}, as Kafka 4.4 does it (observed on a real
 * 4.4.0, log-engine README "Retention of the active segment"): every segment goes, the active one included — a new
 * empty one is rolled at the log end first — so ListOffsets earliest and latest both answer the old log end, a fetch
 * below it is OFFSET_OUT_OF_RANGE, a consumer at the old end goes on without one, and the same idempotent producer
 * writes on at the old log end (its state kept). {@code compact,delete} deletes so too; {@code compact} keeps all.
 * Before, Ferrite never deleted the active segment: earliest stayed 0.
 */
class ActiveSegmentRetentionTest
{
    private static final long TIMEOUT_S = 20;
    private static final int RECORDS = 10;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private Admin admin;

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, Map.of("log.retention.check.interval.ms", "200", "log.cleaner.backoff.ms", "200",
            "file.delete.delay.ms", "0"));
        admin = broker.admin();
    }

    @AfterEach
    void stop() throws Exception
    {
        admin.close();
        broker.close();
    }

    @Test
    void aPartitionPastRetentionLosesEverySegmentAndGoesOnAtItsLogEnd() throws Exception
    {
        create("aged", "delete");
        create("both", "compact,delete");
        create("kept", "compact");
        final TopicPartition aged = new TopicPartition("aged", 0);
        final long hourAgo = System.currentTimeMillis() - 3_600_000L;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
                ProducerConfig.ACKS_CONFIG, "all"));
            KafkaConsumer<byte[], byte[]> atEnd = broker.consumer(Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none")))
        {
            for (final String topic : List.of("aged", "both", "kept"))
            {
                for (int i = 0; i < RECORDS; i++)
                {
                    producer.send(new ProducerRecord<>(topic, 0, hourAgo + i, bytes("k" + i), bytes("v" + i)))
                        .get(TIMEOUT_S, TimeUnit.SECONDS);
                }
            }
            atEnd.assign(List.of(aged));
            atEnd.seek(aged, RECORDS);
            assertEquals(0, atEnd.poll(Duration.ofMillis(100)).count());

            await(() -> earliest(aged) == RECORDS, Duration.ofSeconds(30), "every segment of aged deleted, the active one too");
            assertEquals(RECORDS, latest(aged), "the log end stays");
            final PartitionLog log = broker.broker.topics().topic("aged").partitions[0].log;
            assertEquals(1, log.segmentCount());
            // the log start moves before the files go (a directory fsync, then the unlinks): wait for the disk
            final List<String> onlyActive = List.of(String.format("%020d.log", RECORDS));
            await(() -> onlyActive.equals(logFiles(log.dir())), Duration.ofSeconds(30), "one empty segment at the old log end");

            try (KafkaConsumer<byte[], byte[]> fromZero = broker.consumer(Map.of(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none")))
            {
                fromZero.assign(List.of(aged));
                fromZero.seek(aged, 0);
                assertThrows(OffsetOutOfRangeException.class, () -> pollUntilRecords(fromZero, 1), "a fetch below the log start");
            }

            final long next = producer.send(new ProducerRecord<>("aged", 0, bytes("k"), bytes("again")))
                .get(TIMEOUT_S, TimeUnit.SECONDS).offset();
            assertEquals(RECORDS, next, "the same idempotent producer writes on at the old log end");
            final List<ConsumerRecord<byte[], byte[]>> got = pollUntilRecords(atEnd, 1);
            assertEquals(RECORDS, got.get(0).offset(), "the consumer at the old end goes on");
            assertEquals("again", new String(got.get(0).value(), StandardCharsets.UTF_8));

            final TopicPartition both = new TopicPartition("both", 0);
            await(() -> earliest(both) == RECORDS, Duration.ofSeconds(30), "compact,delete deletes by time too");
            assertEquals(RECORDS, latest(both));
            final TopicPartition kept = new TopicPartition("kept", 0);
            assertEquals(0, earliest(kept), "compact alone never deletes by time");
            assertEquals(RECORDS, latest(kept));
        }
    }

    private void create(final String name, final String policy) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(name, 1, (short)1).configs(Map.of("retention.ms", "60000",
            "cleanup.policy", policy)))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private long earliest(final TopicPartition tp) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get(TIMEOUT_S, TimeUnit.SECONDS).offset();
    }

    private long latest(final TopicPartition tp) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get(TIMEOUT_S, TimeUnit.SECONDS).offset();
    }

    private static List<ConsumerRecord<byte[], byte[]>> pollUntilRecords(final KafkaConsumer<byte[], byte[]> consumer, final int count)
    {
        final List<ConsumerRecord<byte[], byte[]>> got = new ArrayList<>();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
        while (got.size() < count && System.nanoTime() < deadline)
        {
            final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
            records.forEach(got::add);
        }
        assertEquals(count, got.size(), "records polled within " + TIMEOUT_S + " s");
        return got;
    }

    private static List<String> logFiles(final Path partitionDir) throws Exception
    {
        try (Stream<Path> files = Files.list(partitionDir))
        {
            return files.map(f -> f.getFileName().toString()).filter(n -> n.endsWith(".log")).sorted().toList();
        }
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
