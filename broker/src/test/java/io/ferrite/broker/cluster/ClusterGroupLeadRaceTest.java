package io.ferrite.broker.cluster;

import io.ferrite.broker.coordinator.PartitionOwnership;
import io.ferrite.broker.Broker;
import io.ferrite.broker.Errors;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.group.GroupCoordinator;
import io.ferrite.broker.group.GroupOwnership;
import io.ferrite.replication.ClusterNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A lead of a {@code __consumer_offsets} partition completes on its log thread; a follow heard before it completes wins:
 * the partition's groups are not served here (the race 50710d2 fixed; review of coord, M4). On a real broker's log
 * thread (held by a latch while the image's changes are told) and admin agent, its group coordinator following the
 * leaders; no controller.
 */
class ClusterGroupLeadRaceTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private Broker broker;

    @AfterEach
    void close() throws Exception
    {
        if (broker != null)
        {
            broker.close();
        }
    }

    private static ClusterNode.PartitionState state(final int leader, final int epoch)
    {
        return new ClusterNode.PartitionState(0, leader, epoch, epoch, new int[] {1, 2}, new int[] {1, 2}, new int[0]);
    }

    /** Replicated on this node alone: the coordinator's writes (acks=-1) are acknowledged by it. */
    private static ClusterNode.PartitionState alone(final int leader, final int epoch)
    {
        return new ClusterNode.PartitionState(0, leader, epoch, epoch, new int[] {1}, new int[] {1}, new int[0]);
    }

    /** Starts the broker, its groups following the leaders, and the image's changes told to it by the returned partitions. */
    private ClusterPartitions start() throws Exception
    {
        broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NODE_ID, "1", BrokerConfig.LOG_THREADS, "1",
            "replica.lag.time.max.ms", "600000")));
        broker.groups().followLeaders(groupId -> new PartitionOwnership.Located(Errors.NONE, 1, "127.0.0.1", broker.address().getPort()));
        final ClusterPartitions partitions = new ClusterPartitions(broker.topics(), broker.admin(), broker.leadership(),
            broker::executeOnOwner, () -> null, () -> null);
        partitions.coordinated(broker.groups().ownership());
        return partitions;
    }

    private static String groupOfPartition0()
    {
        for (int i = 0; ; i++)
        {
            if (CoordinatorTopic.partitionFor("g" + i, 50) == 0)
            {
                return "g" + i;
            }
        }
    }

    private <R> R onAgent(final io.ferrite.broker.coordinator.CoordinatorCall.Work<GroupCoordinator, R> work) throws Exception
    {
        final GroupCoordinator groups = broker.groups();
        return groups.agent().call(groups, work).get(30, TimeUnit.SECONDS);
    }

    /**
     * Review of coord, M4: a partition's leadership moves away (its groups unloaded: memory forgotten) and comes back:
     * the load brings back what the log holds (the offset a kafka-clients consumer committed before).
     */
    @Test
    void aPartitionLedAgainAfterAFollowIsReloadedFromItsLog() throws Exception
    {
        final ClusterPartitions partitions = start();
        final String group = groupOfPartition0();
        final ClusterNode.TopicState offsets = new ClusterNode.TopicState(GroupCoordinator.OFFSETS_TOPIC, 3, 4, 1,
            List.of(alone(1, 5)), Map.of());
        partitions.leads(offsets, alone(1, 5));
        await(() -> error(group) == Errors.NONE, DEADLINE, "led at epoch 5: loaded");

        final Map<String, Object> common = Map.of("bootstrap.servers", "127.0.0.1:" + broker.address().getPort());
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(common))
        {
            admin.createTopics(List.of(new org.apache.kafka.clients.admin.NewTopic("t", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
        }
        final Map<String, Object> consumerConfig = new java.util.HashMap<>(common);
        consumerConfig.put("group.id", group);
        consumerConfig.put("key.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        consumerConfig.put("value.deserializer", org.apache.kafka.common.serialization.ByteArrayDeserializer.class.getName());
        try (org.apache.kafka.clients.consumer.KafkaConsumer<byte[], byte[]> consumer =
            new org.apache.kafka.clients.consumer.KafkaConsumer<>(consumerConfig))
        {
            consumer.commitSync(Map.of(new org.apache.kafka.common.TopicPartition("t", 0),
                new org.apache.kafka.clients.consumer.OffsetAndMetadata(42)), Duration.ofSeconds(30));
        }
        assertEquals(42, onAgent((c, now) -> c.committed(group, "t", 0)).offset());

        partitions.follows(offsets, alone(2, 6));
        await(() -> onAgent((c, now) -> c.describe(group)) == null, DEADLINE, "unloaded once followed");
        assertEquals(Errors.NOT_COORDINATOR, error(group));

        partitions.leads(offsets, alone(1, 7));
        await(() -> error(group) == Errors.NONE, DEADLINE, "led again at epoch 7: loaded");
        assertEquals(42, onAgent((c, now) -> c.committed(group, "t", 0)).offset(), "the committed offset, from the log");
    }

    private short error(final String groupId) throws Exception
    {
        final GroupCoordinator groups = broker.groups();
        return groups.agent().call(groups, (c, now) -> c.ownership().error(groupId)).get(30, TimeUnit.SECONDS);
    }

    @Test
    void aFollowHeardBeforeTheLeadCompletedOnItsLogThreadKeepsTheGroupsElsewhere() throws Exception
    {
        final ClusterPartitions partitions = start();
        final String group = groupOfPartition0();
        final ClusterNode.TopicState offsets = new ClusterNode.TopicState(GroupCoordinator.OFFSETS_TOPIC, 3, 4, 1,
            List.of(state(1, 5)), Map.of());

        final CountDownLatch held = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        broker.executeOnOwner(0, () ->
        {
            held.countDown();
            try
            {
                release.await();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        });
        assertTrue(held.await(30, TimeUnit.SECONDS), "the log thread held");
        partitions.leads(offsets, state(1, 5)); // its lead queued behind the held task
        partitions.follows(offsets, state(2, 6)); // heard before the lead completes
        final CountDownLatch after = new CountDownLatch(1);
        broker.admin().execute(() -> broker.executeOnOwner(0, after::countDown)); // after both changes' tasks
        release.countDown();
        assertTrue(after.await(30, TimeUnit.SECONDS), "the lead's task and its completion ran");
        assertEquals(Errors.NOT_COORDINATOR, error(group), "followed: the group is coordinated elsewhere");

        partitions.leads(offsets, state(1, 7)); // and a lead nothing overtakes is served
        await(() -> error(group) == Errors.NONE, DEADLINE, "led at epoch 7: loaded and served");
    }
}
