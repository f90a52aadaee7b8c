package io.ferrite.broker.metrics;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;

/**
 * The consumer groups' lag counters ({@link CounterTypes#CONSUMER_LAG}): one gauge per (group, topic, partition) with
 * a committed offset, allocated when the group first commits for the partition and freed when its offset is gone
 * (deleted, expired, the group deleted or moved to another coordinator). Single writer: the group coordinator's agent,
 * which owns the committed offsets, allocates, stores (release) and frees them; readers are ferrite-stat and the
 * Prometheus endpoint. Allocating takes {@link BrokerCounters}' lock, on the agent only, never on a request path.
 *
 * <p>The label is {@code "consumer lag topic=<topic> partition=<p> group=<group>"}: a topic name and a partition have
 * no spaces, so a reader splits it without doubt; the group comes last as it may hold anything. A label that would be
 * longer than Agrona's 380 bytes ({@link CountersReader#MAX_LABEL_LENGTH}) holds, instead of the whole group, the
 * group's first bytes (cut at a character's start), {@code "#"} and the 16 hex digits of a 64-bit FNV-1a hash of the
 * whole group's UTF-8 bytes: two long groups alike in their first bytes stay two series, and {@link #isOf} finds a
 * group's counters from its whole id. The key holds -1 (no network thread) and the partition.
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
    /** Before the hash of a group too long for the label. */
    static final char HASHED = '#';
    private static final int HASH_DIGITS = 16;

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
        final AtomicCounter counter = allocated >= MAX ? null :
            counters.allocateKeeping(RESERVE, CounterTypes.CONSUMER_LAG, -1, partition, label(group, topic, partition));
        if (counter == null)
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
        return counter;
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
        final String head = PREFIX + topic + PARTITION + partition + GROUP;
        final byte[] whole = group.getBytes(StandardCharsets.UTF_8);
        final int room = CountersReader.MAX_LABEL_LENGTH - head.getBytes(StandardCharsets.UTF_8).length;
        if (whole.length <= room)
        {
            return head + group;
        }
        int cut = Math.max(0, room - 1 - HASH_DIGITS);
        while (cut > 0 && (whole[cut] & 0xC0) == 0x80) // not inside a character
        {
            cut--;
        }
        return head + new String(whole, 0, cut, StandardCharsets.UTF_8) + HASHED + hash(whole);
    }

    /** Whether lag counter {@code label} is one of {@code group}'s (its whole id, as the client knows it). */
    static boolean isOf(final String label, final String group)
    {
        final int at = groupAt(label);
        if (at < 0)
        {
            return false;
        }
        final String topic = topicOf(label);
        final int partitionAt = PREFIX.length() + topic.length() + PARTITION.length();
        try
        {
            return label.equals(label(group, topic, Integer.parseInt(label.substring(partitionAt, at))));
        }
        catch (final NumberFormatException e)
        {
            return false;
        }
    }

    /** FNV-1a, 64 bits, as 16 hex digits. */
    private static String hash(final byte[] bytes)
    {
        long h = 0xcbf29ce484222325L;
        for (final byte b : bytes)
        {
            h ^= b & 0xFF;
            h *= 0x100000001b3L;
        }
        final String hex = Long.toHexString(h);
        return "0".repeat(HASH_DIGITS - hex.length()) + hex;
    }

    /**
     * The group of a lag counter's {@code label} (after the first " group=" that follows " partition="), or null: the
     * whole group id, or for a long one its first bytes, {@code "#"} and its hash (see the class comment).
     */
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
