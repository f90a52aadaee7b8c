package io.ferrite.broker.topic;

import io.ferrite.broker.Broker;
import io.ferrite.broker.StartupException;
import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.metadata.AbortTransactionRecord;
import org.apache.kafka.common.metadata.BeginTransactionRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.EndTransactionRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link KafkaImport} on real files, the broker started for real and asked by Kafka's Admin: a metadata log as Kafka 4.4
 * writes it (its own serde, in record batches of its own {@code MemoryRecords}) next to Kafka's partition directories.
 * Kafka's strays are renamed; a topic Ferrite created never is, whatever happens to {@code log.dirs} later; a metadata
 * log that is missing, empty, has a gap or a damaged batch fails the start with nothing renamed, until the override.
 */
class KafkaImportTest
{
    private static final Uuid ORDERS = Uuid.randomUuid();
    private static final Uuid GONE = Uuid.randomUuid();

    @TempDir
    Path root;

    @Test
    void kafkaTopicsComeAcrossAndItsStraysAreRenamed() throws Exception
    {
        final Path dir = kafkaDir("data", true);
        partitionDir(dir, "gone", null); // deleted in Kafka (a RemoveTopicRecord) but its directory left, not renamed -delete
        partitionDir(dir, "other", Uuid.randomUuid()); // a topic Kafka's metadata never held
        metadata(dir, 0, wholeHistory());
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, dir.toString())))
        {
            assertEquals(Set.of("orders"), topics(broker));
            assertEquals("-1", retentionMs(broker, "orders"), "Kafka's override taken over");
        }
        assertEquals(Set.of("gone-0", "other-0"), strays(dir), "renamed -stray, kept on disk");
        assertTrue(Files.exists(dir.resolve(KafkaImport.MARKER)));
    }

    @Test
    void anAbortedMetadataTransactionIsNotApplied() throws Exception
    {
        final Path dir = kafkaDir("data", true);
        final List<byte[]> records = wholeHistory();
        records.add(KafkaMetadataImageTest.bytes(new BeginTransactionRecord().setName("aborted"), 0));
        records.add(KafkaMetadataImageTest.bytes(new RemoveTopicRecord().setTopicId(ORDERS), 0));
        records.add(KafkaMetadataImageTest.bytes(new AbortTransactionRecord(), 0));
        records.add(KafkaMetadataImageTest.bytes(new BeginTransactionRecord().setName("committed"), 0));
        records.add(KafkaMetadataImageTest.bytes(new ConfigRecord().setResourceType(KafkaMetadataImage.RESOURCE_TOPIC)
            .setResourceName("orders").setName("retention.ms").setValue("86400000"), 0));
        records.add(KafkaMetadataImageTest.bytes(new EndTransactionRecord(), 0));
        metadata(dir, 0, records);
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, dir.toString())))
        {
            assertEquals(Set.of("orders"), topics(broker), "the aborted removal not applied");
            assertEquals("86400000", retentionMs(broker, "orders"), "the committed transaction applied");
        }
        assertEquals(Set.of(), strays(dir));
    }

    @Test
    void ferriteTopicSurvivesALogDirsChange() throws Exception
    {
        final Path b = kafkaDir("b", true);
        metadata(b, 0, wholeHistory());
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, b.toString())))
        {
            try (Admin admin = admin(broker))
            {
                admin.createTopics(List.of(new NewTopic("mine", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            produce(broker, "mine");
        }
        // a new directory put first: the marker of the first start is not in it, Kafka's metadata log still is in b
        final Path a = Files.createDirectories(root.resolve("a"));
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, a + "," + b)))
        {
            assertEquals(Set.of("orders", "mine"), topics(broker), "Ferrite's own topic still served");
        }
        assertEquals(Set.of(), strays(b));
        assertTrue(Files.exists(a.resolve(KafkaImport.MARKER)), "the marker written into the directory added");
    }

    @ParameterizedTest
    @ValueSource(strings = {"empty", "gap", "damaged", "missing"})
    void nothingRenamedWhenTheLogCannotBeReadWhole(final String damage) throws Exception
    {
        final Path dir = kafkaDir("data", false);
        partitionDir(dir, "gone", null);
        final List<byte[]> records = wholeHistory();
        switch (damage)
        {
            case "empty" -> Files.createDirectories(dir.resolve(KafkaMetadataLog.DIR));
            case "gap" -> metadata(dir, 7, records); // no snapshot and the log does not start at 0
            case "damaged" ->
            {
                final Path segment = metadata(dir, 0, records);
                final byte[] bytes = Files.readAllBytes(segment);
                bytes[bytes.length - 3] ^= 0x5a; // inside the batch's records: its CRC no longer matches
                Files.write(segment, bytes);
            }
            default -> { } // "missing": Kafka had it in metadata.log.dir, elsewhere
        }
        final StartupException refused = assertThrows(StartupException.class, () -> start(Map.of(BrokerConfig.LOG_DIRS, dir.toString())));
        assertTrue(refused.getMessage().contains(BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE + "=false")
            && refused.getMessage().contains(BrokerConfig.KAFKA_METADATA_LOG_DIR), refused.getMessage());
        assertEquals(Set.of(), strays(dir), "nothing renamed");
        assertFalse(Files.exists(dir.resolve(KafkaImport.MARKER)), "nothing decided");
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, dir.toString(), BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, "false")))
        {
            assertEquals(Set.of("orders", "gone"), topics(broker), "the override: served as found, with the broker defaults");
        }
        assertEquals(Set.of(), strays(dir));
    }

    @Test
    void kafkasMetadataLogDirIsReadWhereTheSettingSays() throws Exception
    {
        final Path dir = kafkaDir("data", true);
        final Path metadataLogDir = Files.createDirectories(root.resolve("kraft"));
        metadata(metadataLogDir, 0, wholeHistory());
        try (Broker broker = start(Map.of(BrokerConfig.LOG_DIRS, dir.toString(), BrokerConfig.KAFKA_METADATA_LOG_DIR,
            metadataLogDir.toString())))
        {
            assertEquals("-1", retentionMs(broker, "orders"));
        }
    }

    /** Kafka's history: orders with retention.ms=-1, and gone, created then deleted. */
    private static List<byte[]> wholeHistory()
    {
        final List<byte[]> records = new ArrayList<>();
        records.add(KafkaMetadataImageTest.bytes(new TopicRecord().setName("orders").setTopicId(ORDERS), 0));
        records.add(KafkaMetadataImageTest.bytes(partition(ORDERS), 1));
        records.add(KafkaMetadataImageTest.bytes(new ConfigRecord().setResourceType(KafkaMetadataImage.RESOURCE_TOPIC)
            .setResourceName("orders").setName("retention.ms").setValue("-1"), 0));
        records.add(KafkaMetadataImageTest.bytes(new TopicRecord().setName("gone").setTopicId(GONE), 0));
        records.add(KafkaMetadataImageTest.bytes(partition(GONE), 1));
        records.add(KafkaMetadataImageTest.bytes(new RemoveTopicRecord().setTopicId(GONE), 0));
        return records;
    }

    private static ApiMessage partition(final Uuid topic)
    {
        return new PartitionRecord().setPartitionId(0).setTopicId(topic).setReplicas(List.of(1)).setIsr(List.of(1)).setLeader(1);
    }

    /** A log directory with Kafka's partition directory of orders (its id as Kafka writes it, or none). */
    private Path kafkaDir(final String name, final boolean withId) throws Exception
    {
        final Path dir = Files.createDirectories(root.resolve(name));
        partitionDir(dir, "orders", withId ? ORDERS : null);
        return dir;
    }

    private static void partitionDir(final Path dir, final String topic, final Uuid id) throws Exception
    {
        final Path partition = Files.createDirectories(dir.resolve(topic + "-0"));
        if (id != null)
        {
            Files.writeString(partition.resolve("partition.metadata"), "version: 0\ntopic_id: " + id + "\n", StandardCharsets.UTF_8);
        }
    }

    /** {@code __cluster_metadata-0} with one segment of {@code records}, one batch each, from {@code base} on. */
    private static Path metadata(final Path dir, final long base, final List<byte[]> records) throws Exception
    {
        final Path log = Files.createDirectories(dir.resolve(KafkaMetadataLog.DIR));
        final Path segment = log.resolve(String.format("%020d.log", base));
        final List<ByteBuffer> batches = new ArrayList<>();
        int size = 0;
        for (int i = 0; i < records.size(); i++)
        {
            final ByteBuffer batch = MemoryRecords.withRecords(base + i, Compression.NONE, new SimpleRecord(0L, null, records.get(i))).buffer();
            batches.add(batch);
            size += batch.remaining();
        }
        final ByteBuffer all = ByteBuffer.allocate(size);
        batches.forEach(all::put);
        Files.write(segment, all.array());
        return segment;
    }

    private static Broker start(final Map<String, String> settings) throws Exception
    {
        final Map<String, String> all = new HashMap<>(settings);
        all.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
        return Broker.start(BrokerConfig.of(all));
    }

    private static Admin admin(final Broker broker)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort()));
    }

    private static Set<String> topics(final Broker broker) throws Exception
    {
        try (Admin admin = admin(broker))
        {
            return new TreeSet<>(admin.listTopics().names().get(30, TimeUnit.SECONDS));
        }
    }

    private static String retentionMs(final Broker broker, final String topic) throws Exception
    {
        try (Admin admin = admin(broker))
        {
            final ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            return admin.describeConfigs(List.of(resource)).all().get(30, TimeUnit.SECONDS).get(resource).get("retention.ms").value();
        }
    }

    private static void produce(final Broker broker, final String topic) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
            "127.0.0.1:" + broker.address().getPort()), new ByteArraySerializer(), new ByteArraySerializer()))
        {
            producer.send(new ProducerRecord<>(topic, new byte[] {1})).get(30, TimeUnit.SECONDS);
        }
    }

    /** The partitions renamed {@code -stray} in {@code dir}, by their {@code topic-partition}. */
    private static Set<String> strays(final Path dir) throws Exception
    {
        try (Stream<Path> list = Files.list(dir))
        {
            return new TreeSet<>(list.map(p -> p.getFileName().toString()).filter(n -> n.endsWith("-stray"))
                .map(n -> n.substring(0, n.indexOf('.'))).toList());
        }
    }
}
