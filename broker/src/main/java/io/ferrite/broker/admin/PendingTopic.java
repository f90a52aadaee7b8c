package io.ferrite.broker.admin;

import java.util.Map;

/**
 * One journaled topic whose files {@link PendingCreations} has not made (all of them, or for a large topic the
 * partitions from {@link #made} on). Agent only.
 */
final class PendingTopic
{
    final String name;
    final long[] id;
    /** Its partition count as answered; a large topic's grows with a CreatePartitions while it is made ({@link LargeTopicChanges}). */
    int partitions;
    final Map<String, String> configs;
    /** Partitions made so far (a large topic's slices; 0 for the others until they are made whole). */
    int made;
    /** A whole topic grown in slices ({@link PendingCreations#growing}), not a creation: the topic existed before. */
    boolean growth;

    PendingTopic(final String name, final long[] id, final int partitions, final Map<String, String> configs)
    {
        this.name = name;
        this.id = id;
        this.partitions = partitions;
        this.configs = configs;
    }

    /**
     * More partitions than a chunk: published when journaled and made in slices of
     * {@value PendingCreations#CHUNK_PARTITIONS}.
     */
    boolean large()
    {
        return !PendingCreations.publishedWhenMade(partitions);
    }
}
