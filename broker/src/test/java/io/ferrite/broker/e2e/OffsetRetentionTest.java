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
 * them; a group with a live member keeps its offsets however old they are. The retention is not
 * waited out: the coordinators' clock ({@link SteppedClock}) is stepped past it once every commit is
 * answered (before issue 17's build work the test waited out 5 s of retention, which a loaded
 * machine's slow commits could leave too short); the live member's session is longer than the step.
 */
class OffsetRetentionTest
{
    /** Kafka's floor (a minute); stepped past, not waited out. */
    private static final long RETENTION_MS = 60_000;

    @TempDir
    Path dir;

    @Test
    void offsetsOfAnEmptyGroupExpireAndAnActiveGroupKeepsItsOwn() throws Exception
    {
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(dir, Map.of("internal.offsets.retention.ms", Long.toString(RETENTION_MS),
            "offsets.retention.check.interval.ms", "200", "group.initial.rebalance.delay.ms", "0"), clock);
            Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic("kept", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            final TopicPartition tp = new TopicPartition("kept", 0);
            admin.alterConsumerGroupOffsets("idle", Map.of(tp, new OffsetAndMetadata(0, "idle"))).all().get(20, TimeUnit.SECONDS);
            assertTrue(listed(admin).contains("idle"), "the committed group exists at first");
            // a session longer than the step: the member is live throughout, whatever the coordinators' clock says
            try (KafkaConsumer<byte[], byte[]> member = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "busy",
                "group.protocol", "classic", ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, (int)(2 * RETENTION_MS),
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
                assertTrue(listed(admin).containsAll(Set.of("idle", "witness")), "both Empty groups kept within their retention");
                clock.step(Duration.ofMillis(RETENTION_MS + 1)); // every offset above is past its retention now
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
