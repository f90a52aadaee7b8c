package io.ferrite.ecosystem.migration;

import io.ferrite.testing.Await;
import io.ferrite.testing.BrokerNode;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ListTopicsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.record.internal.FileLogInputStream;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 19's migration: a real Apache Kafka 4.4 (single-node KRaft, a child JVM) is given topics with config overrides,
 * records from several producers, a deleted topic, then stopped cleanly (SIGTERM); Ferrite is started on the same
 * {@code log.dirs} and must serve what Kafka had: every record at its offset, each topic's id and overrides, no deleted
 * topic, no {@code __cluster_metadata}, and the idempotent producer's state (its last batch sent again is a duplicate).
 */
@Tag("slow") // a Kafka start (storage format + KRaft) and a Ferrite start in child JVMs: about half a minute
class KafkaMigrationTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final List<String> TOPICS = List.of("orders", "events");

    @Test
    void ferriteServesWhatKafkaHadOnItsLogDirectory(@TempDir final Path dir) throws Exception
    {
        final Path kafkaLogs = dir.resolve("kafka").resolve("kafka-logs");
        final Map<String, List<String>> kafkaRecords;
        final Map<String, String> kafkaIds = new TreeMap<>();
        final Map<String, Map<String, String>> kafkaConfigs;
        try (BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka")).awaitReady();
            Admin admin = Admin.create(kafka.clientConfig()))
        {
            admin.createTopics(List.of(
                new NewTopic("orders", 3, (short)1).configs(Map.of("retention.ms", "604800001", "segment.bytes", "1048576",
                    "min.insync.replicas", "1", "max.message.bytes", "2000000", "retention.bytes", "123456789")),
                new NewTopic("events", 2, (short)1).configs(Map.of("cleanup.policy", "compact", "min.compaction.lag.ms", "1000")),
                new NewTopic("doomed", 1, (short)1).configs(Map.of("retention.ms", "1000000")))).all().get();
            // a deleted override: a ConfigRecord with a null value in Kafka's metadata log
            admin.incrementalAlterConfigs(Map.of(new ConfigResource(ConfigResource.Type.TOPIC, "orders"), List.of(
                new AlterConfigOp(new ConfigEntry("retention.bytes", null), AlterConfigOp.OpType.DELETE)))).all().get();
            produce(kafka.bootstrap());
            admin.deleteTopics(List.of("doomed")).all().get();
            for (final Map.Entry<String, TopicDescription> e : admin.describeTopics(TOPICS).allTopicNames().get().entrySet())
            {
                kafkaIds.put(e.getKey(), e.getValue().topicId().toString());
            }
            kafkaConfigs = dynamicConfigs(admin);
            kafkaRecords = readAll(kafka.bootstrap());
        }
        // what Kafka's metadata holds, so the comparisons below compare something
        assertEquals(Map.of("retention.ms", "604800001", "segment.bytes", "1048576", "min.insync.replicas", "1",
            "max.message.bytes", "2000000"), kafkaConfigs.get("orders"));
        assertEquals(Map.of("cleanup.policy", "compact", "min.compaction.lag.ms", "1000"), kafkaConfigs.get("events"));
        assertEquals(5, kafkaRecords.size());
        kafkaRecords.values().forEach(records -> assertFalse(records.isEmpty()));
        final IdempotentBatch last = lastIdempotentBatch(kafkaLogs.resolve("orders-0"));

        try (BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"),
            Map.of("log.dirs", kafkaLogs.toString())).awaitReady();
            Admin admin = Admin.create(ferrite.clientConfig()))
        {
            assertEquals(kafkaRecords, readAll(ferrite.bootstrap()), "every record at its offset, as Kafka served it");
            final Map<String, String> ids = new TreeMap<>();
            for (final Map.Entry<String, TopicDescription> e : admin.describeTopics(TOPICS).allTopicNames().get().entrySet())
            {
                ids.put(e.getKey(), e.getValue().topicId().toString());
            }
            assertEquals(kafkaIds, ids);
            assertEquals(kafkaConfigs, dynamicConfigs(admin));

            final Set<String> listed = admin.listTopics(new ListTopicsOptions().listInternal(true)).names().get();
            assertEquals(Set.of("orders", "events"), listed, "neither the deleted topic nor __cluster_metadata");
            final ExecutionException unknown = assertThrows(ExecutionException.class,
                () -> admin.describeTopics(List.of("__cluster_metadata")).allTopicNames().get());
            assertInstanceOf(UnknownTopicOrPartitionException.class, unknown.getCause());
            final ExecutionException refused = assertThrows(ExecutionException.class,
                () -> admin.createTopics(List.of(new NewTopic("__cluster_metadata", 1, (short)1))).all().get());
            assertInstanceOf(InvalidRequestException.class, refused.getCause());
            assertEquals("Creation of internal topic __cluster_metadata is prohibited.", refused.getCause().getMessage());
            assertTrue(Files.isDirectory(kafkaLogs.resolve("__cluster_metadata-0")), "Kafka's metadata log left on disk");

            // the idempotent producer's last batch, sent again with its producer id, epoch and sequence: a duplicate
            final ProduceResponseData.PartitionProduceResponse retried = RawProduce.send("127.0.0.1",
                Integer.parseInt(ferrite.bootstrap().substring(ferrite.bootstrap().lastIndexOf(':') + 1)), "orders", 0, last.bytes);
            assertEquals(0, retried.errorCode(), "a retried batch is answered as its first write was");
            assertEquals(last.baseOffset, retried.baseOffset(), "with its first write's offset");
            assertEquals(kafkaRecords, readAll(ferrite.bootstrap()), "and not written a second time");
        }
    }

    /**
     * Committed offsets of a classic group and of a {@code group.protocol=consumer} group come across: Admin sees them
     * and a consumer resumes there. Needs the {@code __consumer_offsets} loader that reads Kafka 4.4's record versions.
     */
    @Test
    void committedOffsetsOfBothGroupProtocolsComeAcross(@TempDir final Path dir) throws Exception
    {
        final Path kafkaLogs = dir.resolve("kafka").resolve("kafka-logs");
        final TopicPartition tp = new TopicPartition("orders", 0);
        final Map<String, Long> committed = new TreeMap<>();
        try (BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka")).awaitReady();
            Admin admin = Admin.create(kafka.clientConfig()))
        {
            admin.createTopics(List.of(new NewTopic("orders", 1, (short)1))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = producer(kafka.bootstrap(), Map.of()))
            {
                for (int i = 0; i < 50; i++)
                {
                    producer.send(new ProducerRecord<>("orders", 0, bytes("k" + i), bytes("v" + i))).get();
                }
            }
            committed.put("classic-app", consumeAndCommit(kafka.bootstrap(), "classic-app", "classic", 20));
            committed.put("consumer-app", consumeAndCommit(kafka.bootstrap(), "consumer-app", "consumer", 35));
        }
        try (BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"),
            Map.of("log.dirs", kafkaLogs.toString())).awaitReady();
            Admin admin = Admin.create(ferrite.clientConfig()))
        {
            for (final Map.Entry<String, Long> e : committed.entrySet())
            {
                final Map<TopicPartition, OffsetAndMetadata> offsets =
                    admin.listConsumerGroupOffsets(e.getKey()).partitionsToOffsetAndMetadata().get();
                assertEquals(e.getValue(), offsets.get(tp).offset(), e.getKey());
            }
            // Ferrite serves only the classic protocol (no ConsumerGroupHeartbeat, KIP-848): the consumer-protocol
            // group's offsets are resumed by a classic member, as an empty group of either protocol may be joined by
            // the other in Kafka 4.4 (group.consumer.migration.policy) — the offsets are the group's, not the protocol's.
            for (final String protocol : List.of("classic", "consumer"))
            {
                final String group = protocol + "-app";
                try (KafkaConsumer<byte[], byte[]> consumer = consumer(ferrite.bootstrap(), Map.of("group.id", group,
                    "group.protocol", "classic")))
                {
                    consumer.subscribe(List.of("orders"));
                    final List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
                    Await.await(() ->
                    {
                        consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
                        return !seen.isEmpty();
                    }, DEADLINE, group + " resuming");
                    assertEquals(committed.get(group), seen.get(0).offset(), group + " resumes where it committed");
                }
            }
        }
    }

    /**
     * A Kafka restarted once leads its partitions in a new leader epoch (a single-node KRaft restart bumps it) and stamps
     * it on the batches written after; a consumer commits the epoch of the records it read. Ferrite on that directory
     * must answer the partition in that epoch (Metadata, ListOffsets, the Fetch check) and stamp it on new batches:
     * kafka-clients waits for metadata at least as new as a committed epoch, so with epoch 0 the group resumed nowhere.
     */
    @Test
    void groupsResumeAfterAMoveFromAKafkaThatWasRestarted(@TempDir final Path dir) throws Exception
    {
        final Path kafkaLogs = dir.resolve("kafka").resolve("kafka-logs");
        final TopicPartition tp = new TopicPartition("orders", 0);
        final int kafkaEpoch;
        BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka")).awaitReady();
        try
        {
            try (Admin admin = Admin.create(kafka.clientConfig()))
            {
                admin.createTopics(List.of(new NewTopic("orders", 1, (short)1))).all().get();
            }
            produceNumbered(kafka.bootstrap(), 0, 10);
            kafka = kafka.restart().awaitReady();
            produceNumbered(kafka.bootstrap(), 10, 20);
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(kafka.bootstrap(), Map.of("group.id", "g",
                "group.protocol", "classic")))
            {
                consumer.subscribe(List.of("orders"));
                final List<ConsumerRecord<byte[], byte[]>> seen = poll(consumer, 15, "g reading 15 records on Kafka");
                assertEquals(Optional.of(0), seen.get(0).leaderEpoch(), "the batches before Kafka's restart");
                kafkaEpoch = seen.get(14).leaderEpoch().orElseThrow();
                assertTrue(kafkaEpoch > 0, "Kafka's restart bumped the leader epoch of later batches: " + kafkaEpoch);
                // what commitSync() commits after reading offset 14: its position, with the epoch of the record read
                consumer.commitSync(Map.of(tp, new OffsetAndMetadata(15, Optional.of(kafkaEpoch), "")));
            }
            try (Admin admin = Admin.create(kafka.clientConfig()))
            {
                assertEquals(Optional.of(kafkaEpoch), admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get()
                    .leaderEpoch(), "Kafka's answer for the latest offset");
            }
        }
        finally
        {
            kafka.close();
        }
        try (BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"),
            Map.of("log.dirs", kafkaLogs.toString())).awaitReady();
            Admin admin = Admin.create(ferrite.clientConfig()))
        {
            final OffsetAndMetadata committed = admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata().get().get(tp);
            assertEquals(new OffsetAndMetadata(15, Optional.of(kafkaEpoch), ""), committed, "g's commit on Kafka");
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(ferrite.bootstrap(), Map.of("group.id", "g",
                "group.protocol", "classic")))
            {
                consumer.subscribe(List.of("orders"));
                final List<ConsumerRecord<byte[], byte[]>> seen = poll(consumer, 5, "g resuming on Ferrite at its Kafka commit");
                assertEquals(15, seen.get(0).offset(), "where g committed on Kafka");
                consumer.commitSync();
            }
            assertEquals(Optional.of(kafkaEpoch), admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get()
                .leaderEpoch(), "Ferrite's answer for the latest offset: the log's epoch, as Kafka's");
            produceNumbered(ferrite.bootstrap(), 20, 23);
            try (KafkaConsumer<byte[], byte[]> consumer = consumer(ferrite.bootstrap(), Map.of("group.id", "g",
                "group.protocol", "classic")))
            {
                consumer.subscribe(List.of("orders"));
                final List<ConsumerRecord<byte[], byte[]>> seen = poll(consumer, 3, "g resuming at its Ferrite commit");
                assertEquals(20, seen.get(0).offset(), "where g committed on Ferrite");
                for (final ConsumerRecord<byte[], byte[]> r : seen)
                {
                    assertEquals(Optional.of(kafkaEpoch), r.leaderEpoch(), "Ferrite's new batches carry the log's epoch");
                }
            }
        }
    }

    /** Records {@code from} to {@code to} - 1 into orders-0, one batch each. */
    private static void produceNumbered(final String bootstrap, final int from, final int to) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = producer(bootstrap, Map.of("acks", "all")))
        {
            for (int i = from; i < to; i++)
            {
                producer.send(new ProducerRecord<>("orders", 0, bytes("k" + i), bytes("v" + i))).get();
            }
        }
    }

    private static List<ConsumerRecord<byte[], byte[]>> poll(final KafkaConsumer<byte[], byte[]> consumer, final int count,
        final String what)
    {
        final List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
        Await.await(() ->
        {
            consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
            return seen.size() >= count;
        }, DEADLINE, () -> what + "; read " + seen.size());
        return seen;
    }

    private static long consumeAndCommit(final String bootstrap, final String group, final String protocol, final int count)
    {
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, Map.of("group.id", group, "group.protocol", protocol,
            "max.poll.records", count)))
        {
            consumer.subscribe(List.of("orders"));
            final List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
            Await.await(() ->
            {
                consumer.poll(Duration.ofMillis(200)).forEach(seen::add);
                return seen.size() >= count;
            }, DEADLINE, group + " consuming " + count);
            final long next = seen.get(count - 1).offset() + 1;
            consumer.commitSync(Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(next)));
            return next;
        }
    }

    /** Three producers: idempotent (acks=all), plain at acks=1 with gzip, plain with lz4 and headers. */
    private static void produce(final String bootstrap) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> idempotent = producer(bootstrap, Map.of("enable.idempotence", true, "acks", "all"));
            KafkaProducer<byte[], byte[]> plain = producer(bootstrap, Map.of("enable.idempotence", false, "acks", "1",
                "compression.type", "gzip", "linger.ms", 5));
            KafkaProducer<byte[], byte[]> headers = producer(bootstrap, Map.of("enable.idempotence", false, "acks", "1",
                "compression.type", "lz4")))
        {
            for (int i = 0; i < 60; i++)
            {
                idempotent.send(new ProducerRecord<>("orders", i % 3, bytes("idem-" + i), bytes("order " + i))).get();
                plain.send(new ProducerRecord<>("orders", i % 3, bytes("plain-" + i), bytes("order " + i + " of the plain one")));
                final ProducerRecord<byte[], byte[]> event = new ProducerRecord<>("events", i % 2, bytes("event-" + i), bytes("e" + i));
                event.headers().add("n", bytes(Integer.toString(i)));
                headers.send(event);
                headers.send(new ProducerRecord<>("doomed", 0, bytes("d" + i), bytes("gone " + i)));
            }
            plain.flush();
            headers.flush();
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(final String bootstrap, final Map<String, Object> extra)
    {
        final Map<String, Object> config = new HashMap<>(extra);
        config.put("bootstrap.servers", bootstrap);
        config.put("key.serializer", ByteArraySerializer.class);
        config.put("value.serializer", ByteArraySerializer.class);
        return new KafkaProducer<>(config);
    }

    private static KafkaConsumer<byte[], byte[]> consumer(final String bootstrap, final Map<String, Object> extra)
    {
        final Map<String, Object> config = new HashMap<>(extra);
        config.put("bootstrap.servers", bootstrap);
        config.put("key.deserializer", ByteArrayDeserializer.class);
        config.put("value.deserializer", ByteArrayDeserializer.class);
        config.put("auto.offset.reset", "earliest");
        config.put("enable.auto.commit", false);
        return new KafkaConsumer<>(config);
    }

    /** Every record of {@link #TOPICS}, per partition, as "offset timestamp key value headers" (bytes as base64). */
    private static Map<String, List<String>> readAll(final String bootstrap)
    {
        final Map<String, List<String>> all = new TreeMap<>();
        try (KafkaConsumer<byte[], byte[]> consumer = consumer(bootstrap, Map.of()))
        {
            final List<TopicPartition> partitions = new ArrayList<>();
            for (final String topic : TOPICS)
            {
                consumer.partitionsFor(topic).forEach(p -> partitions.add(new TopicPartition(topic, p.partition())));
            }
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            final Map<TopicPartition, Long> ends = consumer.endOffsets(partitions);
            partitions.forEach(tp -> all.put(tp.toString(), new ArrayList<>()));
            Await.await(() ->
            {
                for (final ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200)))
                {
                    final StringBuilder line = new StringBuilder().append(r.offset()).append(' ').append(r.timestamp())
                        .append(' ').append(base64(r.key())).append(' ').append(base64(r.value()));
                    for (final Header h : r.headers())
                    {
                        line.append(' ').append(h.key()).append('=').append(base64(h.value()));
                    }
                    all.get(new TopicPartition(r.topic(), r.partition()).toString()).add(line.toString());
                }
                return partitions.stream().allMatch(tp -> consumer.position(tp) >= ends.get(tp));
            }, DEADLINE, () -> "reading every record up to " + ends);
        }
        return all;
    }

    /** The topics' overrides, as DescribeConfigs reports them with source DYNAMIC_TOPIC_CONFIG. */
    private static Map<String, Map<String, String>> dynamicConfigs(final Admin admin) throws Exception
    {
        final List<ConfigResource> resources = TOPICS.stream().map(t -> new ConfigResource(ConfigResource.Type.TOPIC, t)).toList();
        final Map<String, Map<String, String>> configs = new TreeMap<>();
        for (final Map.Entry<ConfigResource, Config> e : admin.describeConfigs(resources).all().get().entrySet())
        {
            final Map<String, String> overrides = new TreeMap<>();
            e.getValue().entries().stream().filter(c -> c.source() == ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG)
                .forEach(c -> overrides.put(c.name(), c.value()));
            configs.put(e.getKey().name(), overrides);
        }
        return configs;
    }

    /** The last batch of the idempotent producer in a partition's first segment, as Kafka wrote it. */
    private static IdempotentBatch lastIdempotentBatch(final Path partitionDir) throws Exception
    {
        final Path segment = partitionDir.resolve("00000000000000000000.log");
        final byte[] file = Files.readAllBytes(segment);
        IdempotentBatch last = null;
        try (FileRecords records = FileRecords.open(segment.toFile()))
        {
            for (final FileLogInputStream.FileChannelRecordBatch batch : records.batches())
            {
                if (batch.hasProducerId())
                {
                    last = new IdempotentBatch(batch.baseOffset(), batch.producerId(),
                        ByteBuffer.wrap(file, batch.position(), batch.sizeInBytes()).slice());
                }
            }
        }
        assertNotEquals(null, last, "the idempotent producer's batches in " + segment);
        return last;
    }

    private record IdempotentBatch(long baseOffset, long producerId, ByteBuffer bytes)
    {
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static String base64(final byte[] b)
    {
        return b == null ? "null" : Base64.getEncoder().encodeToString(b);
    }
}
