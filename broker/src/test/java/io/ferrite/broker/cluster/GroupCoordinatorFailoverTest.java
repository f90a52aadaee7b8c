package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A consumer group through a coordinator failover (issue 14), on three Ferrite brokers in cluster mode (child JVMs,
 * {@link ThreeNodes}): two kafka-clients consumers of one group, each bootstrapped on another node, are one group
 * (the coordinator is the leader of the group's {@code __consumer_offsets} partition, whichever node they ask); they
 * consume and commit; the coordinator's node is SIGKILLed; the group finds the new coordinator (a survivor, which
 * loaded the partition's offsets as it became its leader), rebalances and resumes: every committed offset is still
 * there, no record before a committed offset is read again by the group, and every record, those produced after the
 * kill too, is read.
 */
@Tag("slow") // three broker JVMs and a failover: about a minute
final class GroupCoordinatorFailoverTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(120);
    private static final String TOPIC = "events";
    private static final String GROUP = "failover-group";
    private static final int PARTITIONS = 4;
    private static final int RECORDS = 200;

    @RegisterExtension
    final ThreeNodes cluster = new ThreeNodes();
    /** Per partition: the offset the last successful commitSync stored (the group never reads below it again). */
    private final Map<TopicPartition, Long> acked = new HashMap<>();
    /** Per partition: the offsets the group read. */
    private final Map<TopicPartition, Set<Long>> read = new HashMap<>();
    /** Records read below their partition's acknowledged commit: committed work read again. */
    private final List<String> readAgain = new ArrayList<>();

    @Test
    void aGroupOnTwoNodesIsOneGroupAndResumesAtItsCommittedOffsetsAfterItsCoordinatorIsKilled() throws Exception
    {
        cluster.start();
        try (Admin admin = cluster.admin(1))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, PARTITIONS, (short)3))).all().get(60, TimeUnit.SECONDS);
        }
        produce(0, RECORDS / 2);

        try (KafkaConsumer<String, String> first = consumer(1, "first"); KafkaConsumer<String, String> second = consumer(2, "second"))
        {
            first.subscribe(List.of(TOPIC));
            second.subscribe(List.of(TOPIC));
            // one group: its two members share the partitions, whichever node each was bootstrapped on
            Await.await(() ->
            {
                pollAndCommit(first);
                pollAndCommit(second);
                final Set<TopicPartition> a = first.assignment();
                final Set<TopicPartition> b = second.assignment();
                final Set<TopicPartition> both = new HashSet<>(a);
                both.addAll(b);
                return !a.isEmpty() && !b.isEmpty() && both.size() == PARTITIONS && a.size() + b.size() == PARTITIONS;
            }, DEADLINE, () -> "both consumers to share the " + PARTITIONS + " partitions as one group: " + first.assignment() + " / " +
                second.assignment() + "\n" + cluster.tails("__consumer_offsets"));
            final int coordinator;
            try (Admin admin = cluster.admin(3))
            {
                final ConsumerGroupDescription group = describe(admin);
                assertEquals(2, group.members().size(), "members of " + GROUP + ": " + group);
                coordinator = group.coordinator().id();
            }

            // consume and commit about half of what is there, then kill the coordinator
            Await.await(() ->
            {
                pollAndCommit(first);
                pollAndCommit(second);
                return readCount() >= RECORDS / 4;
            }, DEADLINE, () -> "the group to read " + RECORDS / 4 + " records, read " + readCount());
            final Map<TopicPartition, Long> committedBefore = new HashMap<>(acked);
            assertTrue(committedBefore.values().stream().mapToLong(Long::longValue).sum() > 0, "offsets committed: " + committedBefore);
            cluster.kill(coordinator);
            final int survivor = coordinator == 1 ? 2 : 1;

            // the group finds its new coordinator (a survivor), rebalances, and resumes; records produced after the kill
            // are read too
            produceVia(survivor, RECORDS / 2, RECORDS);
            Await.await(() ->
            {
                pollAndCommit(first);
                pollAndCommit(second);
                return allRead();
            }, DEADLINE, () -> "the group to read every record after the kill of node " + coordinator + ": read " + read +
                ", committed " + acked + "\n" + cluster.tails("__consumer_offsets"));
            try (Admin admin = cluster.admin(survivor))
            {
                final ConsumerGroupDescription group = Await.awaitValue(() -> describe(admin),
                    g -> g.groupState() == GroupState.STABLE && g.members().size() == 2, DEADLINE,
                    () -> GROUP + " to be stable with its two members at a new coordinator");
                assertNotEquals(coordinator, group.coordinator().id(), "the coordinator after the kill of node " + coordinator);
                // no committed offset lost: what the new coordinator has is at least what was acknowledged before the kill
                final Map<TopicPartition, OffsetAndMetadata> committed = admin.listConsumerGroupOffsets(GROUP)
                    .partitionsToOffsetAndMetadata().get(60, TimeUnit.SECONDS);
                committedBefore.forEach((tp, offset) -> assertTrue(committed.get(tp) != null && committed.get(tp).offset() >= offset,
                    tp + " committed " + offset + " before the kill, now " + committed.get(tp)));
            }
            assertEquals(List.of(), readAgain, "records read again below an acknowledged commit");
        }
    }

    private static ConsumerGroupDescription describe(final Admin admin) throws Exception
    {
        return admin.describeConsumerGroups(List.of(GROUP)).describedGroups().get(GROUP).get(60, TimeUnit.SECONDS);
    }

    private KafkaConsumer<String, String> consumer(final int node, final String clientId)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + cluster.brokerPort(node)); // this node only
        props.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        props.put(ConsumerConfig.CLIENT_ID_CONFIG, clientId);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        props.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "5");
        props.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, "1000");
        props.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "10000");
        props.put(ConsumerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }

    /** One poll; each record checked against the acknowledged commits; then the positions committed (a failure retried by a later poll). */
    private void pollAndCommit(final KafkaConsumer<String, String> consumer)
    {
        for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(100)))
        {
            final TopicPartition tp = new TopicPartition(r.topic(), r.partition());
            if (r.offset() < acked.getOrDefault(tp, 0L))
            {
                readAgain.add(tp + "@" + r.offset() + " (committed " + acked.get(tp) + ")");
            }
            read.computeIfAbsent(tp, p -> new TreeSet<>()).add(r.offset());
        }
        try
        {
            final Map<TopicPartition, OffsetAndMetadata> positions = new HashMap<>();
            for (final TopicPartition tp : consumer.assignment())
            {
                positions.put(tp, new OffsetAndMetadata(consumer.position(tp, Duration.ofSeconds(5))));
            }
            if (!positions.isEmpty())
            {
                consumer.commitSync(positions, Duration.ofSeconds(5));
                positions.forEach((tp, offset) -> acked.merge(tp, offset.offset(), Math::max));
            }
        }
        catch (final KafkaException ex)
        {
            // a rebalance or the coordinator's failover under way: not acknowledged, committed again by a later call
        }
    }

    private long readCount()
    {
        return read.values().stream().mapToLong(Set::size).sum();
    }

    /** Whether the group read every offset of every partition up to its end (all {@link #RECORDS} produced). */
    private boolean allRead()
    {
        return readCount() == RECORDS;
    }

    private void produce(final int from, final int to) throws Exception
    {
        produceVia(1, from, to);
    }

    private void produceVia(final int node, final int from, final int to) throws Exception
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + cluster.brokerPort(node));
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "120000");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer()))
        {
            for (int i = from; i < to; i++)
            {
                producer.send(new ProducerRecord<>(TOPIC, i % PARTITIONS, "k" + i, "v" + i)).get(120, TimeUnit.SECONDS);
            }
        }
    }
}
