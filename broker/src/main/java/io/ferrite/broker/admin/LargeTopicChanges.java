package io.ferrite.broker.admin;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * CreatePartitions and config changes of a large topic while {@link PendingCreations} makes it in slices, answered
 * without making its remaining files first — as Kafka 4.4's controller changes a topic it committed at once, whatever
 * its brokers have made of it (at 10 000 partitions making the rest first took past Admin's 30 s request timeout).
 * <ul>
 * <li>A CreatePartitions of a whole topic by more than a slice ({@link #growsInSlices}; {@link #growWhole}): a GROW to
 * the new count journaled (fsynced), the topic published with it, and its new partitions made in slices from then on
 * as a large creation's rest — it is {@link #inSlices} until they are made, so what follows holds for it too. A growth
 * of a slice or less still makes its files before the answer (one chunk's work).</li>
 * <li>A CreatePartitions ({@link #grow}): a GROW to the new count journaled (fsynced), then the topic published with it
 * ({@link TopicRegistry#planMore}); the new partitions are made by its remaining slices, after the others, and answer
 * NOT_LEADER_OR_FOLLOWER until then. A crash after the answer leaves the GROW: the next start makes the topic whole to
 * the new count ({@link CreationReplay}).</li>
 * <li>A config change ({@link #configsChanging}, before the partitions made have it): a CONFIG of the new overrides
 * journaled (fsynced); the caller then changes the made partitions and publishes the topic with them, and each later
 * slice is made with the published topic's overrides. A crash at any point after the record: the next start gives every
 * partition made the journaled overrides before it makes the rest with them. Changes are journaled for as long as the
 * journal holds the topic's creation ({@link #journalsConfigs}), not only while it is in slices; should the partitions'
 * change fail, the slices stop until that start ({@link #configsFailed}).</li>
 * </ul>
 * Agent only.
 */
public final class LargeTopicChanges
{
    private final TopicRegistry topics;
    private final CreationJournal journal;
    private final PendingCreations creations;

    LargeTopicChanges(final TopicRegistry topics, final CreationJournal journal, final PendingCreations creations)
    {
        this.topics = topics;
        this.journal = journal;
        this.creations = creations;
    }

    /** Whether {@code topic} (published) is a large topic whose slices are still being made. */
    public boolean inSlices(final Topic topic)
    {
        final PendingTopic p = creations.inSlices(topic.name);
        return p != null && p.id[0] == topic.idMostSignificantBits && p.id[1] == topic.idLeastSignificantBits;
    }

    /**
     * Large topic {@code topic}, {@link #inSlices}, grown to {@code count} partitions (more than it has planned): journaled,
     * then published; its slices make the new partitions. On an IOException (the journal's) nothing changed. A
     * RuntimeException after the GROW (from {@link TopicRegistry#planMore}; not seen) answers UNKNOWN_SERVER_ERROR while
     * the journal grows the topic at the next start.
     */
    public Topic grow(final Topic topic, final int count) throws IOException
    {
        final PendingTopic p = pending(topic);
        journal.append(List.of(new CreationJournal.Entry(CreationJournal.Kind.GROW, topic.name, p.id[0], p.id[1], count,
            topic.overrides)));
        final Topic grown = topics.planMore(topic, count, false);
        creations.grown(p, count);
        return grown;
    }

    /**
     * Whether a CreatePartitions of a whole topic from {@code from} to {@code count} partitions is answered before its
     * files ({@link #growWhole}): more new partitions than a slice — what one chunk makes — whose files would hold the
     * agent (and the answer) for their whole time; at 10 -> 5 000 that was past Admin's 30 s request timeout, and the
     * retry of the request, the partitions added meanwhile, was answered INVALID_PARTITIONS.
     */
    public static boolean growsInSlices(final int from, final int count)
    {
        return count - from > PendingCreations.CHUNK_PARTITIONS;
    }

    /**
     * Whole topic {@code topic} ({@link #growsInSlices}, not {@link #inSlices}) grown to {@code count} partitions: a GROW
     * journaled (fsynced), then the topic published with the count, none of the new partitions made — they answer
     * NOT_LEADER_OR_FOLLOWER, as a Kafka 4.4 broker answers for a partition in its metadata whose log it has not made,
     * until their slice. A crash after the answer leaves the GROW: the next start makes the rest ({@link CreationReplay}).
     * On an IOException (the journal's) nothing changed.
     */
    public Topic growWhole(final Topic topic, final int count) throws IOException
    {
        if (inSlices(topic) || topic.partitions.length < topic.plannedPartitions())
        {
            throw new IllegalStateException("topic " + topic.name + " is not whole");
        }
        journal.append(List.of(new CreationJournal.Entry(CreationJournal.Kind.GROW, topic.name, topic.idMostSignificantBits,
            topic.idLeastSignificantBits, count, topic.overrides)));
        final Topic grown = topics.planMore(topic, count, false);
        creations.growing(grown, count);
        return grown;
    }

    /**
     * Whether a config change of published {@code topic} is journaled ({@link #configsChanging}): while it is
     * {@link #inSlices}, and for as long as the journal holds its creation (a topic whose slice, or whose making at a
     * start, failed stays partly made until the next start, which replays the journal's last CONFIG of it) — so that
     * the last CONFIG a start replays is always the last change answered.
     */
    public boolean journalsConfigs(final Topic topic)
    {
        return inSlices(topic) || journal.holds(topic.idMostSignificantBits, topic.idLeastSignificantBits);
    }

    /**
     * Before {@code topic}, {@link #journalsConfigs}, has its overrides changed to {@code overrides}: the change
     * journaled, so that a crash part way through it, or before the rest is made, still ends with every partition
     * having them. On an IOException (the journal's) nothing changed.
     */
    public void configsChanging(final Topic topic, final Map<String, String> overrides) throws IOException
    {
        if (!journalsConfigs(topic))
        {
            throw new IllegalStateException("topic " + topic.name + " has no creation in the journal");
        }
        journal.append(List.of(new CreationJournal.Entry(CreationJournal.Kind.CONFIG, topic.name, topic.idMostSignificantBits,
            topic.idLeastSignificantBits, topic.plannedPartitions(), Map.copyOf(overrides))));
    }

    /**
     * After {@link #configsChanging} of {@code topic}, the partitions' change failed (some partitions have the new
     * overrides, the rest and the published topic the old ones; answered KAFKA_STORAGE_ERROR): the journal is kept for
     * the next start (neither emptied nor rewritten), and a topic {@link #inSlices} has no more slices made — as after a
     * failed slice, it stays partly made until the next start, which gives every partition the journaled overrides and
     * makes the rest with them. No later slice is made with the old overrides.
     */
    public void configsFailed(final Topic topic)
    {
        journal.unmade();
        if (inSlices(topic))
        {
            creations.deleted(topic.name, new long[] {topic.idMostSignificantBits, topic.idLeastSignificantBits});
            final Topic current = topics.topic(topic.name);
            if (current != null && !current.isDeleted() && current.idMostSignificantBits == topic.idMostSignificantBits
                && current.idLeastSignificantBits == topic.idLeastSignificantBits)
            {
                topics.planMore(current, current.plannedPartitions(), true); // its rest offline until the next start, as a failed slice's
            }
        }
    }

    /** The published version of large topic {@code p}, which a deletion would have dropped from the pending ones first. */
    Topic published(final PendingTopic p)
    {
        final Topic t = topics.topic(p.name);
        if (t == null || t.isDeleted() || t.idMostSignificantBits != p.id[0] || t.idLeastSignificantBits != p.id[1])
        {
            throw new IllegalStateException("topic " + p.name + ", being made, is not published with its id");
        }
        return t;
    }

    private PendingTopic pending(final Topic topic)
    {
        if (!inSlices(topic))
        {
            throw new IllegalStateException("topic " + topic.name + " is not being made in slices");
        }
        return creations.inSlices(topic.name);
    }
}
