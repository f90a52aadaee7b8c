package io.ferrite.broker.cluster;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.replication.ClusterNode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * A replica removal that takes a topic's logs with it stops every partition of the topic led or followed here first,
 * on a real broker's log threads and admin agent (the image is told as the loader tells it; no controller).
 */
class ClusterPartitionsStopTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private Broker broker;
    private volatile LocalRemoval.Image image;

    @AfterEach
    void close() throws Exception
    {
        if (broker != null)
        {
            broker.close();
        }
    }

    private static LocalRemoval.Image image(final ClusterNode.TopicState... known)
    {
        return new LocalRemoval.Image()
        {
            @Override
            public Optional<ClusterNode.TopicState> topic(final String name)
            {
                return List.of(known).stream().filter(t -> t.name().equals(name)).findFirst();
            }

            @Override
            public int nodeId()
            {
                return 1;
            }
        };
    }

    private static ClusterNode.PartitionState state(final int partition, final int... replicas)
    {
        return new ClusterNode.PartitionState(partition, replicas[0], 5, 6, replicas, replicas, new int[0]);
    }

    @Test
    void bothPartitionsOfATopicMovedAwayAreStoppedBeforeItsLogsGo() throws Exception
    {
        broker = Broker.start(BrokerConfig.of(Map.of(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0",
            BrokerConfig.LOG_DIR, dir.toString(), BrokerConfig.NODE_ID, "1", BrokerConfig.LOG_THREADS, "2",
            "replica.lag.time.max.ms", "600000"))); // LeaderDuty's periodic pass (every 300 s) would drop a stale leader state
        final ClusterPartitions partitions = new ClusterPartitions(broker.topics(), broker.admin(), broker.leadership(),
            broker::executeOnOwner, () -> null, () -> image);
        final ClusterNode.TopicState led = new ClusterNode.TopicState("t", 3, 4, 2, List.of(state(0, 1, 2), state(1, 1, 2)),
            Map.of());
        image = image(led);
        partitions.leads(led, state(0, 1, 2));
        partitions.leads(led, state(1, 1, 2));
        await(() -> broker.topics().topic("t") != null && broker.topics().topic("t").partitions.length == 2 &&
            broker.topics().topic("t").partition(0).replicas() != null && broker.topics().topic("t").partition(1).replicas() != null,
            DEADLINE, "both partitions led here");
        final Topic local = broker.topics().topic("t");
        final Partition p0 = local.partition(0);
        final Partition p1 = local.partition(1);

        // a reassignment moved both partitions to {2, 3}: the loader tells them one after the other
        image = image(new ClusterNode.TopicState("t", 3, 4, 2, List.of(state(0, 2, 3), state(1, 2, 3)), Map.of()));
        partitions.stopped("t", 0);
        partitions.stopped("t", 1);
        await(local::isDeleted, DEADLINE, "the topic's logs deleted once no replica of it is here");
        for (final Partition p : List.of(p0, p1))
        {
            await(() -> p.replicas() == null, DEADLINE, () -> p + " still led (its LeaderReplicas installed on a deleted log)");
            assertNotNull(p.followed(), p + ": not served as a single node's either");
        }
    }
}
