package io.ferrite.broker.cluster;

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

    private short error(final String groupId) throws Exception
    {
        final GroupCoordinator groups = broker.groups();
        return groups.agent().call(groups, (c, now) -> c.ownership().error(groupId)).get(30, TimeUnit.SECONDS);
    }

    @Test
    void aFollowHeardBeforeTheLeadCompletedOnItsLogThreadKeepsTheGroupsElsewhere() throws Exception
    {
        broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NODE_ID, "1", BrokerConfig.LOG_THREADS, "1",
            "replica.lag.time.max.ms", "600000")));
        broker.groups().followLeaders(groupId -> new GroupOwnership.Located(Errors.NONE, 1, "127.0.0.1", 9092));
        final ClusterPartitions partitions = new ClusterPartitions(broker.topics(), broker.admin(), broker.leadership(),
            broker::executeOnOwner, () -> null, () -> null);
        partitions.coordinatedGroups(broker.groups().ownership());
        String group = null;
        for (int i = 0; group == null; i++)
        {
            group = CoordinatorTopic.partitionFor("g" + i, 50) == 0 ? "g" + i : null;
        }
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

        final String g = group;
        partitions.leads(offsets, state(1, 7)); // and a lead nothing overtakes is served
        await(() -> error(g) == Errors.NONE, DEADLINE, "led at epoch 7: loaded and served");
    }
}
