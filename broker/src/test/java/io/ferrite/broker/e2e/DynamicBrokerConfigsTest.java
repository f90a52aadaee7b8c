package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.AlterConfigsOptions;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dynamic broker configs through kafka-clients' Admin on a running broker: IncrementalAlterConfigs for this node
 * ({@code "1"}) and the cluster default ({@code ""}), DescribeConfigs reporting them with Kafka 4.4's sources and
 * synonym chains (checked against a real Kafka 4.4), Kafka's refusals and messages, values kept over a restart, and
 * their effect on the running broker: a lowered {@code log.retention.ms} default deletes old segments of a topic
 * without an override, a raised {@code log.cleaner.io.max.bytes.per.second} releases a clean its throttle held, and
 * {@code log.cleaner.threads} starts and stops cleaner threads.
 */
class DynamicBrokerConfigsTest
{
    private static final long TIMEOUT_S = 20;
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final ConfigResource SELF = new ConfigResource(ConfigResource.Type.BROKER, "1");
    private static final ConfigResource CLUSTER = new ConfigResource(ConfigResource.Type.BROKER, "");

    @TempDir
    Path dir;

    static Config describe(final Admin admin, final ConfigResource resource) throws Exception
    {
        return admin.describeConfigs(List.of(resource), new DescribeConfigsOptions().includeSynonyms(true))
            .all().get(TIMEOUT_S, TimeUnit.SECONDS).get(resource);
    }

