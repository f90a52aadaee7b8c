package io.ferrite.broker.cluster;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.e2e.RawClient;
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
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

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

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();

    @Test
    void groupsCommitAndFetchAfterARestartWithAnotherSettingAndAfterTheOffsetsTopicIsGrown() throws Exception
    {
        cluster.start();
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

    /**
     * {@code __consumer_offsets} of 2 partitions, one replica each, so that one node holds none of it. Kafka 4.4 fixes
     * the count when a node starts: every node started before the topic existed places by the setting, 2. The topic
     * grown to 3, its new partition on the node that held none: that node had never looked at the topic, and placed by
     * the count it saw first, 3, while the others kept 2, so FindCoordinator named two coordinators for one group. Then
     * a node stopped while the topic grows to 4, restarted, and the other two restarted: each starts with the image's
     * 4, as Kafka; the one that was down had fixed its stale local count (the highest partition it holds + 1) before it
     * joined. Every node, asked itself, must name the same coordinator for every group, before and after.
     */
    @Test
    void everyNodeFixesTheImagesCountWhenItJoinsNotAtItsFirstLookNorFromAStaleReplica() throws Exception
    {
        final Map<String, String> settings = Map.of("offsets.topic.num.partitions", "2", "offsets.topic.replication.factor", "1");
        cluster.start(settings);
        findCoordinator(1, "first"); // the first FindCoordinator has the controller create the topic
        final TopicDescription two;
        try (Admin admin = cluster.admin(1))
        {
            two = Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == 2
                && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE, () -> OFFSETS + " created with 2 partitions");
        }
        final Set<Integer> holders = two.partitions().stream().map(p -> p.leader().id()).collect(Collectors.toSet());
        // a node holding none, and not node 1 when another one is free (node 1 was asked before the topic existed)
        final int unseen = IntStream.of(2, 3, 1).filter(id -> !holders.contains(id)).findFirst().orElseThrow();
        grow(3, unseen, unseen == 1 ? 2 : 1);
        assertAllNodesPlaceBy(3, 2);

        final int down = holders.iterator().next();
        cluster.kill(down);
        grow(4, -1, down == 1 ? 2 : 1);
        cluster.restart(down, settings);
        for (int id = 1; id <= 3; id++)
        {
            if (id != down)
            {
                cluster.kill(id);
                cluster.restart(id, settings);
            }
        }
        assertAllNodesPlaceBy(4, 4);
    }

    /**
     * Grows {@code __consumer_offsets} to {@code count} through node {@code via}, its new partition on node {@code on}
     * (-1: the controller's choice).
     */
    private void grow(final int count, final int on, final int via) throws Exception
    {
        try (Admin admin = cluster.admin(via))
        {
            admin.createPartitions(Map.of(OFFSETS, on < 0 ? NewPartitions.increaseTo(count) :
                NewPartitions.increaseTo(count, List.of(List.of(on))))).all().get(60, TimeUnit.SECONDS);
        }
    }

    /**
     * Every node, asked itself, names for each of 6 groups the leader of its partition of {@code placedBy}, when {@code
     * __consumer_offsets} has {@code grown} partitions (the groups: those another count would send to another node).
     */
    private void assertAllNodesPlaceBy(final int grown, final int placedBy) throws Exception
    {
        final TopicDescription topic;
        try (Admin admin = cluster.admin(1))
        {
            topic = Await.awaitValue(() -> describe(admin), t -> t != null && t.partitions().size() == grown
                && t.partitions().stream().allMatch(p -> p.leader() != null), DEADLINE, () -> OFFSETS + " of " + grown + ", with leaders");
        }
        int checked = 0;
        for (int i = 0; checked < 6 && i < 10_000; i++)
        {
            final String group = "placed-group-" + i;
            final int expected = leader(topic, CoordinatorTopic.partitionFor(group, placedBy));
            // a group the other count would send elsewhere: after the growth, the topic's count; after the restarts, the
            // count the node down during the growth held locally (1 or 2: its highest partition + 1)
            if (placedBy != grown ? expected == leader(topic, CoordinatorTopic.partitionFor(group, grown))
                : expected == leader(topic, CoordinatorTopic.partitionFor(group, 2)) || expected == leader(topic, 0))
            {
                continue; // the counts agree on this group: it shows nothing
            }
            checked++;
            for (int id = 1; id <= 3; id++)
            {
                final int node = id;
                final FindCoordinatorResponseData.Coordinator answer = Await.awaitValue(() -> findCoordinator(node, group),
                    c -> c.errorCode() == Errors.NONE.code(), DEADLINE, () -> "node " + node + " to find " + group + "'s coordinator");
                assertEquals(expected, answer.nodeId(), "node " + node + " names " + group + "'s coordinator (partition "
                    + CoordinatorTopic.partitionFor(group, placedBy) + " of " + placedBy + "; " + OFFSETS + " has " + grown + ")");
            }
        }
        assertEquals(6, checked, "groups the two counts place apart");
    }

    /** FindCoordinator v4 for {@code group}, sent to node {@code id} itself. */
    private FindCoordinatorResponseData.Coordinator findCoordinator(final int id, final String group) throws Exception
    {
        try (RawClient raw = new RawClient(cluster.brokerPort(id)))
        {
            final FindCoordinatorRequestData request = new FindCoordinatorRequestData().setKeyType((byte)0).setCoordinatorKeys(List.of(group));
            return new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.FIND_COORDINATOR, (short)4, request)),
                (short)4).coordinators().get(0);
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
