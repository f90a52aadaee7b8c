package io.ferrite.broker.group;

import io.ferrite.broker.metrics.BrokerCounters;
import io.ferrite.broker.metrics.CounterReadings;
import io.ferrite.broker.metrics.CounterTypes;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the coordinator's agent writes about its groups ({@link GroupMetrics}, {@link GroupLag}), driven here as the
 * agent drives it (its ticks, a stored commit) over real topics and logs: the lag per partition from the high
 * watermark, refreshed on a commit at once and on the timer otherwise, counters freed with their offsets and groups,
 * groups counted by state, and a refresh over an unchanged set of offsets allocating nothing on its thread.
 */
class GroupMetricsTest
{
    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private BrokerCounters counters;
    private final Map<String, Group> groups = new HashMap<>();
    private GroupMetrics metrics;
    private Topic orders;

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer
        orders = topics.create("orders", 2, Map.of());
        counters = BrokerCounters.inMemory(1, 4096);
        metrics = new GroupMetrics(groups, topics);
        metrics.counters(counters.lag(), counters.groups());
    }

    @AfterEach
    void close() throws Exception
    {
        logs.close();
    }

    @Test
    void lagPerPartitionRefreshedOnCommitAndOnTheTimerAndFreedWithItsOffset()
    {
        orders.partitions[0].log.highWatermark(100);
        orders.partitions[1].log.highWatermark(100);
        final Group g = group("g", Group.State.STABLE);
        commit(g, 0, 40);
        assertEquals(List.of(lag("g", 0, 60)), lags(), "refreshed on the commit, before any tick");
        commit(g, 1, 100);
        assertEquals(List.of(lag("g", 0, 60), lag("g", 1, 0)), lags());

        orders.partitions[1].log.highWatermark(125); // only producers move
        metrics.tick(0);
        assertEquals(List.of(lag("g", 0, 60), lag("g", 1, 25)), lags());
        orders.partitions[1].log.highWatermark(130);
        metrics.tick(GroupMetrics.REFRESH_MS - 1);
        assertEquals(List.of(lag("g", 0, 60), lag("g", 1, 25)), lags(), "not before the refresh is due");
        metrics.tick(GroupMetrics.REFRESH_MS);
        assertEquals(List.of(lag("g", 0, 60), lag("g", 1, 30)), lags());
        assertEquals(1L, figure(CounterTypes.GROUPS, 3), "one Stable group");
        assertEquals(0L, figure(CounterTypes.GROUPS, 0), "no Empty one");
        assertEquals(2L, figure(CounterTypes.OFFSETS, 0));
        assertEquals(2L, figure(CounterTypes.OFFSET_COMMITS, 0));

        g.offsets.remove(new Group.TopicPartition("orders", 0)); // an OffsetDelete or an expiry
        metrics.tick(2 * GroupMetrics.REFRESH_MS);
        assertEquals(List.of(lag("g", 1, 30)), lags(), "the deleted offset's counter freed");
        groups.remove("g"); // the group deleted
        metrics.tick(3 * GroupMetrics.REFRESH_MS);
        assertEquals(List.of(), lags());
        assertEquals(0L, figure(CounterTypes.OFFSETS, 0));
        assertEquals(0L, figure(CounterTypes.GROUPS, 3));
    }

    @Test
    void aTopicDeletedAndMadeAgainIsLookedUpAgain() throws Exception
    {
        orders.partitions[0].log.highWatermark(10);
        final Group g = group("g", Group.State.EMPTY);
        commit(g, 0, 4);
        assertEquals(List.of(lag("g", 0, 6)), lags());
        topics.delete(orders);
        metrics.tick(0);
        assertEquals(List.of(lag("g", 0, 6)), lags(), "a topic gone: the last value kept");
        final Topic again = topics.create("orders", 1, Map.of());
        again.partitions[0].log.highWatermark(5);
        metrics.tick(GroupMetrics.REFRESH_MS);
        assertEquals(List.of(lag("g", 0, 1)), lags(), "the new topic's partition read");
    }

    @Test
    void aRefreshOfUnchangedOffsetsAllocatesNothing()
    {
        for (int i = 0; i < 50; i++)
        {
            final Group g = group("group-" + i, i % 2 == 0 ? Group.State.STABLE : Group.State.EMPTY);
            commit(g, 0, i);
            commit(g, 1, i);
        }
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long me = Thread.currentThread().getId();
        long now = 0;
        for (int i = 0; i < 20_000; i++) // warmed up, compiled
        {
            metrics.tick(now += GroupMetrics.REFRESH_MS);
        }
        final long before = threads.getThreadAllocatedBytes(me);
        for (int i = 0; i < 10_000; i++)
        {
            orders.partitions[0].log.highWatermark(1000 + i);
            metrics.tick(now += GroupMetrics.REFRESH_MS);
        }
        final long allocated = threads.getThreadAllocatedBytes(me) - before;
        assertEquals(0, allocated, "10 000 refreshes of 100 lags: " + allocated + " B");
        assertEquals(1000 + 9_999 - 7, lags().stream().filter(l -> l.group().equals("group-7") && l.partition() == 0)
            .findFirst().orElseThrow().value());
        assertEquals(25L, figure(CounterTypes.GROUPS, 3));
        assertEquals(25L, figure(CounterTypes.GROUPS, 0));
        assertEquals(100L, figure(CounterTypes.OFFSETS, 0));
    }

    private Group group(final String id, final Group.State state)
    {
        final Group g = new Group(id);
        g.state = state;
        groups.put(id, g);
        return g;
    }

    /** A commit as OffsetCommits stores it once its write is answered, then counted. */
    private void commit(final Group g, final int partition, final long offset)
    {
        g.offsets.put(new Group.TopicPartition("orders", partition), new Group.Offset(offset, -1, "", 0, 0));
        metrics.committed(g.groupId, 1);
    }

    private List<CounterReadings.Lag> lags()
    {
        return CounterReadings.lags(counters.reader());
    }

    private static CounterReadings.Lag lag(final String group, final int partition, final long value)
    {
        return new CounterReadings.Lag(group, "orders", partition, value);
    }

    private long figure(final int type, final int code)
    {
        return CounterReadings.summed(counters.reader()).get(new CounterReadings.Figure(type, CounterReadings.ALL_THREADS,
            code, null));
    }
}
