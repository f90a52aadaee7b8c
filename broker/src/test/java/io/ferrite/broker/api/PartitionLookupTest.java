package io.ferrite.broker.api;

import io.ferrite.broker.Errors;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The error choices the handlers share, over a real registry and a real deleted topic. */
class PartitionLookupTest
{
    @TempDir
    Path dir;

    @Test
    void findsByNameBytesOrIdAndChoosesKafkasErrorForWhatIsNotThere() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final TopicRegistry registry = new TopicRegistry(logs, 1);
            registry.load();
            final Topic orders = registry.create("orders", 2, Map.of());
            final UnsafeBuffer request = new UnsafeBuffer("--orders".getBytes(StandardCharsets.UTF_8));

            assertSame(orders, PartitionLookup.find(registry, false, 0, 0, request, 2, 6));
            assertSame(orders, PartitionLookup.find(registry, true, orders.idMostSignificantBits, orders.idLeastSignificantBits,
                request, -1, -1), "by id, whatever the name fields hold");
            assertNull(PartitionLookup.find(registry, true, 1, 2, request, 2, 6), "an unknown id, even with a known name beside it");

            assertNotNull(PartitionLookup.partition(orders, 1));
            assertNull(PartitionLookup.partition(orders, 2));
            assertNull(PartitionLookup.partition(orders, -1));
            assertNull(PartitionLookup.partition(null, 0));
            assertEquals(Errors.UNKNOWN_TOPIC_ID, PartitionLookup.notFound(null, true));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, PartitionLookup.notFound(null, false));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, PartitionLookup.notFound(orders, true),
                "a known topic id without the partition, as Kafka answers");

            registry.delete(orders);
            // a request that looked the topic up before the delete still holds it
            assertNull(PartitionLookup.live(orders));
            assertNull(PartitionLookup.partition(orders, 0));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, PartitionLookup.notFound(orders, true),
                "Produce and OffsetCommit ask with the deleted topic they hold");
            assertEquals(Errors.UNKNOWN_TOPIC_ID, PartitionLookup.notFound(PartitionLookup.live(orders), true),
                "Fetch, Metadata and DeleteTopics check liveness first");
        }
    }
}
