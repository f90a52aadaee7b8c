package io.ferrite.broker.admin;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;

/**
 * A journaled topic whose files failed — its creation, a slice of it, a whole topic's growth, or the start's replay of
 * one — published with the partitions not made offline ({@link Topic#isOffline}): listed with no leader and answered
 * KAFKA_STORAGE_ERROR, as Kafka 4.4 answers for a partition whose log directory failed, instead of unknown to clients,
 * until a start makes them (the journal keeps the record) or a DeleteTopics deletes it as any published topic.
 */
final class OfflineTopics
{
    private static final Logger LOG = LoggerFactory.getLogger(OfflineTopics.class);

    private OfflineTopics()
    {
    }

    /**
     * Topic {@code name} of id {@code id}, answered with {@code count} partitions and {@code configs}, whose files failed:
     * planned and published offline when absent, published with its rest offline when present with that id and fewer
     * partitions. False when that failed too (logged): the caller keeps the name taken.
     */
    static boolean publish(final TopicRegistry topics, final String name, final long[] id, final int count,
        final Map<String, String> configs)
    {
        try
        {
            final Topic present = topics.topic(name);
            if (present == null)
            {
                topics.planMore(topics.plan(name, count, configs, id), count, true);
            }
            else if (present.idMostSignificantBits == id[0] && present.idLeastSignificantBits == id[1]
                && present.partitions.length < count)
            {
                topics.planMore(present, count, true);
            }
            return true;
        }
        catch (final RuntimeException ex)
        {
            LOG.error("publishing topic {}, whose files failed, with its partitions offline failed: unknown to clients until"
                + " the next start", name, ex);
            return false;
        }
    }

    /**
     * Topic {@code p}'s files failed (all of a small topic's, a large one's from {@code p.made}): the journal keeps its
     * record ({@link CreationJournal#unmade}), logged, and the topic published with the partitions not made offline
     * ({@link #publish}): listed with no leader, KAFKA_STORAGE_ERROR to their reads and writes, until the next start makes
     * them or a DeleteTopics deletes it (as a published topic). A small topic leaves {@link TopicRegistry#creating} once
     * published.
     */
    static void failed(final TopicRegistry topics, final CreationJournal journal, final PendingTopic p, final Throwable ex)
    {
        journal.unmade();
        LOG.error("making the files of topic {}, created and answered, failed: {} made at the next start", p.name,
            p.large() ? "its partitions from " + p.made + " are" : "it is", ex);
        if (publish(topics, p.name, p.id, p.partitions, p.configs) && !p.large())
        {
            topics.created(p.name);
        }
    }

    /**
     * From any thread: whether topic {@code name} ({@code pending}: still among the pending creations) was answered as
     * created and none of its files could be made (by the pending creations, or in the start's replay): published with
     * every partition offline, or, when even that failed, unpublished with its name kept taken. A topic leaves the
     * pending ones only after it is published and no longer creating, so the last look at the published topic tells a
     * failed one from one made meanwhile.
     */
    static boolean filesFailed(final TopicRegistry topics, final String name, final boolean pending)
    {
        final Topic published = topics.topic(name);
        if (published != null)
        {
            // a large topic whose first slice failed is not one: its config changes are journaled (LargeTopicChanges)
            return !published.isDeleted() && published.partitions.length == 0 && published.hasOfflinePartitions()
                && PendingCreations.publishedWhenMade(published.plannedPartitions());
        }
        return topics.creatingId(name) != null && !pending && topics.topic(name) == null;
    }
}
