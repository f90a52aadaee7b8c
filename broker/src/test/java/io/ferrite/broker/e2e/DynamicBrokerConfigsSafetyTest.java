package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidRequestException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.broker.e2e.DynamicBrokerConfigsTest.alter;
import static io.ferrite.broker.e2e.DynamicBrokerConfigsTest.cleanerThreadsSince;
import static io.ferrite.broker.e2e.DynamicBrokerConfigsTest.describe;
import static io.ferrite.broker.e2e.DynamicBrokerConfigsTest.set;
import static io.ferrite.broker.e2e.DynamicBrokerConfigsTest.threadsNow;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Dynamic broker configs that must not leave a broker half changed or unable to start: a cluster default under a
 * topic's own override that Kafka 4.4 takes (and so does this broker, restarting), cleaner settings no cleaner can
 * start with (refused with Kafka's messages, the running cleaner untouched), Kafka's static names Ferrite does not
 * know (refused), and a stored file whose values no longer hold (left out at start, each set on its own).
 */
class DynamicBrokerConfigsSafetyTest
{
    private static final long TIMEOUT_S = 20;
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final ConfigResource SELF = new ConfigResource(ConfigResource.Type.BROKER, "1");
    private static final ConfigResource CLUSTER = new ConfigResource(ConfigResource.Type.BROKER, "");

    @TempDir
    Path dir;

    private static void assertRefused(final String message, final Admin admin, final ConfigResource resource, final AlterConfigOp... ops)
    {
        final ExecutionException ex = assertThrows(ExecutionException.class,
            () -> admin.incrementalAlterConfigs(Map.of(resource, List.of(ops))).all().get(TIMEOUT_S, TimeUnit.SECONDS));
        assertInstanceOf(InvalidRequestException.class, ex.getCause());
        assertEquals(message, ex.getCause().getMessage());
    }

    private static void produceOne(final RunningBroker broker, final String topic) throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
        {
            producer.send(new ProducerRecord<>(topic, "k".getBytes(StandardCharsets.UTF_8), "v".getBytes(StandardCharsets.UTF_8)))
                .get(TIMEOUT_S, TimeUnit.SECONDS);
        }
    }

    @Test
    void aDefaultAboveATopicsOwnLagIsTakenAsKafkaTakesItAndTheBrokerRestarts() throws Exception
    {
        final ConfigResource capped = new ConfigResource(ConfigResource.Type.TOPIC, "capped");
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("capped", 1, (short)1).configs(Map.of("cleanup.policy", "compact",
                    "max.compaction.lag.ms", "60000")), new NewTopic("plain", 1, (short)1))).all().get(TIMEOUT_S, TimeUnit.SECONDS);
                // Kafka checks the two lags against each other when a topic is created or changed, not when a broker
                // default under a topic's own override changes: it takes this and its logs run with both
                alter(admin, CLUSTER, set("log.cleaner.min.compaction.lag.ms", "120000"));
                assertEquals("120000", describe(admin, capped).get("min.compaction.lag.ms").value());
                assertEquals("60000", describe(admin, capped).get("max.compaction.lag.ms").value());
                assertEquals("120000", describe(admin, new ConfigResource(ConfigResource.Type.TOPIC, "plain"))
                    .get("min.compaction.lag.ms").value());
                // and a topic change that crosses them is still refused, as Kafka refuses it
                final ExecutionException ex = assertThrows(ExecutionException.class, () -> admin.incrementalAlterConfigs(Map.of(capped,
                    List.of(set("min.compaction.lag.ms", "90000")))).all().get(TIMEOUT_S, TimeUnit.SECONDS));
                assertEquals("conflict topic config setting min.compaction.lag.ms (90000) > max.compaction.lag.ms (60000)",
                    ex.getCause().getMessage());
            }
            broker.restart();
            try (Admin admin = broker.admin())
            {
                assertEquals("120000", describe(admin, capped).get("min.compaction.lag.ms").value());
                assertEquals(ConfigEntry.ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG,
                    describe(admin, SELF).get("log.cleaner.min.compaction.lag.ms").source());
                produceOne(broker, "capped");
            }
        }
    }

    @Test
    void cleanerSettingsNoCleanerCanStartWithAreRefusedAndTheCleanerRunsOn() throws Exception
    {
        final Set<Thread> before = threadsNow();
        try (RunningBroker broker = new RunningBroker(dir, Map.of("log.cleaner.dedupe.buffer.size", "4194304")))
        {
            try (Admin admin = broker.admin())
            {
                await(() -> cleanerThreadsSince(before).equals(Set.of("ferrite-log-cleaner-0")), DEADLINE, "the broker's cleaner thread");
                final String perThread = "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.";
                assertRefused(perThread, admin, SELF, set("log.cleaner.dedupe.buffer.size", "1"));
                assertRefused(perThread, admin, CLUSTER, set("log.cleaner.dedupe.buffer.size", "1048576"));
                // 4 MiB over 2 threads holds; over 4 (two steps, each within double) it does not
                alter(admin, SELF, set("log.cleaner.threads", "2"));
                assertRefused(perThread, admin, SELF, set("log.cleaner.threads", "4"));
                assertRefused("Invalid value 0.0 for configuration log.cleaner.io.buffer.load.factor: load factor 0.0 is not in (0, 1]",
                    admin, CLUSTER, set("log.cleaner.io.buffer.load.factor", "0"));
                assertRefused("Invalid value 1.5 for configuration log.cleaner.io.buffer.load.factor: load factor 1.5 is not in (0, 1]",
                    admin, SELF, set("log.cleaner.io.buffer.load.factor", "1.5"));
                assertRefused("Invalid value 1.0E-6 for configuration log.cleaner.io.buffer.load.factor: an offset map of 87381 slots at "
                    + "load factor 1.0E-6 would be full before its first key", admin, SELF, set("log.cleaner.io.buffer.load.factor", "0.000001"));
                await(() -> cleanerThreadsSince(before).equals(Set.of("ferrite-log-cleaner-0", "ferrite-log-cleaner-1")), DEADLINE,
                    "the two cleaner threads of the last accepted change");
                assertEquals(Set.of("log.cleaner.threads"), describe(admin, SELF).entries().stream()
                    .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG).map(ConfigEntry::name).collect(Collectors.toSet()));
                assertTrue(describe(admin, CLUSTER).entries().isEmpty(), "nothing of the refused changes kept");
            }
            final Set<Thread> beforeRestart = threadsNow();
            broker.restart();
            await(() -> cleanerThreadsSince(beforeRestart).equals(Set.of("ferrite-log-cleaner-0", "ferrite-log-cleaner-1")), DEADLINE,
                "the restarted broker's two cleaner threads");
        }
    }

    @Test
    void kafkasStaticNamesAreRefusedThoughFerriteDoesNotKnowThem() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            // static in Kafka 4.4; and num.io.threads, dynamic in Kafka, has no meaning here: refused, not kept
            assertRefused("Cannot update these configs dynamically: [queued.max.requests, request.timeout.ms, num.io.threads]", admin, SELF,
                set("queued.max.requests", "7"), set("request.timeout.ms", "1000"), set("num.io.threads", "4"));
            assertRefused("Cannot update these configs dynamically: [queued.max.requests]", admin, CLUSTER, set("queued.max.requests", "7"));
            assertTrue(describe(admin, CLUSTER).entries().isEmpty());
            assertEquals(List.of(), describe(admin, SELF).entries().stream()
                .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG).map(ConfigEntry::name).toList());
        }
    }

    @Test
    void storedValuesThatNoLongerHoldAreLeftOutAtStartEachSetOnItsOwn() throws Exception
    {
        // as an older Ferrite could have stored them: the default set cannot start a cleaner, this node's set has a
        // static name of Kafka's and a value that does not parse next to good ones
        Files.writeString(dir.resolve("dynamic-broker-configs.properties"), String.join("\n",
            "default.log.cleaner.dedupe.buffer.size=1", "default.log.segment.bytes=2000000",
            "broker.log.retention.ms=600000", "broker.queued.max.requests=7", "broker.log.roll.ms=soon", "broker.custom.plugin.setting=x", ""));
        final Set<Thread> before = threadsNow();
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertTrue(describe(admin, CLUSTER).entries().isEmpty(), "the default set that cannot start a cleaner left out whole");
            assertEquals(Set.of("log.retention.ms", "custom.plugin.setting"), describe(admin, SELF).entries().stream()
                .filter(e -> e.source() == ConfigEntry.ConfigSource.DYNAMIC_BROKER_CONFIG).map(ConfigEntry::name).collect(Collectors.toSet()));
            assertEquals("600000", describe(admin, SELF).get("log.retention.ms").value());
            await(() -> cleanerThreadsSince(before).equals(Set.of("ferrite-log-cleaner-0")), DEADLINE, "the cleaner thread");
            alter(admin, CLUSTER, set("log.retention.ms", "700000"));
            broker.restart();
            try (Admin again = broker.admin())
            {
                assertEquals(Set.of("log.retention.ms"), describe(again, CLUSTER).entries().stream().map(ConfigEntry::name)
                    .collect(Collectors.toSet()), "the next change stored only what was in force");
            }
        }
    }
}
