package io.ferrite.broker.group;

import io.ferrite.broker.metrics.LagCounters;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.Collection;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * The groups' lag on each partition they committed an offset for, kept in the broker's lag counters ({@link
 * LagCounters}) by their one writer, the coordinator's agent (which owns the committed offsets): refreshed for a group
 * once its commit is stored, and for every group by {@link GroupMetrics}' timed refresh (every {@value
 * GroupMetrics#REFRESH_MS} ms), so a lag also grows while only producers move, and shrinks when a transaction's offsets
 * commit. Lag is the partition's high watermark minus the
 * committed offset: the log end Kafka 4.4's {@code kafka-consumer-groups.sh --describe} shows and computes LAG from is a
 * ListOffsets LATEST with the Admin client's default isolation level, read_uncommitted, which Kafka answers with the
 * high watermark (the last stable offset is only for read_committed). It is not clamped: an offset committed past the
 * end shows as a negative lag, as the tool shows it. A partition whose topic is gone keeps its last value until its
 * offset goes (after a DeleteTopics the coordinator deletes it: {@link TopicDeletions}).
 *
 * <p>The refresh walks the groups and their offsets with visitors made once and stores each lag with a release store;
 * a counter is allocated at a partition's first commit and freed by the refresh that finds its offset gone (the only
 * steps that allocate: the walk of an unchanged set of offsets allocates nothing). With {@link LagCounters#MAX} reached,
 * the offsets beyond are counted as not counted and tried again at each refresh.
 */
final class GroupLag
{
    private static final class Lag
    {
        final AtomicCounter counter;
        long pass;
        /** The partition, looked up again when the registry published a change ({@link #topicsVersion}); null: none. */
        Partition partition;
        long topicsVersion = -1;

        Lag(final AtomicCounter counter)
        {
            this.counter = counter;
        }
    }

    private final Map<String, Group> groups;
    private final TopicRegistry topics;
    private final Map<String, Map<Group.TopicPartition, Lag>> byGroup = new HashMap<>();
    private final BiConsumer<String, Group> groupVisitor = (id, group) -> refresh(group);
    private final BiConsumer<Group.TopicPartition, Group.Offset> offsetVisitor = this::refresh;
    private LagCounters counters; // null: none (a coordinator without a broker's counters)
    private Group visiting;
    private Map<Group.TopicPartition, Lag> visitingLags;
    private long pass;
    private int live;
    private int seen;
    private int notCounted;
    /** The registry's list of topics last seen: it publishes a new list at each change, and only then. */
    private Collection<Topic> topicsSeen;
    private long topicsVersion;

    GroupLag(final Map<String, Group> groups, final TopicRegistry topics)
    {
        this.groups = groups;
        this.topics = topics;
    }

    /** Where the lags go (before the agent starts). */
    void counters(final LagCounters lagCounters)
    {
        this.counters = lagCounters;
    }

    /** Every group's lags, and the counters of offsets gone freed. */
    void refreshAll()
    {
        if (counters == null)
        {
            return;
        }
        checkTopics();
        pass++;
        seen = 0;
        notCounted = 0;
        groups.forEach(groupVisitor);
        if (seen < live)
        {
            sweep();
        }
        counters.notCounted(notCounted);
    }

    /** A commit of {@code groupId} was stored: its lags now (its new partitions get their counters). */
    void committed(final String groupId)
    {
        final Group group = counters == null ? null : groups.get(groupId);
        if (group != null)
        {
            checkTopics();
            refresh(group);
        }
    }

    private void refresh(final Group group)
    {
        if (group.offsets.isEmpty())
        {
            return;
        }
        visiting = group;
        visitingLags = byGroup.get(group.groupId);
        group.offsets.forEach(offsetVisitor);
        visiting = null;
        visitingLags = null;
    }

    private void refresh(final Group.TopicPartition tp, final Group.Offset offset)
    {
        Lag lag = visitingLags == null ? null : visitingLags.get(tp);
        if (lag == null)
        {
            final AtomicCounter counter = counters.allocate(visiting.groupId, tp.topic(), tp.partition());
            if (counter == null)
            {
                notCounted++;
                return;
            }
            if (visitingLags == null)
            {
                visitingLags = new HashMap<>();
                byGroup.put(visiting.groupId, visitingLags);
            }
            lag = new Lag(counter);
            visitingLags.put(tp, lag);
            live++;
        }
        if (lag.pass != pass)
        {
            lag.pass = pass;
            seen++;
        }
        if (lag.topicsVersion != topicsVersion)
        {
            // a lookup by name allocates: only after a change of topics, not at each refresh
            final Topic topic = topics.topic(tp.topic());
            lag.partition = topic != null && tp.partition() < topic.partitions.length ? topic.partitions[tp.partition()] : null;
            lag.topicsVersion = topicsVersion;
        }
        if (lag.partition != null)
        {
            lag.counter.setRelease(lag.partition.log.highWatermark() - offset.offset());
        }
    }

    private void checkTopics()
    {
        final Collection<Topic> now = topics.topics();
        if (now != topicsSeen)
        {
            topicsSeen = now;
            topicsVersion++;
        }
    }

    /** Frees the counters of offsets this pass did not find (deleted, expired, their group gone or moved). */
    private void sweep()
    {
        final Iterator<Map<Group.TopicPartition, Lag>> groupsLags = byGroup.values().iterator();
        while (groupsLags.hasNext())
        {
            final Map<Group.TopicPartition, Lag> lags = groupsLags.next();
            final Iterator<Lag> each = lags.values().iterator();
            while (each.hasNext())
            {
                final Lag lag = each.next();
                if (lag.pass != pass)
                {
                    each.remove();
                    counters.free(lag.counter);
                    live--;
                }
            }
            if (lags.isEmpty())
            {
                groupsLags.remove();
            }
        }
    }
}