    static void alter(final Admin admin, final ConfigResource resource, final AlterConfigOp... ops) throws Exception
    {
        admin.incrementalAlterConfigs(Map.of(resource, List.of(ops))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
    }

    private static Throwable alterFails(final Admin admin, final ConfigResource resource, final AlterConfigOp... ops)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> admin.incrementalAlterConfigs(Map.of(resource, List.of(ops))).all().get(TIMEOUT_S, TimeUnit.SECONDS));
        return ex.getCause();
    }

    static AlterConfigOp set(final String name, final String value)
    {
        return new AlterConfigOp(new ConfigEntry(name, value), AlterConfigOp.OpType.SET);
    }

    private static AlterConfigOp delete(final String name)
    {
        return new AlterConfigOp(new ConfigEntry(name, null), AlterConfigOp.OpType.DELETE);
    }

    /** An entry as "SOURCE value [SOURCE:name=value, ...]", Kafka's kafka-configs shape, for whole-chain comparisons. */
    private static String shown(final ConfigEntry e)
    {
        return e.source() + " " + e.value() + " " + e.synonyms().stream()
            .map(s -> s.source() + ":" + s.name() + "=" + s.value()).collect(Collectors.toList());
    }

    @Test
    void describedWithKafkasSourcesAndSynonymsAndKeptOverARestart() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("log.segment.bytes", "4000000")))
        {
            try (Admin admin = broker.admin())
            {
                alter(admin, SELF, set("log.retention.ms", "600000"), set("log.cleaner.threads", "2"));
                alter(admin, CLUSTER, set("log.cleaner.io.max.bytes.per.second", "1000000"), set("log.segment.bytes", "2000000"),
                    set("log.retention.ms", "700000"));
                admin.createTopics(List.of(new NewTopic("plain", 1, (short)1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                describedAsKafka(admin);
                // validateOnly checks and changes nothing
                admin.incrementalAlterConfigs(Map.of(SELF, List.of(set("log.retention.ms", "1"))), new AlterConfigsOptions().validateOnly(true))
                    .all().get(TIMEOUT_S, TimeUnit.SECONDS);
                assertEquals("600000", describe(admin, SELF).get("log.retention.ms").value());
            }
            assertTrue(Files.exists(dir.resolve("dynamic-broker-configs.properties")));
            final Set<Thread> beforeRestart = threadsNow();
            broker.restart();
            try (Admin admin = broker.admin())
            {
                describedAsKafka(admin);
                await(() -> cleanerThreadsSince(beforeRestart).equals(Set.of("ferrite-log-cleaner-0", "ferrite-log-cleaner-1")), DEADLINE,
                    "the restarted broker runs the dynamic thread count");
                alter(admin, SELF, delete("log.retention.ms"), delete("log.cleaner.threads"));
                alter(admin, CLUSTER, delete("log.retention.ms"));
                final Config self = describe(admin, SELF);
                assertEquals("DEFAULT_CONFIG 1 [DEFAULT_CONFIG:log.cleaner.threads=1]", shown(self.get("log.cleaner.threads")));
                assertEquals("DEFAULT_CONFIG 604800000 []", shown(describe(admin, // Kafka's chain drops all before log.retention.ms
                    new ConfigResource(ConfigResource.Type.TOPIC, "plain")).get("retention.ms")));
                assertEquals(List.of("log.cleaner.io.max.bytes.per.second", "log.segment.bytes"),
                    describe(admin, CLUSTER).entries().stream().map(ConfigEntry::name).sorted().toList());
            }
        }
    }

    /** What the configs set in {@link #describedWithKafkasSourcesAndSynonymsAndKeptOverARestart} look like, as Kafka 4.4 shows them. */
    private static void describedAsKafka(final Admin admin) throws Exception
    {
        final Config self = describe(admin, SELF);
        assertEquals("DYNAMIC_BROKER_CONFIG 600000 [DYNAMIC_BROKER_CONFIG:log.retention.ms=600000, "
            + "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=700000, DEFAULT_CONFIG:log.retention.hours=168]",
            shown(self.get("log.retention.ms")));
        assertEquals("DYNAMIC_BROKER_CONFIG 2 [DYNAMIC_BROKER_CONFIG:log.cleaner.threads=2, DEFAULT_CONFIG:log.cleaner.threads=1]",
            shown(self.get("log.cleaner.threads")));
        assertEquals("DYNAMIC_DEFAULT_BROKER_CONFIG 1000000.0 [DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000, "
            + "DEFAULT_CONFIG:log.cleaner.io.max.bytes.per.second=1.7976931348623157E308]",
            shown(self.get("log.cleaner.io.max.bytes.per.second")));
        assertEquals("DYNAMIC_DEFAULT_BROKER_CONFIG 2000000 [DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000, "
            + "STATIC_BROKER_CONFIG:log.segment.bytes=4000000, DEFAULT_CONFIG:log.segment.bytes=1073741824]",
            shown(self.get("log.segment.bytes")));
        assertFalse(self.get("log.retention.ms").isReadOnly());
        assertTrue(self.get("num.partitions").isReadOnly());
        assertTrue(self.get("log.retention.hours").isReadOnly(), "only the most specific synonym is dynamic in Kafka");

        final Map<String, String> defaults = new HashMap<>();
        for (final ConfigEntry e : describe(admin, CLUSTER).entries())
        {
            defaults.put(e.name(), shown(e));
        }
        assertEquals(Map.of(
            "log.cleaner.io.max.bytes.per.second", "DYNAMIC_DEFAULT_BROKER_CONFIG 1000000 "
                + "[DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.io.max.bytes.per.second=1000000]",
            "log.segment.bytes", "DYNAMIC_DEFAULT_BROKER_CONFIG 2000000 [DYNAMIC_DEFAULT_BROKER_CONFIG:log.segment.bytes=2000000]",
            "log.retention.ms", "DYNAMIC_DEFAULT_BROKER_CONFIG 700000 [DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=700000]"), defaults);

        // a topic without overrides: the value in force and the broker chain behind it
        assertEquals("DYNAMIC_BROKER_CONFIG 600000 [DYNAMIC_BROKER_CONFIG:log.retention.ms=600000, "
            + "DYNAMIC_DEFAULT_BROKER_CONFIG:log.retention.ms=700000, DEFAULT_CONFIG:log.retention.hours=168]",
            shown(describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, "plain")).get("retention.ms")));
    }

    @Test
    void refusedAsKafkaRefuses() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertRefused("Cannot update these configs dynamically: [num.partitions]", alterFails(admin, SELF, set("num.partitions", "3")));
            assertRefused("Cannot update these configs dynamically: [num.partitions]",
                alterFails(admin, CLUSTER, set("num.partitions", "3")));
            assertRefused("Cannot update these configs dynamically: [log.retention.hours]",
                alterFails(admin, SELF, set("log.retention.hours", "1")));
            assertRefused("Cannot update these configs dynamically: [log.cleaner.enable]",
                alterFails(admin, SELF, set("log.cleaner.enable", "false")));
            assertRefused("Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
                alterFails(admin, SELF, set("log.retention.ms", "abc")));
            assertRefused("Invalid value abc for configuration log.retention.ms: Not a number of type LONG",
                alterFails(admin, CLUSTER, set("log.retention.ms", "abc")));
            assertRefused("Invalid value shred for configuration log.cleanup.policy: String must be one of: compact, delete",
                alterFails(admin, SELF, set("log.cleanup.policy", "shred")));
            assertRefused("Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads cannot be increased to "
                + "more than double the current value 1 for configuration Invalid dynamic configuration",
                alterFails(admin, SELF, set("log.cleaner.threads", "3")));
            // (another broker id: the Admin sends it to that broker, not here; ConfigsWireTest sends it here)
            // nothing was kept of the refused changes; a custom name is kept, as Kafka keeps it
            assertTrue(describe(admin, CLUSTER).entries().isEmpty());
            alter(admin, SELF, set("custom.plugin.setting", "x"));
            assertEquals(ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG, describe(admin, SELF).get("custom.plugin.setting").source());
            alter(admin, SELF, delete("custom.plugin.setting"));
        }
    }

    private static void assertRefused(final String message, final Throwable refused)
    {
        assertInstanceOf(InvalidRequestException.class, refused);
        assertEquals(message, refused.getMessage());
    }

    @Test
    void aLoweredRetentionDefaultDeletesOldSegmentsOfATopicWithoutOverride() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("log.retention.check.interval.ms", "100"));
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("aging", 1, (short)1).configs(Map.of("internal.segment.bytes", "16384"))))
                .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            produce(broker, "aging", 300, 300);
            final TopicPartition tp = new TopicPartition("aging", 0);
            assertEquals(0, earliest(admin, tp));
            alter(admin, CLUSTER, set("log.retention.ms", "1"));
            await(() -> earliest(admin, tp) > 0, DEADLINE, "old segments of aging deleted by the new retention default");
            assertEquals("1", describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, "aging")).get("retention.ms").value());
        }
    }

    @Test
    void aRaisedThrottleReleasesAHeldCleanAndThreadsFollowTheirCount() throws Exception
    {
        final Set<Thread> before = threadsNow();
        try (RunningBroker broker = new RunningBroker(dir, Map.of("log.cleaner.backoff.ms", "50",
            "log.cleaner.io.max.bytes.per.second", "1", "log.cleaner.dedupe.buffer.size", "16777216"));
             Admin admin = broker.admin())
        {
            // the throttler (made as the broker starts) sleeps only once its first 300 ms period has passed (Kafka's
            // Throttler): min.compaction.lag.ms keeps every record out of a clean until 1 s after it was produced,
            // so the first clean begins after that period whatever the machine's speed
            admin.createTopics(List.of(new NewTopic("compacted", 1, (short)1).configs(Map.of("cleanup.policy", "compact",
                "internal.segment.bytes", "16384", "min.cleanable.dirty.ratio", "0.01", "min.compaction.lag.ms", "1000"))))
                .all().get(TIMEOUT_S, TimeUnit.SECONDS);
            produce(broker, "compacted", 2000, 20);
            // its first 64 KiB (reading the dirty section into the offset map) puts the clean to sleep for hours
            await(() -> cleanerThrottled(before), DEADLINE, "a clean of compacted-0 held by its 1 byte/s throttle");

            alter(admin, CLUSTER, set("log.cleaner.io.max.bytes.per.second", "1000000000"));
            await(() -> readAll(broker, "compacted") < 1000, DEADLINE, "compacted-0 cleaned once its throttle was raised");

            alter(admin, SELF, set("log.cleaner.threads", "2"));
            await(() -> cleanerThreadsSince(before).equals(Set.of("ferrite-log-cleaner-0", "ferrite-log-cleaner-1")), DEADLINE,
                "two cleaner threads");
            alter(admin, SELF, set("log.cleaner.threads", "1"));
            await(() -> cleanerThreadsSince(before).equals(Set.of("ferrite-log-cleaner-0")), DEADLINE, "one cleaner thread");
        }
    }

    /** The cleaner threads alive now that were not in {@code before} (this broker's, not another test's), by name. */
    static Set<String> cleanerThreadsSince(final Set<Thread> before)
    {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.isAlive() && t.getName().startsWith("ferrite-log-cleaner-") && !t.getName().endsWith("manager")
                && !before.contains(t))
            .map(Thread::getName).collect(Collectors.toSet());
    }

    static Set<Thread> threadsNow()
    {
        return Set.copyOf(Thread.getAllStackTraces().keySet());
    }

    private static long earliest(final Admin admin, final TopicPartition tp) throws Exception
    {
        return admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).all().get(TIMEOUT_S, TimeUnit.SECONDS).get(tp).offset();
    }

    /** {@code count} records of 100 bytes over {@code keys} keys, all acknowledged. */
    private static void produce(final RunningBroker broker, final String topic, final int count, final int keys) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.LINGER_MS_CONFIG, 5,
            ProducerConfig.BATCH_SIZE_CONFIG, 2048)))
        {
            final byte[] value = "v".repeat(100).getBytes(StandardCharsets.UTF_8);
            Future<RecordMetadata> last = null;
            for (int i = 0; i < count; i++)
            {
                last = producer.send(new ProducerRecord<>(topic, ("key-" + i % keys).getBytes(StandardCharsets.UTF_8), value));
            }
            assertEquals(count - 1, last.get(TIMEOUT_S, TimeUnit.SECONDS).offset());
        }
    }

    /** The records a consumer reads from offset 0 to the end of partition 0. */
    private static int readAll(final RunningBroker broker, final String topic)
    {
        final TopicPartition tp = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of()))
        {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final long end = consumer.endOffsets(List.of(tp)).get(tp);
            final List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
            final long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_S);
            while (consumer.position(tp) < end && System.nanoTime() < until)
            {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
            }
            return read.size();
        }
    }

    /** Whether this broker's cleaner thread is in its throttle, as its stack shows it. */
    private static boolean cleanerThrottled(final Set<Thread> before)
    {
        return Thread.getAllStackTraces().entrySet().stream().anyMatch(e -> e.getKey().getName().equals("ferrite-log-cleaner-0")
            && !before.contains(e.getKey())
            && Stream.of(e.getValue()).anyMatch(f -> f.getClassName().endsWith("CleanerThrottler")));
    }
}
