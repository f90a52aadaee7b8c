package io.ferrite.broker.cluster;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Three nodes: groups commit offsets in {@code __consumer_offsets} (50 partitions, the default); a node restarted with
 * {@code offsets.topic.num.partitions=7} and made the preferred leader again; then the topic grown to 57 by
 * CreatePartitions, which Kafka 4.4 allows. Kafka 4.4's group coordinator places groups by the count it started with
 * (the image's, else the setting), for FindCoordinator and for itself alike. Ferrite's placement read the image's live
 * count while its group coordinator kept the count fixed at the topic's first sight, so a group that 50 and 57 place on
 * partitions led by different nodes was sent to a node that answered NOT_COORDINATOR for ever: its offsets could be
 * neither fetched nor committed. With one count for both, every group's offsets committed before are found, and new
 * ones commit, through the real Consumer and Admin.
 */
@Tag("slow") // three broker JVMs, one restarted: about two minutes
final class OffsetsGrownPartitionsTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "grown-offsets";
    private static final String OFFSETS = "__consumer_offsets";
    private static final int BEFORE = 50;
    private static final int AFTER = 57;
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    private ThreeNodes cluster;

    @AfterEach
    void stop() throws InterruptedException
    {
        if (cluster != null)
        {
            cluster.close();
        }
    }

    @Test
    void groupsCommitAndFetchAfterARestartWithAnotherSettingAndAfterTheOffsetsTopicIsGrown() throws Exception
    {
        cluster = new ThreeNodes(dir).start();
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)3))).all().get(60, TimeUnit.SECONDS);
        }
        produce(6);
        // groups that 50 and 57 place on different partitions: which of them are led apart is known after the growth
        final List<String> groups = new ArrayList<>();
        for (int i = 0; groups.size() < 12; i++)
        {
            final String group = "grown-group-" + i;
            if (CoordinatorTopic.partitionFor(group, BEFORE) != CoordinatorTopic.partitionFor(group, AFTER))
            {
                groups.add(group);
            }
        }
        for (final String group : groups)
        {
            commit(group, 2); // the first FindCoordinator has the controller create __consumer_offsets
        }

        // a node restarted with another setting places groups by the topic's count, as Kafka takes the image's
        cluster.kill(3);
        cluster.restart(3, Map.of("offsets.topic.num.partitions", "7"));
        try (Admin admin = cluster.admin(1))
        {
            Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == BEFORE
                && t.partitions().stream().allMatch(p -> p.isr().size() == 3), DEADLINE, () -> OFFSETS + " with node 3 in every ISR");
            final Set<TopicPartition> all = IntStream.range(0, BEFORE).mapToObj(p -> new TopicPartition(OFFSETS, p)).collect(Collectors.toSet());
            admin.electLeaders(ElectionType.PREFERRED, all).partitions().get(60, TimeUnit.SECONDS); // node 3 leads its share again
            Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().stream()
                .allMatch(p -> p.leader() != null && p.leader().id() == p.replicas().get(0).id()), DEADLINE,
                () -> OFFSETS + " led by its preferred replicas");
            for (final String group : groups)
            {
                assertEquals(2, fetched(admin, group), group + "'s offset after node 3's restart with 7");
            }
        }

        final TopicDescription grown;
        try (Admin admin = cluster.admin(1))
        {
            admin.createPartitions(Map.of(OFFSETS, NewPartitions.increaseTo(AFTER))).all().get(60, TimeUnit.SECONDS);
            grown = Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == AFTER
                && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE, () -> OFFSETS + " grown, with leaders");
        }
        final List<String> apart = groups.stream().filter(g -> leader(grown, CoordinatorTopic.partitionFor(g, BEFORE))
            != leader(grown, CoordinatorTopic.partitionFor(g, AFTER))).toList();
        assertFalse(apart.isEmpty(), "groups placed by 50 and 57 on partitions of different leaders: " + groups);
        try (Admin admin = cluster.admin(2))
        {
            for (final String group : groups)
            {
                try
                {
                    assertEquals(2, fetched(admin, group), group + "'s offset committed before the growth");
                    commit(group, 4);
                    assertEquals(4, fetched(admin, group), group + "'s offset committed after the growth");
                }
                catch (final KafkaException | ExecutionException ex)
                {
                    final int before = CoordinatorTopic.partitionFor(group, BEFORE);
                    final int after = CoordinatorTopic.partitionFor(group, AFTER);
                    throw new AssertionError(group + " (partition " + before + " of " + BEFORE + " led by " + leader(grown, before) +
                        ", " + after + " of " + AFTER + " led by " + leader(grown, after) + ") failed after the growth", ex);
                }
            }
            // a member of a group led apart joins, resumes at the committed offset and commits where it read to
            for (final String group : apart.subList(0, Math.min(2, apart.size())))
            {
                assertEquals(4, resume(group), group + ": the first offset its member read");
                assertEquals(5, fetched(admin, group), group + "'s offset committed by its member");
            }
        }
    }

    /** Commits {@code offset} for {@code group} through an assigned Consumer (FindCoordinator, then OffsetCommit). */
    private void commit(final String group, final long offset)
    {
        try (KafkaConsumer<String, String> consumer = consumer(group))
        {
            consumer.assign(List.of(TP));
            consumer.commitSync(Map.of(TP, new OffsetAndMetadata(offset)), Duration.ofSeconds(60));
        }
    }

    /** A subscribed member of {@code group}: the offset of the first record it reads, after which it commits its position. */
    private long resume(final String group)
    {
        try (KafkaConsumer<String, String> consumer = consumer(group))
        {
            consumer.subscribe(List.of(TOPIC));
            final List<ConsumerRecord<String, String>> read = new ArrayList<>();
            Await.await(() ->
            {
                consumer.poll(Duration.ofMillis(200)).forEach(read::add);
                return !read.isEmpty();
            }, DEADLINE, () -> group + "'s member to read a record");
            consumer.commitSync(Map.of(TP, new OffsetAndMetadata(read.get(0).offset() + 1)), Duration.ofSeconds(60));
            return read.get(0).offset();
        }
    }

    private KafkaConsumer<String, String> consumer(final String group)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ConsumerConfig.GROUP_ID_CONFIG, group);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"); // resumes at the committed offset or fails
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "1");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000");
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** The offset Admin's OffsetFetch finds for {@code group} on the topic's partition (-1: none). */
    private static long fetched(final Admin admin, final String group) throws Exception
    {
        final OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS).get(TP);
        return o == null ? -1 : o.offset();
    }

    private void produce(final int count) throws Exception
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, cluster.bootstrap());
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer()))
        {
            for (int i = 0; i < count; i++)
            {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, "r" + i)).get(60, TimeUnit.SECONDS);
            }
        }
    }

    private static int leader(final TopicDescription topic, final int partition)
    {
        return topic.partitions().stream().filter(p -> p.partition() == partition).findFirst().orElseThrow().leader().id();
    }

    private static TopicDescription describe(final Admin admin) throws InterruptedException
    {
        try
        {
            return admin.describeTopics(List.of(OFFSETS)).allTopicNames().get(30, TimeUnit.SECONDS).get(OFFSETS);
        }
        catch (final ExecutionException | java.util.concurrent.TimeoutException ex)
        {
            return null;
        }
    }
}
