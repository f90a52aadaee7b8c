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
    public final Partition[] partitions;
    /** The topic config overrides (the same on every partition). */
    public final Map<String, String> overrides;
    private volatile boolean deleted;

    Topic(final String name, final long idMsb, final long idLsb, final Partition[] partitions, final Map<String, String> overrides)
    {
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
