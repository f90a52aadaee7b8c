package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.AtomicCounter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The consumer groups' lag counters ({@link CounterTypes#CONSUMER_LAG}): one gauge per (group, topic, partition) with
 * a committed offset, allocated when the group first commits for the partition and freed when its offset is gone
 * (deleted, expired, the group deleted or moved to another coordinator). Single writer: the group coordinator's agent,
 * which owns the committed offsets, allocates, stores (release) and frees them; readers are ferrite-stat and the
 * Prometheus endpoint. Allocating takes {@link BrokerCounters}' lock, on the agent only, never on a request path.
 *
 * <p>The label is {@code "consumer lag topic=<topic> partition=<p> group=<group>"}: a topic name and a partition have
 * no spaces, so a reader splits it without doubt; the group comes last as it may hold anything, and a label longer
 * than Agrona's 380 bytes cuts the group's tail only. The key holds -1 (no network thread) and the partition.
 *
 * <p>Bounded: at most {@link #MAX} lag counters, and never the last {@link #RESERVE} free counters of the file (kept
 * for topics); the committed offsets beyond have no counter, and their number is the {@link CounterTypes#LAG_NOT_COUNTED}
 * gauge (a warning is logged the first time).
 */
public final class LagCounters
{
    private static final Logger LOG = LoggerFactory.getLogger(LagCounters.class);
    /**
     * Lag counters at most: 4096 x 640 bytes of the file (value and metadata) = 2.5 MiB of its 10 MiB, a quarter of
     * its 16 384 counters; a broker with more committed partitions than that is watched per group with kafka_exporter
     * or kafka-consumer-groups.sh.
     */
    public static final int MAX = 4096;
    /** Free counters left to topics (a topic takes 3 per network thread: 1024 is 113 topics of 3 network threads). */
    static final int RESERVE = 1024;
    /** Broker-wide counters allocated at the start (the not-counted gauge). */
    static final int BROKER_WIDE = 1;
    static final String PREFIX = "consumer lag topic=";
    static final String PARTITION = " partition=";
    static final String GROUP = " group=";

    private final BrokerCounters counters;
    private final AtomicCounter notCounted;
    private int allocated;
    private boolean warned;

    LagCounters(final BrokerCounters counters)
    {
        this.counters = counters;
        this.notCounted = counters.allocate(CounterTypes.LAG_NOT_COUNTED, -1, 0, "consumer lag not counted (no room)");
    }

    /** A lag counter for {@code group} on {@code topic}-{@code partition}, or null when there is no room for one. */
    public AtomicCounter allocate(final String group, final String topic, final int partition)
    {
        if (allocated >= MAX || counters.available() <= RESERVE)
        {
            if (!warned)
            {
                warned = true;
                LOG.warn("no room for more consumer lag counters ({} allocated): group {} on {}-{} and later ones are not counted "
                    + "(see 'consumer lag not counted')", allocated, group, topic, partition);
            }
            return null;
        }
        allocated++;
        return counters.allocate(CounterTypes.CONSUMER_LAG, -1, partition, label(group, topic, partition));
    }

    /** Gives a lag counter back. */
    public void free(final AtomicCounter counter)
    {
        allocated--;
        counters.free(counter.id());
    }

    /** Stores how many committed offsets have no lag counter now. */
    public void notCounted(final long offsets)
    {
        notCounted.setRelease(offsets);
    }

    static String label(final String group, final String topic, final int partition)
    {
        return PREFIX + topic + PARTITION + partition + GROUP + group;
    }

    /** The group of a lag counter's {@code label} (after the first " group=" that follows " partition="), or null. */
    static String groupOf(final String label)
    {
        final int at = groupAt(label);
        return at < 0 ? null : label.substring(at + GROUP.length());
    }

    /** The topic of a lag counter's {@code label}, or null. */
    static String topicOf(final String label)
    {
        final int at = groupAt(label);
        return at < 0 ? null : label.substring(PREFIX.length(), label.indexOf(PARTITION, PREFIX.length()));
    }

    private static int groupAt(final String label)
    {
        if (!label.startsWith(PREFIX))
        {
            return -1;
        }
        final int partitionAt = label.indexOf(PARTITION, PREFIX.length());
        return partitionAt < 0 ? -1 : label.indexOf(GROUP, partitionAt);
    }
}
