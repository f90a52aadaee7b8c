package io.ferrite.broker.topic;

import java.nio.charset.StandardCharsets;
import java.util.Map;

/** A topic as the broker serves it: immutable; a change makes a new one. */
public final class Topic
{
    public final String name;
    final byte[] nameBytes;
    public final long idMostSignificantBits;
    public final long idLeastSignificantBits;
    /** The partitions made (0 to n - 1); those from n on up to {@link #plannedPartitions} are being made. */
    public final Partition[] partitions;
    /**
     * The partitions the topic has as clients see it (Metadata, CreatePartitions' count): more than {@link #partitions}
     * while a large topic is made in slices after its CreateTopics was answered (a partition not made yet answers
     * NOT_LEADER_OR_FOLLOWER, as a Kafka 4.4 broker answers for a partition in its metadata whose log it has not made).
     */
    private final int planned;
    /** The topic config overrides (the same on every partition). */
    public final Map<String, String> overrides;
    /**
     * Whether the partitions not made (from {@link #partitions}' length to {@link #plannedPartitions}) are offline: their
     * files failed, and they are made at the next start, not by a later slice ({@link #isOffline}).
     */
    private final boolean offline;
    private volatile boolean deleted;

    Topic(final String name, final long idMsb, final long idLsb, final Partition[] partitions, final Map<String, String> overrides)
    {
        this(name, idMsb, idLsb, partitions, overrides, partitions.length);
    }

    Topic(final String name, final long idMsb, final long idLsb, final Partition[] partitions, final Map<String, String> overrides,
        final int planned)
    {
        this(name, idMsb, idLsb, partitions, overrides, planned, false);
    }

    Topic(final String name, final long idMsb, final long idLsb, final Partition[] partitions, final Map<String, String> overrides,
        final int planned, final boolean offline)
    {
        this.planned = Math.max(planned, partitions.length);
        this.offline = offline && this.planned > partitions.length;
        this.name = name;
        this.nameBytes = name.getBytes(StandardCharsets.UTF_8);
        this.idMostSignificantBits = idMsb;
        this.idLeastSignificantBits = idLsb;
        this.partitions = partitions;
        this.overrides = Map.copyOf(overrides);
    }

    public Partition partition(final int index)
    {
        return index >= 0 && index < partitions.length ? partitions[index] : null;
    }

    /** The partitions clients see: the ones made and the ones being made. */
    public int plannedPartitions()
    {
        return planned;
    }

    /**
     * Whether partition {@code index} is one of the topic's, in its metadata, that is not made: being made (answered
     * NOT_LEADER_OR_FOLLOWER meanwhile), or {@link #isOffline}.
     */
    public boolean isBeingMade(final int index)
    {
        return index >= partitions.length && index < planned;
    }

    /**
     * Whether partition {@code index} is one whose files failed (the creation of its topic, a slice of it or a growth,
     * or the start's replay of one): listed with no leader, KAFKA_STORAGE_ERROR to the requests that read or write it,
     * made at the next start — as Kafka 4.4 answers for a partition whose log directory failed.
     */
    public boolean isOffline(final int index)
    {
        return offline && isBeingMade(index);
    }

    /** Whether some of its partitions are {@link #isOffline}. */
    public boolean hasOfflinePartitions()
    {
        return offline;
    }

    /** Set when DeleteTopics removes it: requests that still hold it answer as for an unknown topic. */
    public boolean isDeleted()
    {
        return deleted;
    }

    void markDeleted()
    {
        deleted = true;
    }

    /** Internal topics (the consumer offsets topic, later). */
    public boolean isInternal()
    {
        return name.startsWith("__");
    }

    @Override
    public String toString()
    {
        return name;
    }
}
