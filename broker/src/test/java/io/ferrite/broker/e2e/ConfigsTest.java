package io.ferrite.broker.e2e;

import io.ferrite.log.LogConfig;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidConfigurationException;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.apache.kafka.common.errors.InvalidTopicException;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DescribeConfigs, AlterConfigs and IncrementalAlterConfigs as kafka-clients' Admin sees them, on
 * a running broker whose file sets a few topic defaults: values, sources, synonym chains and
 * flags as Kafka 4.4 reports them; changes that the log obeys at once (a produce over a lowered
 * max.message.bytes fails, a lowered retention.ms deletes old segments), that validate-only
 * leaves alone, that bad input refuses with Kafka's exceptions, and that survive a restart.
 * (kafka-clients 4 has no Admin call for the old AlterConfigs any more: ConfigsWireTest sends it.)
 */
class ConfigsTest
{
    /** Static broker settings, as a server.properties would give them. */
    private static final Map<String, String> FILE = Map.of(
        "message.max.bytes", "2000000",
        "log.retention.hours", "48",
        "log.retention.check.interval.ms", "200",
        "custom.unknown.setting", "kept");
    private static final long TIMEOUT_S = 20;

    @TempDir
    Path dir;

    private RunningBroker broker;
    private Admin admin;

    @BeforeEach
    void start() throws Exception
    {
        broker = new RunningBroker(dir, FILE);
        admin = broker.admin();
    }

    @AfterEach
    void stop() throws Exception
    {
        admin.close();
        broker.close();
    }

    private static ConfigResource topic(final String name)
    {
        return new ConfigResource(ConfigResource.Type.TOPIC, name);
    }

