package io.ferrite.broker.cluster;

import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.topic.TopicIds;
import io.ferrite.broker.topic.TopicRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.function.Consumer;

/**
 * At the start, once the image caught up ({@link ClusterPartitions#markStrays}, agent thread): a local topic the image
 * does not place here is a stray, as Kafka 4.4's {@code LogManager} calls a log it loads with the first image whose
 * topic id is unknown or whose current assignment lacks this broker ({@code isStrayReplica}): each of its partitions'
 * directories is renamed {@code <topic>-<partition>.<uuid>-stray} and kept, never deleted, never loaded or served again
 * ({@code -stray} directories found at a start stay as they are, as Kafka's "Loaded stray log"). That is a topic whose
 * id the image lacks (deleted while this node was down, or data from before the node joined), or one of the image's
 * that has no replica on this node (all of them reassigned away while it was down). Ferrite's registry holds a topic's
 * partitions as one array: a partition of a topic this node still holds a replica of is not renamed alone; it is kept
 * unserved ({@link Unassigned}). The local coordinators' topics are not the image's: skipped.
 */
final class StrayTopics
{
    private static final Logger LOG = LoggerFactory.getLogger(StrayTopics.class);

    private StrayTopics()
    {
    }

    /** Whether the image assigns this node a replica of a partition of the topic of this id. */
    @FunctionalInterface
    interface HeldIds
    {
        boolean held(long msb, long lsb);
    }

    /** Renames the strays in {@code topics}; {@code renamed} is told each stray's name once its logs are renamed. */
    static void mark(final TopicRegistry topics, final HeldIds image, final Consumer<String> renamed)
    {
        for (final Topic local : List.copyOf(topics.topics()))
        {
            if (!local.isDeleted() && !image.held(local.idMostSignificantBits, local.idLeastSignificantBits))
            {
                try
                {
                    topics.stray(local);
                    renamed.accept(local.name);
                    LOG.warn("{}: stray topic (its id {} is not in the cluster's metadata, or no replica of it is assigned " +
                        "to this node): its logs renamed -stray, kept, not served; delete them by hand if they are not wanted",
                        local.name, TopicIds.encode(local.idMostSignificantBits, local.idLeastSignificantBits));
                }
                catch (final java.io.IOException | RuntimeException ex)
                {
                    LOG.error("{}: renaming the stray topic's logs failed", local.name, ex);
                }
            }
        }
    }
}
