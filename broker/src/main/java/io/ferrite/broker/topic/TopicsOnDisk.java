package io.ferrite.broker.topic;

import io.ferrite.log.LogManager;
import io.ferrite.log.PartitionLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The {@link TopicRegistry}'s topics as a start finds them in the partition logs (a topic's id in Kafka's
 * {@code partition.metadata} in each partition directory, its overrides in the logs), with what a stop cut short
 * finished on the way: a CreatePartitions' gap filled, a creation's or growth's partitions given their id and
 * overrides, a deletion marked in its directories ({@link #DELETED_MARKER}) finished.
 */
final class TopicsOnDisk
{
    private static final Logger LOG = LoggerFactory.getLogger(TopicsOnDisk.class);
    /**
     * Written (and fsynced) in the directory of a deleted topic's partition whose log the deletion
     * could not close or rename (and by versions that deleted the logs a moment after the answer):
     * a restart must not bring the topic back, so {@link #load} finishes the deletion. Not a
     * {@code .deleted} suffix: the log loader removes those.
     */
    static final String DELETED_MARKER = "topic.deleting";

    private TopicsOnDisk()
    {
    }

    /**
     * The topics of {@code registry}'s log manager, by name. A topic none of whose partitions holds its id is given
     * the one in {@code answeredIds}, else a new one. A topic of an answered id cut short, made or grown (a partition
     * without {@code partition.metadata}, written after its overrides are durable) gets on those partitions the
     * overrides of one that has its id, else {@code answeredConfigs}' (what it was answered with), durably before their id.
     */
    static List<Topic> load(final TopicRegistry registry, final Map<String, long[]> answeredIds,
        final Map<String, Map<String, String>> answeredConfigs) throws IOException
    {
        final LogManager logs = registry.logs();
        final Map<String, List<PartitionLog>> byTopic = new TreeMap<>();
        for (final PartitionLog log : logs.logs())
        {
            byTopic.computeIfAbsent(log.topic(), k -> new ArrayList<>()).add(log);
        }
        final List<Topic> topics = new ArrayList<>();
        for (final Map.Entry<String, List<PartitionLog>> e : byTopic.entrySet())
        {
            final String name = e.getKey();
            if (deleteIfMarked(logs, name, e.getValue()))
            {
                continue;
            }
            int count = 0;
            for (final PartitionLog log : e.getValue())
            {
                count = Math.max(count, log.partition() + 1);
            }
            final Partition[] partitions = new Partition[count];
            final boolean[] unfinished = new boolean[count];
            long[] id = null;
            int finished = -1;
            for (int p = 0; p < count; p++)
            {
                PartitionLog log = logs.log(name, p);
                if (log == null)
                {
                    // a CreatePartitions cut short: fill the gap so the topic has no hole
                    log = logs.createLog(name, p, logs.overrides(name, e.getValue().get(0).partition()));
                }
                final long[] partitionId = TopicIds.read(log.dir());
                if (partitionId != null)
                {
                    id = partitionId;
                    finished = p;
                }
                unfinished[p] = partitionId == null;
                partitions[p] = new Partition(name, p, log, registry.owner(name, p));
            }
            if (id == null)
            {
                id = answeredIds.containsKey(name) ? answeredIds.get(name) : registry.newId();
            }
            final long[] answered = answeredIds.get(name);
            final Map<String, String> configs = finished >= 0 ? logs.overrides(name, finished) : answeredConfigs.get(name);
            for (int p = 0; p < count; p++)
            {
                if (unfinished[p] && answered != null && answered[0] == id[0] && answered[1] == id[1] && configs != null)
                {
                    logs.updateConfig(name, p, configs); // durable (or its file removed, durably) before the id below
                }
                TopicIds.write(partitions[p].log.dir(), id);
            }
            // the stored overrides, not config().overrides(): that one has the broker's topic defaults merged in
            topics.add(new Topic(name, id[0], id[1], partitions, logs.overrides(name, 0)));
        }
        return topics;
    }

    /** A topic deleted before the last stop whose logs were marked, not renamed ({@link #DELETED_MARKER}): they go now. */
    private static boolean deleteIfMarked(final LogManager logs, final String name, final List<PartitionLog> partitionLogs)
        throws IOException
    {
        boolean marked = false;
        for (final PartitionLog log : partitionLogs)
        {
            marked |= Files.exists(log.dir().resolve(DELETED_MARKER));
        }
        if (marked)
        {
            LOG.info("deleting the logs of topic {}, deleted before the last stop", name);
            for (final PartitionLog log : partitionLogs)
            {
                try
                {
                    logs.deleteLog(name, log.partition());
                }
                catch (final IOException | RuntimeException ex)
                {
                    // the broker starts without it (it was deleted): one directory it cannot remove must not keep it down
                    LOG.error("cannot delete {} of topic {}, deleted before the last stop: not loaded, its files left in {}",
                        log.partition(), name, log.dir(), ex);
                }
            }
        }
        return marked;
    }

    /** Writes and fsyncs the deletion marker in a partition directory; a failure is added to {@code cause}. */
    static void markDeleted(final Path partitionDir, final Exception cause)
    {
        try
        {
            try (FileChannel channel = FileChannel.open(partitionDir.resolve(DELETED_MARKER), StandardOpenOption.CREATE,
                StandardOpenOption.WRITE))
            {
                channel.force(true);
            }
            try (FileChannel dir = FileChannel.open(partitionDir, StandardOpenOption.READ))
            {
                dir.force(true);
            }
        }
        catch (final IOException ex)
        {
            cause.addSuppressed(ex);
        }
    }
}
