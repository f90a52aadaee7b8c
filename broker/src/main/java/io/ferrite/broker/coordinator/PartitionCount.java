package io.ferrite.broker.coordinator;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntSupplier;

/**
 * The partition count a coordinator's internal topic places its keys by ({@link CoordinatorTopic#partitionFor}),
 * one for everything that places them: FindCoordinator's placement in a cluster, the coordinator's own partition of
 * a key (its store's writes, AddOffsetsToTxn's partition of a group), its cache's sizes, its ownership's bounds. Fixed
 * once for the broker's life, as Kafka 4.4's {@code BrokerMetadataPublisher.initializeManagers} starts its group and
 * transaction coordinators with {@code metadataCache.numPartitions} of their topic or {@code
 * offsets.topic.num.partitions} / {@code transaction.state.log.num.partitions}, and they keep that number ({@code
 * GroupCoordinatorService.startup}, javap): a restart with another setting, or a CreatePartitions that grows the topic
 * (Kafka 4.4 allows it), moves no key while the broker runs, and the locator and the coordinator never disagree.
 * <ul>
 * <li>In a cluster ({@link #fixedByImage}): when the node has its first metadata image, before it leads anything or
 * answers a request: the image's count if it has the topic, else the setting, as Kafka. Its local replica (which may be
 * stale: the node was down while the topic grew) is never read for it.</li>
 * <li>On a single node: at the topic's first sight, its count as this broker's registry plans it, else the setting
 * while the topic does not exist. Not as Kafka: the setting is not fixed while the topic does not exist, so a topic
 * created with another count (by hand) places by its own.</li>
 * </ul>
 * Any thread (a CAS fixes it once).
 */
public final class PartitionCount
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionCount.class);

    private final String topic;
    private final String setting;
    private final int configured;
    /** 0 until fixed. */
    private final AtomicInteger fixed = new AtomicInteger();
    /** The existing topic's count where this broker sees it first (0: not seen): its registry; in a cluster, none. */
    private volatile IntSupplier sight;
    /** In a cluster, until the first metadata image: nothing fixes the count but {@link #imaged}. */
    private volatile boolean awaitingImage;
    /** A sight that disagrees with the fixed count was logged (once). */
    private volatile boolean disagreementLogged;

    /** {@code topic}'s count, {@code configured} by {@code setting} (its name, for the log) while it does not exist. */
    public PartitionCount(final String topic, final String setting, final int configured, final IntSupplier sight)
    {
        if (configured < 1)
        {
            throw new IllegalArgumentException(setting + " must be at least 1: " + configured);
        }
        this.topic = topic;
        this.setting = setting;
        this.configured = configured;
        this.sight = sight;
    }

    /** {@code topic}'s count as this broker's {@code topics} have it (its local replica), else {@code configured}. */
    public static PartitionCount inRegistry(final TopicRegistry topics, final String topic, final String setting, final int configured)
    {
        return new PartitionCount(topic, setting, configured, () ->
        {
            final Topic t = topics.topic(topic);
            return t == null ? 0 : t.plannedPartitions(); // a large topic is made in slices: its planned count
        });
    }

    /** A count fixed from the start (tests, and the rules that run without a broker). */
    public static PartitionCount fixedAt(final String topic, final int count)
    {
        final PartitionCount c = new PartitionCount(topic, topic + " partitions", count, () -> 0);
        c.fix(count);
        return c;
    }

    /**
     * In a cluster: the count is fixed by {@link #imaged}, at the node's first metadata image, and by nothing before
     * it (no local replica, no sight); {@link #get} answers the setting until then, fixing nothing.
     */
    public void fixedByImage()
    {
        final int f = fixed.get();
        if (f > 0)
        {
            throw new IllegalStateException(topic + "'s partition count was fixed at " + f + " before the node joined");
        }
        awaitingImage = true;
        sight = () -> 0;
    }

    /**
     * In a cluster, at the node's first metadata image: fixes the image's count ({@code imageCount}, 0 when the image
     * has no such topic), else the setting, as Kafka's {@code initializeManagers}; returns the count fixed.
     */
    public int imaged(final int imageCount)
    {
        final int f = decide(imageCount > 0 ? imageCount : configured);
        awaitingImage = false; // after the CAS: no local sight can win it
        return f;
    }

    /** The internal topic counted. */
    public String topic()
    {
        return topic;
    }

    /** The count keys are placed by: the fixed one, else the existing topic's (which fixes it), else the setting. */
    public int get()
    {
        final int f = fixed.get();
        if (f > 0)
        {
            return f;
        }
        final int seen = sight.getAsInt();
        return seen > 0 ? fix(seen) : configured;
    }

    /**
     * Fixes the count to {@code existing} (the topic's, as just seen) unless fixed already; returns the count fixed.
     * In a cluster before the first image, fixes nothing and returns {@code existing}.
     */
    public int fix(final int existing)
    {
        final int already = fixed.get();
        if (already > 0)
        {
            if (already != existing && !disagreementLogged)
            {
                disagreementLogged = true;
                LOG.info("{} seen with {} partitions; its keys stay placed by {}, fixed for this broker's life", topic, existing, already);
            }
            return already;
        }
        if (existing < 1)
        {
            throw new IllegalArgumentException(topic + " seen with " + existing + " partitions");
        }
        return awaitingImage ? existing : decide(existing);
    }

    /** Fixes {@code count} unless fixed already (a CAS from 0); returns the count fixed. */
    private int decide(final int count)
    {
        if (fixed.compareAndSet(0, count))
        {
            if (count != configured)
            {
                LOG.warn("{} has {} partitions, {} says {}: the topic's count places its keys", topic, count, setting, configured);
            }
            return count;
        }
        return fixed.get();
    }

    /** The setting: the count the topic is created with. */
    public int configured()
    {
        return configured;
    }

    /** The partition of {@code key}. */
    public int partitionFor(final String key)
    {
        return CoordinatorTopic.partitionFor(key, get());
    }
}
