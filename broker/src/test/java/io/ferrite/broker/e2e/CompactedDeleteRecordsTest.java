package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DeleteRecords on a compacted topic while a clean of it is in progress, through kafka-clients' Admin on a broker
 * with real files: as in Kafka 4.4 ({@code UnifiedLog.maybeIncrementLogStartOffset}) the request only moves the log
 * start, and the segments below it go in the cleaner's next retention pass, never beside the clean that may be
 * reading them (with a short {@code file.delete.delay.ms} their mappings would be unmapped under it).
 *
 * <p>The clean is held where it is certain to be in progress: a first, unthrottled clean checkpoints the log up to
 * its active segment, and
 * after a restart with {@code log.cleaner.io.max.bytes.per.second=1} the second clean maps the small dirty section
 * and starts rewriting from the log's first segment; at its first throttle call (64 KiB read and written) it sleeps
 * for hours (in a group's rewrite, or after its last group: where the throttler first sleeps depends on the
 * machine's speed), its checkpoint not moved, until the broker stops it.
 */
class CompactedDeleteRecordsTest
{
    private static final String TOPIC = "compacted";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    private static final Duration DEADLINE = Duration.ofSeconds(60);

    @Test
    void deleteRecordsBesideACleanOnlyMovesTheLogStartAndTheCleanerDeletesTheSegmentsAfter(@TempDir final Path dir) throws Exception
    {
        deleteRecordsBesideAClean(dir, false);
    }

    /**
     * As above, but the topic switched to cleanup.policy=delete while the clean runs (which neither aborts nor waits
     * for it): the segments still stay while the clean holds the log, whatever its policy now, and the retention task
     * deletes them after. Failed before (the policy decided: segment 0 gone at once, beside the clean).
     */
    @Test
    void deleteRecordsBesideACleanOfATopicSwitchedToDeleteLeavesItsSegmentsToTheRetentionAfter(@TempDir final Path dir) throws Exception
    {
        deleteRecordsBesideAClean(dir, true);
    }

    /**
     * With {@code file.delete.delay.ms=0}: a segment deleted beside the clean would be unmapped under it at once (a
     * SIGSEGV ends the test's JVM); the broker stops cleanly with the clean held, and its next start deletes them.
     */
    private static void deleteRecordsBesideAClean(final Path dir, final boolean switchToDelete) throws Exception
    {
        final Path partition = dir.resolve(TOPIC + "-0");
        final Map<String, String> unthrottled = Map.of("log.cleaner.backoff.ms", "50", "log.retention.check.interval.ms", "100");
        final long[] bases;
        try (RunningBroker broker = new RunningBroker(dir, unthrottled); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1).configs(Map.of("cleanup.policy", "compact",
                "internal.segment.bytes", "16384", "min.cleanable.dirty.ratio", "0.01", "file.delete.delay.ms", "0")))).all().get(20, TimeUnit.SECONDS);
            produce(broker, 0, 1600); // unique keys: a clean removes nothing, the segments stay full
            // cleaned up to its active segment: after the restart only the next rolled segment is dirty, under the
            // first throttle call's 64 KiB, so the throttled clean holds in its rewrite, not in its map
            await(() -> checkpointed(dir) == activeBase(partition), DEADLINE, () -> "a clean of " + TP + " up to its active segment");
            bases = segmentBases(partition);
            assertTrue(bases.length >= 6, bases.length + " segments");
        }
        final long deleteBefore = bases[3];
        try (RunningBroker broker = new RunningBroker(dir, Map.of("log.cleaner.backoff.ms", "50",
            "log.cleaner.io.max.bytes.per.second", "1")); Admin admin = broker.admin())
        {
            // a precondition, not a wait for something not to happen: the throttler (made as the broker starts) sleeps
            // only once its first 300 ms period has passed (Kafka's Throttler); a clean that began sooner could run
            // to its end unthrottled on a fast machine. After this its first 64 KiB call, inside the rewrite, holds it.
            Thread.sleep(2 * 300 + 100);
            produce(broker, 1600, 150); // rolls a segment: a dirty section to clean
            await(() -> cleanedFiles(partition) > 0, DEADLINE, "a clean of " + TP + " rewriting its segments");
            if (switchToDelete)
            {
                admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, TOPIC),
                    List.of(new AlterConfigOp(new ConfigEntry("cleanup.policy", "delete"), AlterConfigOp.OpType.SET))))
                    .all().get(20, TimeUnit.SECONDS);
            }

            assertEquals(deleteBefore, admin.deleteRecords(Map.of(TP, RecordsToDelete.beforeOffset(deleteBefore))).lowWatermarks().get(TP)
                .get(20, TimeUnit.SECONDS).lowWatermark());
            assertEquals(deleteBefore, admin.listOffsets(Map.of(TP, OffsetSpec.earliest())).all().get(20, TimeUnit.SECONDS).get(TP).offset());
            for (int i = 0; i < 3; i++)
            {
                assertTrue(Files.exists(partition.resolve(logFile(bases[i]))),
                    "segment " + bases[i] + " below the new log start is still there while the clean runs");
            }
            // the clean has not completed: its throttle holds it for hours, inside a group's rewrite or after the last
            // group (Kafka's throttler sleeps only once a 300 ms period has passed, so where it first sleeps depends on
            // the machine's speed); either way the cleaner holds the log and has not checkpointed it
            assertTrue(checkpointed(dir) < activeBase(partition), "the clean is still in progress (its throttle holds it for hours)");
        }
        try (RunningBroker broker = new RunningBroker(dir, unthrottled); Admin admin = broker.admin())
        {
            await(() -> Stream.of(bases[0], bases[1], bases[2]).noneMatch(b -> Files.exists(partition.resolve(logFile(b)))), DEADLINE,
                switchToDelete ? "the segments below the log start deleted by the retention task"
                    : "the segments below the log start deleted by the cleaner's retention");
            assertEquals(deleteBefore, admin.listOffsets(Map.of(TP, OffsetSpec.earliest())).all().get(20, TimeUnit.SECONDS).get(TP).offset());
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
            {
                consumer.assign(List.of(TP));
                consumer.seekToBeginning(List.of(TP));
                final int expected = (int)(1750 - deleteBefore);
                final List<ConsumerRecord<byte[], byte[]>> got = Polling.pollCount(consumer, expected);
                for (int i = 0; i < expected; i++)
                {
                    assertEquals(deleteBefore + i, got.get(i).offset());
                    assertEquals(key(deleteBefore + i), new String(got.get(i).key(), StandardCharsets.UTF_8));
                }
            }
        }
    }

    private static void produce(final RunningBroker broker, final int from, final int count) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5,
            ProducerConfig.BATCH_SIZE_CONFIG, 2048)))
        {
            final byte[] value = "v".repeat(100).getBytes(StandardCharsets.UTF_8);
            Future<RecordMetadata> last = null;
            for (int i = from; i < from + count; i++)
            {
                last = producer.send(new ProducerRecord<>(TOPIC, key(i).getBytes(StandardCharsets.UTF_8), value));
            }
            assertEquals(from + count - 1, last.get(20, TimeUnit.SECONDS).offset()); // all acknowledged, in order
        }
    }

    private static String key(final long i)
    {
        return String.format("key-%05d", i);
    }

    private static String logFile(final long base)
    {
        return String.format("%020d.log", base);
    }

    private static long[] segmentBases(final Path partition) throws IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.matches("\\d{20}\\.log"))
                .mapToLong(n -> Long.parseLong(n.substring(0, 20))).sorted().toArray();
        }
    }

    private static long activeBase(final Path partition) throws IOException
    {
        final long[] bases = segmentBases(partition);
        return bases[bases.length - 1];
    }

    private static long cleanedFiles(final Path partition) throws IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.filter(p -> p.getFileName().toString().endsWith(".cleaned")).count();
        }
    }

    /** The partition's entry in the log directory's cleaner-offset-checkpoint (version, count, "topic partition offset" lines), or -1. */
    private static long checkpointed(final Path dir) throws IOException
    {
        final Path checkpoint = dir.resolve("cleaner-offset-checkpoint");
        if (!Files.exists(checkpoint))
        {
            return -1;
        }
        for (final String line : Files.readAllLines(checkpoint, StandardCharsets.UTF_8))
        {
            final String[] parts = line.split(" ");
            if (parts.length == 3 && parts[0].equals(TOPIC) && parts[1].equals("0"))
            {
                return Long.parseLong(parts[2]);
            }
        }
        return -1;
    }
}
