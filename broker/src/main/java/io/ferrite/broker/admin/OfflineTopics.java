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
}
