package io.ferrite.broker.topic;

import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.Uuid;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TopicRegistryTest
{
    @TempDir
    Path dir;

    @Test
    void topicsAreFoundByNameBytesAndIdAndSurviveARestart() throws Exception
    {
        final Topic created;
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 2);
            registry.load();
            created = registry.create("orders", 3, Map.of("retention.ms", "60000"));
            assertSame(created, registry.topic("orders"));
            final byte[] name = "xxorders".getBytes(StandardCharsets.UTF_8);
            assertSame(created, registry.topic(new UnsafeBuffer(name), 2, 6));
            assertNull(registry.topic(new UnsafeBuffer(name), 0, 6));
            assertSame(created, registry.topic(created.idMostSignificantBits, created.idLeastSignificantBits));
            assertThrows(IllegalArgumentException.class, () -> registry.create("orders", 1, Map.of()));
        }

        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 2);
            registry.load();
            final Topic reloaded = registry.topic("orders");
            assertNotNull(reloaded);
            assertEquals(3, reloaded.partitions.length);
            assertEquals(created.idMostSignificantBits, reloaded.idMostSignificantBits);
            assertEquals(created.idLeastSignificantBits, reloaded.idLeastSignificantBits);
            assertEquals("60000", reloaded.overrides.get("retention.ms"));
        }
    }

    @Test
    void partitionMetadataIsKafkasFormatWithKafkasUuidText() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 1);
            registry.load();
            final Topic topic = registry.create("prices", 1, Map.of());
            final String text = Files.readString(dir.resolve("prices-0").resolve("partition.metadata"));
            final Uuid expected = new Uuid(topic.idMostSignificantBits, topic.idLeastSignificantBits);
            assertEquals("version: 0\ntopic_id: " + expected + "\n", text);
            assertEquals(expected, Uuid.fromString(TopicIds.encode(topic.idMostSignificantBits, topic.idLeastSignificantBits)));
        }
    }

    @Test
    void addedPartitionsShareTheIdAndDeletionFreesTheNameAtOnce() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 2);
            registry.load();
            final Topic topic = registry.create("fills", 1, Map.of());
            final Topic grown = registry.addPartitions(topic, 4);
            assertEquals(4, grown.partitions.length);
            assertSame(grown, registry.topic("fills"));
            assertEquals(Files.readString(dir.resolve("fills-0").resolve("partition.metadata")),
                Files.readString(dir.resolve("fills-3").resolve("partition.metadata")));

            final PartitionLog held = grown.partitions[3].log;
            registry.delete(grown);
            assertTrue(grown.isDeleted());
            assertNull(registry.topic("fills"));
            assertTrue(held.isClosed(), "a request that held the topic meets a closed log");
            for (int p = 0; p < 4; p++)
            {
                assertFalse(Files.exists(dir.resolve("fills-" + p)), "fills-" + p + " renamed out of the way before the answer");
                assertNull(logs.log("fills", p), "fills-" + p + " is free");
            }
            assertTrue(held.dir().getFileName().toString().endsWith("-delete"), "renamed to " + held.dir());
            assertTrue(Files.exists(held.dir()), "kept for file.delete.delay.ms, for reads already in its files");
            assertEquals(4, registry.create("fills", 4, Map.of()).partitions.length, "the name again, at once");
        }
    }

    @Test
    void aConfigUpdateAppliesOnlyToTheCurrentTopicAndReloadsWithoutTheBrokerDefaults() throws Exception
    {
        // a broker default (as log.retention.hours in server.properties gives one) under every topic
        final LogManagerConfig config = LogManagerConfig.of(java.util.List.of(dir), Map.of("retention.ms", "86400000"));
        try (LogManager logs = LogManager.open(config))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 1);
            registry.load();
            final Topic topic = registry.create("quotes", 2, Map.of());
            final Topic updated = registry.updateConfig(topic, Map.of("max.message.bytes", "1000"));
            assertNotNull(updated);
            assertEquals(1000, updated.partitions[1].log.config().maxMessageBytes);
            assertEquals(86_400_000L, updated.partitions[1].log.config().retentionMs);
            // a stale read-modify-write does not overwrite the change made in between
            assertNull(registry.updateConfig(topic, Map.of("segment.ms", "1000")));
            assertEquals(Map.of("max.message.bytes", "1000"), registry.topic("quotes").overrides);
        }
        try (LogManager logs = LogManager.open(config))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 1);
            registry.load();
            assertEquals(Map.of("max.message.bytes", "1000"), registry.topic("quotes").overrides, "no broker default among them");
            assertEquals(86_400_000L, registry.topic("quotes").partitions[0].log.config().retentionMs);
        }
    }

    @Test
    void aCreationOrGrowthThatFailsHalfWayLeavesNoPartitionBehind() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 2);
            registry.load();
            // logs of those names made outside the registry: partition 1 refuses
            logs.createLog("made", 1, Map.of());
            logs.createLog("grown", 2, Map.of());
            assertThrows(IllegalArgumentException.class, () -> registry.create("made", 2, Map.of()));
            assertNull(logs.log("made", 0), "a failed creation left partition 0 behind, keeping the name taken");

            final Topic grown = registry.create("grown", 1, Map.of());
            assertThrows(IllegalArgumentException.class, () -> registry.addPartitions(grown, 3));
            assertNull(logs.log("grown", 1), "a failed growth left partition 1 behind, published by the next load");
            assertSame(grown, registry.topic("grown"));
        }
    }
}
