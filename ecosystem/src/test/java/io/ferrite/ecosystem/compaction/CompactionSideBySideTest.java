package io.ferrite.ecosystem.compaction;

import io.ferrite.testing.BrokerNode;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The "many updates to few keys" compaction, done by an Apache Kafka 4.4 node and a Ferrite
 * node with the same topic settings and the same records: 20 keys updated 200 times each and 5 of them
 * deleted, each record its own batch (a synchronous send), segments of 16 KiB. Once each broker's
 * cleaner has cleaned everything below its active segment, a consumer reading from offset 0 must see the
 * same offsets, keys and values on both, and both partitions' cleaned segments must hold the same bytes on disk. Two more rounds
 * of updates to the 15 live keys, each exactly one segment roll long, are cleaned the same way: the clean of round 2 sets
 * the tombstones' delete horizon and keeps them, the clean of round 3 (after {@code delete.retention.ms}) removes them on
 * both, as Kafka does.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class CompactionSideBySideTest
{
    private static final String TOPIC = "compacted";
    private static final int KEYS = 20;
    private static final int UPDATES = 200;
    private static final int DELETED = 5;
    /**
     * Each round-2 and round-3 write rolls the segment exactly once, so each broker cleans exactly once per round whatever
     * the load: a round that rolled several times let a clean after the cleaner's 15 s idle backoff pass the horizon the
     * round's first clean had set, on one broker and not the other. Nothing depends on this length any more.
     */
    private static final long DELETE_RETENTION_MS = 1_000;

    @TempDir
    Path dir;

    @Test
    void ferriteCompactsAsKafkaDoes() throws Exception
    {
        try (BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka"));
            BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite")))
        {
            kafka.awaitReady();
            ferrite.awaitReady();
            final BrokerNode[] brokers = {kafka, ferrite};
            for (final BrokerNode broker : brokers)
            {
                createTopic(broker);
                try (KafkaProducer<String, String> producer = producer(broker))
                {
                    for (int update = 0; update < UPDATES; update++)
                    {
                        for (int key = 0; key < KEYS; key++)
                        {
                            producer.send(new ProducerRecord<>(TOPIC, 0, "key-" + key, "value-" + key + "-" + update)).get();
                        }
                    }
                    for (int key = 0; key < DELETED; key++)
                    {
                        producer.send(new ProducerRecord<>(TOPIC, 0, "key-" + key, null)).get();
                    }
                }
            }
            final List<String> kafkaFirst = awaitCleanedAndRead(kafka);
            final List<String> ferriteFirst = awaitCleanedAndRead(ferrite);
            report("after round 1", kafka, kafkaFirst, ferrite, ferriteFirst);
            assertTrue(kafkaFirst.size() < KEYS * UPDATES / 10, () -> "Kafka's cleaner did not compact: " + kafkaFirst.size() + " records");
            assertEquals(kafkaFirst, ferriteFirst, "records read from offset 0 after the first clean (offset key value)");
            assertEquals(partitionBytes(kafka), partitionBytes(ferrite), "bytes on disk of the cleaned segments after the first clean");

            // two more rounds of updates to the 15 live keys, each written until the active segment rolls once, so each
            // broker cleans once per round: round 2's clean (the first to reach the tombstones, written last, so in the
            // active segment at round 1's clean) sets their delete horizon and keeps them; round 3's, which starts after
            // delete.retention.ms past round 2's clean, removes them
            for (final int round : new int[] {2, 3})
            {
                if (round == 3)
                {
                    Thread.sleep(DELETE_RETENTION_MS);
                }
                final long kafkaBase = CleanerProgress.activeSegmentBase(kafka.partitionDir(TOPIC, 0));
                final int written = send(kafka, round, Integer.MAX_VALUE);
                assertEquals(written, send(ferrite, round, written));
                assertEquals(CleanerProgress.activeSegmentBase(kafka.partitionDir(TOPIC, 0)),
                    CleanerProgress.activeSegmentBase(ferrite.partitionDir(TOPIC, 0)),
                    () -> "active segment's base after the " + written + " records of round " + round + " (Kafka's rolled from " + kafkaBase + ")");
                final List<String> kafkaAfter = awaitCleanedAndRead(kafka);
                final List<String> ferriteAfter = awaitCleanedAndRead(ferrite);
                report("after round " + round + " (" + written + " records)", kafka, kafkaAfter, ferrite, ferriteAfter);
                assertEquals(kafkaAfter, ferriteAfter, "records read from offset 0 after round " + round + " (offset key value)");
                assertEquals(partitionBytes(kafka), partitionBytes(ferrite), "bytes on disk of the cleaned segments after round " + round);
                final long tombstones = round == 2 ? DELETED : 0;
                assertEquals(tombstones, kafkaAfter.stream().filter(r -> r.endsWith(" null")).count(), () -> "Kafka's tombstones after round " + round + ": " + kafkaAfter);
                assertEquals(tombstones, ferriteAfter.stream().filter(r -> r.endsWith(" null")).count(), () -> "Ferrite's tombstones after round " + round + ": " + ferriteAfter);
            }
        }
    }

    /**
     * Sends round {@code round}'s updates to the 15 live keys in turn, one synchronous send each, until {@code limit} are
     * sent or the partition's active segment rolls (a roll happens in the append, before the ack). Returns how many it sent.
     */
    private static int send(final BrokerNode broker, final int round, final int limit) throws Exception
    {
        final Path partitionDir = broker.partitionDir(TOPIC, 0);
        final long base = CleanerProgress.activeSegmentBase(partitionDir);
        int sent = 0;
        try (KafkaProducer<String, String> producer = producer(broker))
        {
            while (sent < limit && CleanerProgress.activeSegmentBase(partitionDir) == base)
            {
                final int key = DELETED + sent % (KEYS - DELETED);
                producer.send(new ProducerRecord<>(TOPIC, 0, "key-" + key, "round-" + round + "-" + key + "-" + sent / (KEYS - DELETED))).get();
                sent++;
            }
        }
        return sent;
    }

    private static void createTopic(final BrokerNode broker) throws Exception
    {
        try (Admin admin = Admin.create(broker.clientConfig()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short) 1).configs(Map.of(
                "cleanup.policy", "compact",
                "internal.segment.bytes", "16384",
                "min.cleanable.dirty.ratio", "0.01",
                "delete.retention.ms", Long.toString(DELETE_RETENTION_MS))))).all().get();
        }
    }

    private static KafkaProducer<String, String> producer(final BrokerNode broker)
    {
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ProducerConfig.LINGER_MS_CONFIG, 0);
        config.put(ProducerConfig.ACKS_CONFIG, "all");
        return new KafkaProducer<>(config, new StringSerializer(), new StringSerializer());
    }

    /** Waits until the broker's cleaner has cleaned the partition up to its active segment, then reads it from offset 0 to its end. */
    private static List<String> awaitCleanedAndRead(final BrokerNode broker) throws Exception
    {
        CleanerProgress.awaitCleaned(broker, TOPIC, 0);
        final Map<String, Object> config = new HashMap<>(broker.clientConfig());
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        final List<String> records = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer()))
        {
            final TopicPartition tp = new TopicPartition(TOPIC, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp)).get(tp);
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    records.add(r.offset() + " " + r.key() + " " + r.value());
                }
                return consumer.position(tp) >= end;
            }, CleanerProgress.DEADLINE, () -> broker.name + ": read to " + end + ", got " + records.size());
        }
        System.out.println(broker.name + " reads " + records.size() + " records from offset 0: " + records);
        return records;
    }

    /** The bytes on disk of the partition's cleaned segments (those below the active one; the records read cover the rest). */
    private static long partitionBytes(final BrokerNode broker) throws Exception
    {
        return CleanerProgress.bytesBelowActive(broker.partitionDir(TOPIC, 0));
    }

    private static void report(final String when, final BrokerNode kafka, final List<String> kafkaRecords, final BrokerNode ferrite,
        final List<String> ferriteRecords) throws Exception
    {
        System.out.println(when + ": Kafka " + kafkaRecords.size() + " records, " + partitionBytes(kafka) + " B; Ferrite "
            + ferriteRecords.size() + " records, " + partitionBytes(ferrite) + " B");
    }
}
