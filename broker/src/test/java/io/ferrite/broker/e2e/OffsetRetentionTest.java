package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * offsets.retention.minutes (here in milliseconds through a testing-only property, Kafka's floor
 * being a minute): the offsets of a group that has stayed empty that long go, and the group with
 * them; a group with a live member keeps its offsets however old they are.
 */
class OffsetRetentionTest
{
    @TempDir
    Path dir;

    @Test
    void offsetsOfAnEmptyGroupExpireAndAnActiveGroupKeepsItsOwn() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("internal.offsets.retention.ms", "5000",
            "offsets.retention.check.interval.ms", "200", "group.initial.rebalance.delay.ms", "0"));
            Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("kept", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final TopicPartition tp = new TopicPartition("kept", 0);
            admin.alterConsumerGroupOffsets("idle", Map.of(tp, new OffsetAndMetadata(0, "idle"))).all().get(20, TimeUnit.SECONDS);
            // the retention leaves this check 5 s after the commit's answer (it was 1.5 s: short for a loaded machine)
            assertTrue(listed(admin).contains("idle"), "the committed group exists at first");
            try (KafkaConsumer<byte[], byte[]> member = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "busy",
                "group.protocol", "classic", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, 6000,
                ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, 300)))
            {
                member.subscribe(List.of("kept"));
                await(() ->
                {
                    member.poll(Duration.ofMillis(100));
                    return !member.assignment().isEmpty();
                }, Duration.ofSeconds(20), "busy's member joined and assigned");
                member.commitSync(Map.of(tp, new OffsetAndMetadata(0, "busy")));
                // committed after busy's: once it has expired, a retention check has seen busy's offsets past retention too
                admin.alterConsumerGroupOffsets("witness", Map.of(tp, new OffsetAndMetadata(0, "witness"))).all().get(20, TimeUnit.SECONDS);
                await(() ->
                {
                    member.poll(Duration.ofMillis(100));
                    final Set<String> groups = listed(admin);
                    return !groups.contains("idle") && !groups.contains("witness");
                }, Duration.ofSeconds(60), () -> "the idle and witness groups expired");
                assertEquals(Map.of(), admin.listConsumerGroupOffsets("idle").partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS));
                assertEquals("busy", admin.listConsumerGroupOffsets("busy").partitionsToOffsetAndMetadata().get(20, TimeUnit.SECONDS)
                    .get(tp).metadata(), "an active group keeps its offsets");
            }
        }
    }

    private static Set<String> listed(final Admin admin) throws Exception
    {
        return admin.listGroups().all().get(20, TimeUnit.SECONDS).stream().map(GroupListing::groupId)
            .collect(Collectors.toSet());
    }
}
