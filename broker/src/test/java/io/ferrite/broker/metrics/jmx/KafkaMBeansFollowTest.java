package io.ferrite.broker.metrics.jmx;

import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.replica.FollowedPartition;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * How {@link KafkaMBeans} follows the topics, each pass run here on the test's thread ({@link KafkaMBeans#followTopics};
 * its own thread's passes do the same, under the same monitor): only the partitions this node hosts have
 * {@code kafka.log} gauges and count in {@code PartitionCount} (cluster mode marks the others unassigned), a topic
 * deleted and made again between two passes gets new MBeans, and a pass with no change allocates nothing.
 */
class KafkaMBeansFollowTest
{
    private static final String PARTITION_COUNT = "kafka.server:type=ReplicaManager,name=PartitionCount";

    @TempDir
    Path dir;
    private BrokerCounters counters;
    private LogManager logs;
    private TopicRegistry topics;
    private KafkaMBeans beans;

    @BeforeEach
    void open() throws Exception
    {
        counters = BrokerCounters.create(Files.createDirectories(dir.resolve("counters")), 1);
        logs = LogManager.open(LogManagerConfig.of(Files.createDirectories(dir.resolve("logs"))));
        topics = new TopicRegistry(logs, 1);
        topics.onChange(counters::topicsChanged);
        topics.load(); // this thread is the topics' writer
    }

    @AfterEach
    void close() throws Exception
    {
        if (beans != null)
        {
            beans.close();
        }
        logs.close();
        counters.close();
    }

    @Test
    void onlyThePartitionsHostedHereHaveLogGaugesAndCount() throws Exception
    {
        // cluster mode: the registry holds every partition of the topic; the image assigned only partition 0 here
        final Topic topic = topics.create("spread", 3, Map.of());
        topic.partition(1).followed(FollowedPartition.unassigned(topic.partition(1)));
        topic.partition(2).followed(FollowedPartition.unassigned(topic.partition(2)));
        beans = KafkaMBeans.register(counters, topics, false);
        assertEquals(1, gauge(PARTITION_COUNT), "as Kafka's: the partitions this node hosts a replica of");
        assertNotNull(beans.bean(size("spread", 0)));
        assertNull(beans.bean(size("spread", 1)), "no log MBeans of a partition not hosted here");
        assertNull(beans.bean(size("spread", 2)));

        // the image assigns partition 1 here, a follower of node 2; partition 0 moves away
        final Partition one = topic.partition(1);
        one.followed(new FollowedPartition(one, 2, 0, topic.idMostSignificantBits, topic.idLeastSignificantBits));
        topic.partition(0).followed(FollowedPartition.unassigned(topic.partition(0)));
        beans.followTopics();
        assertEquals(1, gauge(PARTITION_COUNT));
        assertNull(beans.bean(size("spread", 0)), "moved away: its gauges go");
        assertNotNull(beans.bean(size("spread", 1)), "assigned: its gauges come");
        assertEquals(0L, ((Gauge)beans.bean(size("spread", 1))).getValue());
        assertNull(beans.bean(size("spread", 2)));
    }

    @Test
    void aTopicDeletedAndMadeAgainBetweenTwoPassesGetsNewMBeans() throws Exception
    {
        topics.create("again", 2, Map.of());
        beans = KafkaMBeans.register(counters, topics, true);
        final Object meter = beans.bean(messagesIn("again"));
        assertNotNull(meter);
        assertNotNull(beans.bean(size("again", 1)));
        synchronized (beans) // no pass of the MBeans' thread in between
        {
            topics.delete(topics.topic("again"));
            topics.create("again", 1, Map.of());
        }
        beans.followTopics();
        assertNull(beans.bean(size("again", 1)), "the new topic has one partition");
        assertNotNull(beans.bean(size("again", 0)));
        assertNotSame(meter, beans.bean(messagesIn("again")), "the new topic's meters count from its making");
        assertEquals(1, gauge(PARTITION_COUNT));
    }

    @Test
    void aPassWithNoChangeAllocatesNothing() throws Exception
    {
        for (int t = 0; t < 20; t++)
        {
            topics.create("quiet-" + t, 2, Map.of());
        }
        beans = KafkaMBeans.register(counters, topics, true);
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        beans.followTopics();
        threads.getCurrentThreadAllocatedBytes();
        final long before = threads.getCurrentThreadAllocatedBytes();
        beans.followTopics();
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;
        // an iterator or two at most; refinding the topics' counters allocates tens of kilobytes
        assertTrue(allocated < 1024, allocated + " bytes allocated by a pass with nothing changed");
        topics.create("loud", 1, Map.of());
        beans.followTopics();
        assertNotNull(beans.bean(messagesIn("loud")), "a change is followed");
    }

    private Object gauge(final String name) throws Exception
    {
        return ((Gauge)beans.bean(name)).getValue();
    }

    private static String size(final String topic, final int partition)
    {
        return "kafka.log:type=Log,name=Size,topic=" + topic + ",partition=" + partition;
    }

    private static String messagesIn(final String topic)
    {
        return "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=" + topic;
    }
}