    private void create(final String name, final Map<String, String> configs) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(name, 1, (short)1).configs(configs))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private Config describe(final ConfigResource resource) throws Exception
    {
        return admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true)
            .includeDocumentation(true)).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(resource);
    }

    private String value(final String topic, final String name) throws Exception
    {
        return describe(topic(topic)).get(name).value();
    }

    private void alter(final ConfigResource resource, final AlterConfigOp... ops) throws Exception
    {
        alter(resource, false, ops);
    }

    private void alter(final ConfigResource resource, final boolean validateOnly, final AlterConfigOp... ops) throws Exception
    {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(ops)), new AlterConfigsOptions().validateOnly(validateOnly))
            .all().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private Throwable alterFails(final ConfigResource resource, final AlterConfigOp... ops)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class, () -> alter(resource, ops));
        return ex.getCause();
    }

    private static AlterConfigOp op(final String name, final String value, final AlterConfigOp.OpType type)
    {
        return new AlterConfigOp(new ConfigEntry(name, value), type);
    }

    private static List<String> synonyms(final ConfigEntry entry)
    {
        return entry.synonyms().stream().map(s -> s.source() + ":" + s.name() + "=" + s.value()).toList();
    }

    private static PartitionLog log(final RunningBroker broker, final String topic)
    {
        return broker.broker.topics().topic(topic).partitions[0].log;
    }

    @Test
    void aTopicWithAndWithoutOverridesIsDescribedAsKafkaDescribesIt() throws Exception
    {
        create("tuned", Map.of("retention.ms", "60000", "cleanup.policy", "compact, delete"));
        create("plain", Map.of());

        final Config tuned = describe(topic("tuned"));
        final ConfigEntry retention = tuned.get("retention.ms");
        assertEquals("60000", retention.value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, retention.source());
        assertFalse(retention.isDefault());
        assertFalse(retention.isReadOnly());
        assertFalse(retention.isSensitive());
        assertEquals(ConfigEntry.ConfigType.LONG, retention.type());
        assertNotNull(retention.documentation());
        // the topic's own value; the broker's log.retention.hours is below log.retention.ms, so Kafka drops it
        assertEquals(List.of("DYNAMIC_TOPIC_CONFIG:retention.ms=60000"), synonyms(retention));
        final ConfigEntry policy = tuned.get("cleanup.policy");
        assertEquals("compact,delete", policy.value(), "printed as Kafka prints a list");
        assertEquals(ConfigEntry.ConfigType.LIST, policy.type());
        assertEquals(List.of("DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete", "DEFAULT_CONFIG:log.cleanup.policy=delete"),
            synonyms(policy));

        final Config plain = describe(topic("plain"));
        final Set<String> names = plain.entries().stream().map(ConfigEntry::name).collect(Collectors.toSet());
        final Set<String> catalogue = LogConfig.CATALOGUE.keys().stream().map(k -> k.name())
            .filter(n -> !n.startsWith("internal.")).collect(Collectors.toSet());
        assertEquals(catalogue, names);
        for (final ConfigEntry e : plain.entries())
        {
            assertFalse(e.isReadOnly(), e.name());
            assertFalse(e.isSensitive(), e.name());
            assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG.equals(e.source()), e.isDefault(), e.name());
        }
        // log.retention.hours=48 in the file gives the value; Kafka reports it as a default with no synonyms
        final ConfigEntry plainRetention = plain.get("retention.ms");
        assertEquals("172800000", plainRetention.value());
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, plainRetention.source());
        assertEquals(List.of(), synonyms(plainRetention));
        // message.max.bytes in the file: the static broker config, with Kafka's default behind it
        final ConfigEntry maxMessage = plain.get("max.message.bytes");
        assertEquals("2000000", maxMessage.value());
        assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, maxMessage.source());
        assertFalse(maxMessage.isDefault());
        assertEquals(List.of("STATIC_BROKER_CONFIG:message.max.bytes=2000000", "DEFAULT_CONFIG:message.max.bytes=1048588"),
            synonyms(maxMessage));
        final ConfigEntry segment = plain.get("segment.bytes");
        assertEquals("1073741824", segment.value());
        assertTrue(segment.isDefault());
        assertEquals(List.of("DEFAULT_CONFIG:log.segment.bytes=1073741824"), synonyms(segment));
        assertEquals(ConfigEntry.ConfigType.INT, segment.type());
        // a config with no broker property behind it
        assertEquals(List.of(), synonyms(plain.get("remote.storage.enable")));
        assertEquals(ConfigEntry.ConfigType.BOOLEAN, plain.get("remote.storage.enable").type());

        // without the options: no synonyms, no documentation
        final Config bare = admin.describeConfigs(List.of(topic("tuned"))).all().get(TIMEOUT_S, TimeUnit.SECONDS)
            .get(topic("tuned"));
        assertEquals(List.of(), bare.get("retention.ms").synonyms());
        assertNull(bare.get("retention.ms").documentation());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, bare.get("retention.ms").source());
    }

    @Test
    void anUnknownOrIllegalTopicIsAnErrorForThatResourceOnly() throws Exception
    {
        create("known", Map.of());
        final Map<ConfigResource, KafkaFuture<Config>> results = admin.describeConfigs(
            List.of(topic("known"), topic("missing"), topic("bad name"))).values();
        assertNotNull(results.get(topic("known")).get(TIMEOUT_S, TimeUnit.SECONDS).get("retention.ms"));
        final Throwable missing = assertThrows(ExecutionException.class,
            () -> results.get(topic("missing")).get(TIMEOUT_S, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(UnknownTopicOrPartitionException.class, missing);
        final Throwable illegal = assertThrows(ExecutionException.class,
            () -> results.get(topic("bad name")).get(TIMEOUT_S, TimeUnit.SECONDS)).getCause();
        assertInstanceOf(InvalidTopicException.class, illegal);
    }

    @Test
    void theBrokerResourceListsItsConfigsWithTheirSources() throws Exception
    {
        final Config config = describe(new ConfigResource(ConfigResource.Type.BROKER, "1"));
        final ConfigEntry hours = config.get("log.retention.hours");
        assertEquals("48", hours.value());
        assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, hours.source());
        assertTrue(hours.isReadOnly(), "nothing on a Ferrite broker changes while it runs");
        assertEquals(List.of("STATIC_BROKER_CONFIG:log.retention.hours=48", "DEFAULT_CONFIG:log.retention.hours=168"),
            synonyms(hours));
        assertEquals(ConfigEntry.ConfigType.INT, hours.type());
        // unset, no default: Kafka lists it with a null value
        final ConfigEntry millis = config.get("log.retention.ms");
        assertNull(millis.value());
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, millis.source());
        assertEquals(List.of(), synonyms(millis));
        final ConfigEntry threads = config.get("num.network.threads");
        assertEquals("2", threads.value());
        assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, threads.source());
        final ConfigEntry partitions = config.get("num.partitions");
        assertEquals("1", partitions.value());
        assertTrue(partitions.isDefault());
        assertEquals(List.of("DEFAULT_CONFIG:num.partitions=1"), synonyms(partitions));
        // a property Ferrite does not know is reported as set, of unknown type, and (as Kafka does
        // with a type it cannot tell) as possibly secret: no value
        final ConfigEntry custom = config.get("custom.unknown.setting");
        assertNull(custom.value());
        assertTrue(custom.isSensitive());
        assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, custom.source());
        assertEquals(ConfigEntry.ConfigType.UNKNOWN, custom.type());
        assertEquals(List.of("STATIC_BROKER_CONFIG:custom.unknown.setting=null"), synonyms(custom));
        // as Kafka: read-only unless it can change at run time (DynamicBrokerConfigsTest); here the ones Kafka 4.4
        // changes at run time that Ferrite honours: the cleaner's settings and the most specific broker synonym of
        // each topic config (log.retention.ms, not log.retention.hours)
        assertEquals(new java.util.TreeSet<>(List.of("compression.gzip.level", "compression.lz4.level", "compression.type",
            "compression.zstd.level", "log.cleaner.backoff.ms", "log.cleaner.dedupe.buffer.size", "log.cleaner.delete.retention.ms",
            "log.cleaner.io.buffer.load.factor", "log.cleaner.io.buffer.size", "log.cleaner.io.max.bytes.per.second",
            "log.cleaner.max.compaction.lag.ms", "log.cleaner.min.cleanable.ratio", "log.cleaner.min.compaction.lag.ms", "log.cleaner.threads",
            "log.cleanup.policy", "log.flush.interval.messages", "log.flush.interval.ms", "log.index.interval.bytes", "log.index.size.max.bytes",
            "log.local.retention.bytes", "log.local.retention.ms", "log.message.timestamp.after.max.ms", "log.message.timestamp.before.max.ms",
            "log.message.timestamp.type", "log.preallocate", "log.remote.copy.lag.bytes", "log.remote.copy.lag.ms", "log.retention.bytes",
            "log.retention.ms", "log.roll.jitter.ms", "log.roll.ms", "log.segment.bytes", "log.segment.delete.delay.ms",
            "max.decompressed.message.bytes", "message.max.bytes", "min.insync.replicas", "unclean.leader.election.enable")),
            config.entries().stream().filter(e -> !e.isReadOnly()).map(ConfigEntry::name).collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new)));
        assertTrue(config.get("num.partitions").isReadOnly());
        assertFalse(config.get("log.cleaner.threads").isReadOnly());

        // the cluster-wide default resource holds the dynamic defaults: none set here
        // (another broker's id is refused too, but Admin sends that to the broker named: see ConfigsWireTest)
        assertEquals(List.of(), List.copyOf(describe(new ConfigResource(ConfigResource.Type.BROKER, "")).entries()));
    }

    @Test
    void theCleanerConfigsAreKafkasAndATopicsCompactionSettingsReachItsLog() throws Exception
    {
        final Config config = describe(new ConfigResource(ConfigResource.Type.BROKER, "1"));
        final Map<String, String> kafkas = Map.ofEntries(Map.entry("log.cleaner.enable", "true"), Map.entry("log.cleaner.threads", "1"),
            Map.entry("log.cleaner.dedupe.buffer.size", "134217728"), Map.entry("log.cleaner.io.buffer.load.factor", "0.9"),
            Map.entry("log.cleaner.io.buffer.size", "524288"), Map.entry("log.cleaner.io.max.bytes.per.second", "1.7976931348623157E308"),
            Map.entry("log.cleaner.backoff.ms", "15000"), Map.entry("log.cleaner.min.cleanable.ratio", "0.5"),
            Map.entry("log.cleaner.delete.retention.ms", "86400000"), Map.entry("log.cleaner.min.compaction.lag.ms", "0"),
            Map.entry("log.cleaner.max.compaction.lag.ms", "9223372036854775807"));
        for (final Map.Entry<String, String> e : kafkas.entrySet())
        {
            final ConfigEntry entry = config.get(e.getKey());
            assertEquals(e.getValue(), entry.value(), e.getKey());
            assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, entry.source(), e.getKey());
        }
        assertEquals(ConfigEntry.ConfigType.DOUBLE, config.get("log.cleaner.io.max.bytes.per.second").type());
        assertEquals(ConfigEntry.ConfigType.BOOLEAN, config.get("log.cleaner.enable").type());
        assertEquals(ConfigEntry.ConfigType.LONG, config.get("log.cleaner.dedupe.buffer.size").type());

        create("compacted", Map.of("cleanup.policy", "compact"));
        final ConfigResource compacted = topic("compacted");
        alter(compacted, op("min.cleanable.dirty.ratio", "0.2", AlterConfigOp.OpType.SET), op("delete.retention.ms", "1000", AlterConfigOp.OpType.SET),
            op("min.compaction.lag.ms", "5", AlterConfigOp.OpType.SET), op("max.compaction.lag.ms", "60000", AlterConfigOp.OpType.SET));
        final LogConfig cfg = log(broker, "compacted").config();
        assertEquals(0.2, cfg.minCleanableDirtyRatio);
        assertEquals(1000L, cfg.deleteRetentionMs);
        assertEquals(5L, cfg.minCompactionLagMs);
        assertEquals(60_000L, cfg.maxCompactionLagMs);
        assertEquals(60_000L, cfg.rollMs, "a compacted log's active segment rolls at max.compaction.lag.ms");
        assertEquals(List.of("DYNAMIC_TOPIC_CONFIG:min.cleanable.dirty.ratio=0.2", "DEFAULT_CONFIG:log.cleaner.min.cleanable.ratio=0.5"),
            synonyms(describe(compacted).get("min.cleanable.dirty.ratio")));
        final Throwable tooDirty = alterFails(compacted, op("min.cleanable.dirty.ratio", "1.5", AlterConfigOp.OpType.SET));
        assertInstanceOf(InvalidConfigurationException.class, tooDirty);
        assertEquals(0.2, log(broker, "compacted").config().minCleanableDirtyRatio);
    }

    @Test
    void incrementalChangesAreDescribedAndObeyedByTheLog() throws Exception
    {
        create("orders", Map.of());
        final ConfigResource orders = topic("orders");
        alter(orders, op("max.message.bytes", "1000", AlterConfigOp.OpType.SET), op("retention.ms", "3600000", AlterConfigOp.OpType.SET));
        final Config config = describe(orders);
        assertEquals("1000", config.get("max.message.bytes").value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("max.message.bytes").source());
        assertEquals(List.of("DYNAMIC_TOPIC_CONFIG:max.message.bytes=1000", "STATIC_BROKER_CONFIG:message.max.bytes=2000000",
            "DEFAULT_CONFIG:message.max.bytes=1048588"), synonyms(config.get("max.message.bytes")));
        assertEquals("3600000", config.get("retention.ms").value());
        assertEquals(1000, log(broker, "orders").config().maxMessageBytes);
        assertEquals(3_600_000L, log(broker, "orders").config().retentionMs);

        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
        {
            final Future<?> tooLarge = producer.send(new ProducerRecord<>("orders", new byte[5_000]));
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> tooLarge.get(TIMEOUT_S, TimeUnit.SECONDS));
            assertInstanceOf(RecordTooLargeException.class, ex.getCause());

            // DELETE: back to the broker's message.max.bytes
            alter(orders, op("max.message.bytes", null, AlterConfigOp.OpType.DELETE));
            final ConfigEntry restored = describe(orders).get("max.message.bytes");
            assertEquals("2000000", restored.value());
            assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, restored.source());
            assertEquals(2_000_000, log(broker, "orders").config().maxMessageBytes);
            producer.send(new ProducerRecord<>("orders", new byte[5_000])).get(TIMEOUT_S, TimeUnit.SECONDS);
        }

        // APPEND starts from the default (delete) and adds what is not there; SUBTRACT removes
        alter(orders, op("cleanup.policy", "compact", AlterConfigOp.OpType.APPEND));
        assertEquals("delete,compact", value("orders", "cleanup.policy"));
        alter(orders, op("cleanup.policy", "compact", AlterConfigOp.OpType.APPEND));
        assertEquals("delete,compact", value("orders", "cleanup.policy"));
        assertEquals(List.of("delete", "compact"), log(broker, "orders").config().cleanupPolicy);
        alter(orders, op("cleanup.policy", "delete", AlterConfigOp.OpType.SUBTRACT));
        assertEquals("compact", value("orders", "cleanup.policy"));
        assertEquals(List.of("compact"), log(broker, "orders").config().cleanupPolicy);
        assertEquals(Map.of("retention.ms", "3600000", "cleanup.policy", "compact"), broker.broker.topics().topic("orders").overrides);
    }

    @Test
    void aLoweredRetentionDeletesOldSegments() throws Exception
    {
        // small segments (Kafka's testing-only internal.segment.bytes) holding records an hour old
        create("aged", Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "1024"));
        final long anHourAgo = System.currentTimeMillis() - 3_600_000;
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
        {
            for (int i = 0; i < 20; i++)
            {
                producer.send(new ProducerRecord<>("aged", 0, anHourAgo + i, null, new byte[300])).get(TIMEOUT_S, TimeUnit.SECONDS);
            }
        }
        final TopicPartition tp = new TopicPartition("aged", 0);
        try (var files = java.nio.file.Files.list(log(broker, "aged").dir()))
        {
            assertTrue(files.filter(f -> f.toString().endsWith(".log")).count() > 3, "segments rolled");
        }
        broker.broker.logs().runRetention(); // a retention check now, not a hope that the scheduled one ran: 48 h keeps everything
        assertEquals(0, earliest(tp));

        alter(topic("aged"), op("retention.ms", "60000", AlterConfigOp.OpType.SET));
        await(() -> earliest(tp) > 0, Duration.ofSeconds(30), "segments past retention.ms deleted");
    }

    private long earliest(final TopicPartition tp) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get(TIMEOUT_S, TimeUnit.SECONDS).offset();
    }

    @Test
    void validateOnlyAndRefusedChangesChangeNothing() throws Exception
    {
        create("guarded", Map.of("retention.ms", "60000"));
        final ConfigResource guarded = topic("guarded");
        alter(guarded, true, op("retention.ms", "1000", AlterConfigOp.OpType.SET), op("segment.ms", "5000", AlterConfigOp.OpType.SET));
        assertEquals("60000", value("guarded", "retention.ms"));
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, describe(guarded).get("segment.ms").source());
        assertEquals(60_000L, log(broker, "guarded").config().retentionMs);

        final Throwable badValue = alterFails(guarded, op("retention.ms", "soon", AlterConfigOp.OpType.SET));
        assertInstanceOf(InvalidConfigurationException.class, badValue);
        assertEquals("Invalid value soon for configuration retention.ms: Not a number of type LONG", badValue.getMessage());
        final Throwable unknownName = alterFails(guarded, op("no.such.config", "1", AlterConfigOp.OpType.SET));
        assertInstanceOf(InvalidConfigurationException.class, unknownName);
        assertEquals("Unknown topic config name: no.such.config", unknownName.getMessage());
        final Throwable notAList = alterFails(guarded, op("retention.ms", "5", AlterConfigOp.OpType.APPEND));
        assertInstanceOf(InvalidConfigurationException.class, notAList);
        assertEquals("Can't APPEND to key retention.ms because its type is not LIST.", notAList.getMessage());
        final Throwable badElement = alterFails(guarded, op("cleanup.policy", "shred", AlterConfigOp.OpType.APPEND));
        assertInstanceOf(InvalidConfigurationException.class, badElement);
        assertEquals("Invalid value shred for configuration cleanup.policy: String must be one of: compact, delete",
            badElement.getMessage());
        // one bad op refuses the resource's whole change
        assertInstanceOf(InvalidConfigurationException.class, alterFails(guarded,
            op("segment.ms", "5000", AlterConfigOp.OpType.SET), op("max.message.bytes", "-1", AlterConfigOp.OpType.SET)));
        assertInstanceOf(UnknownTopicOrPartitionException.class,
            alterFails(topic("nowhere"), op("retention.ms", "1000", AlterConfigOp.OpType.SET)));
        assertEquals(Map.of("retention.ms", "60000"), broker.broker.topics().topic("guarded").overrides);

        // the broker: a config Kafka cannot change at run time is refused (DynamicBrokerConfigsTest has the dynamic ones)
        final ConfigResource self = new ConfigResource(ConfigResource.Type.BROKER, "1");
        final Throwable dynamic = alterFails(self, op("log.retention.hours", "1", AlterConfigOp.OpType.SET));
        assertInstanceOf(InvalidRequestException.class, dynamic);
        assertEquals("Cannot update these configs dynamically: [log.retention.hours]", dynamic.getMessage());
        assertInstanceOf(InvalidRequestException.class,
            alterFails(new ConfigResource(ConfigResource.Type.BROKER, ""), op("num.partitions", "1", AlterConfigOp.OpType.SET)));
        // deleting a dynamic config that was never set succeeds, as in Kafka
        alter(self, op("log.retention.ms", null, AlterConfigOp.OpType.DELETE));
        assertEquals("48", describe(self).get("log.retention.hours").value());
    }

    @Test
    void changesSurviveARestart() throws Exception
    {
        create("durable", Map.of());
        alter(topic("durable"), op("max.message.bytes", "1000", AlterConfigOp.OpType.SET),
            op("cleanup.policy", "compact", AlterConfigOp.OpType.APPEND));
        admin.close();
        broker.restart();
        admin = broker.admin();

        final Config config = describe(topic("durable"));
        assertEquals("1000", config.get("max.message.bytes").value());
        assertEquals(ConfigEntry.ConfigSource.DYNAMIC_TOPIC_CONFIG, config.get("max.message.bytes").source());
        assertEquals("delete,compact", config.get("cleanup.policy").value());
        // the broker's own defaults stay the broker's, not the topic's, after a restart
        assertEquals(ConfigEntry.ConfigSource.DEFAULT_CONFIG, config.get("retention.ms").source());
        assertEquals("172800000", config.get("retention.ms").value());
        assertEquals(Map.of("max.message.bytes", "1000", "cleanup.policy", "delete,compact"),
            broker.broker.topics().topic("durable").overrides);
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 0)))
        {
            final ExecutionException ex = assertThrows(ExecutionException.class,
                () -> producer.send(new ProducerRecord<>("durable", new byte[5_000])).get(TIMEOUT_S, TimeUnit.SECONDS));
            assertInstanceOf(RecordTooLargeException.class, ex.getCause());
        }
    }

    @Test
    void concurrentIncrementalChangesToOneTopicAreAllKept() throws Exception
    {
        create("contended", Map.of());
        final int rounds = 20;
        final List<Thread> threads = new ArrayList<>();
        final List<Throwable> failures = new ArrayList<>();
        final Map<String, String> last = new HashMap<>();
        for (final String key : List.of("retention.ms", "segment.ms", "flush.ms"))
        {
            last.put(key, Long.toString(100_000 + rounds - 1));
            threads.add(new Thread(() ->
            {
                try (Admin own = broker.admin())
                {
                    for (int i = 0; i < rounds; i++)
                    {
                        own.incrementalAlterConfigs(Map.of(topic("contended"), List.<AlterConfigOp>of(
                            op(key, Long.toString(100_000 + i), AlterConfigOp.OpType.SET)))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                    }
                }
                catch (final Exception ex)
                {
                    synchronized (failures)
                    {
                        failures.add(ex);
                    }
                }
            }));
        }
        threads.forEach(Thread::start);
        for (final Thread t : threads)
        {
            t.join(60_000);
        }
        assertEquals(List.of(), failures);
        assertEquals(last, broker.broker.topics().topic("contended").overrides);
        final Collection<ConfigEntry> entries = describe(topic("contended")).entries();
        for (final ConfigEntry e : entries)
        {
            if (last.containsKey(e.name()))
            {
                assertEquals(last.get(e.name()), e.value(), e.name());
            }
        }
    }
}
