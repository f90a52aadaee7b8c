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
 * at the topic's first sight for the broker's life — the existing topic's count (its local replica, or in a cluster
 * the metadata image's), else the setting while the topic does not exist — as Kafka 4.4's {@code
 * BrokerMetadataPublisher.initializeManagers} starts its group and transaction coordinators with {@code
 * metadataCache.numPartitions} of their topic or {@code offsets.topic.num.partitions} / {@code
 * transaction.state.log.num.partitions}, and they keep that number ({@code GroupCoordinatorService.startup}, javap): a
 * restart with another setting, or a CreatePartitions that grows the topic (Kafka 4.4 allows it), moves no key while
 * the broker runs, and the locator and the coordinator never disagree. Not as Kafka: while the topic does not exist
 * the setting is not fixed yet, so a topic created with another count (by hand) places by its own. Any thread (a CAS
 * fixes it once).
 */
public final class PartitionCount
{
    private static final Logger LOG = LoggerFactory.getLogger(PartitionCount.class);

    private final String topic;
    private final String setting;
    private final int configured;
    /** 0 until fixed. */
    private final AtomicInteger fixed = new AtomicInteger();
    /** The existing topic's count where this broker sees it first (0: not seen): its registry; in a cluster, also the image. */
    private volatile IntSupplier sight;

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
            return t == null ? 0 : t.partitions.length;
        });
    }

    /** A count fixed from the start (tests, and the rules that run without a broker). */
    public static PartitionCount fixedAt(final String topic, final int count)
    {
        final PartitionCount c = new PartitionCount(topic, topic + " partitions", count, () -> 0);
        c.fix(count);
        return c;
    }

    /** In a cluster: the topic is also seen in the metadata image ({@code image}: its count there, 0 when it has none). */
    public void alsoSeenIn(final IntSupplier image)
    {
        final IntSupplier local = sight;
        sight = () ->
        {
            final int n = local.getAsInt();
            return n > 0 ? n : image.getAsInt();
        };
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

    /** Fixes the count to {@code existing} (the topic's, as just seen) unless fixed already; returns the count fixed. */
    public int fix(final int existing)
    {
        if (existing < 1)
        {
            throw new IllegalArgumentException(topic + " seen with " + existing + " partitions");
        }
        if (fixed.compareAndSet(0, existing))
        {
            if (existing != configured)
            {
                LOG.warn("{} has {} partitions, {} says {}: the topic's count places its keys", topic, existing, setting, configured);
            }
            return existing;
        }
        final int f = fixed.get();
        if (f != existing)
        {
            LOG.debug("{} seen with {} partitions; its keys stay placed by {}, fixed at its first sight", topic, existing, f);
        }
        return f;
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
