package io.ferrite.broker.topic;

import io.ferrite.log.LogManager;
import io.ferrite.log.PartitionLog;
import io.ferrite.log.config.DurableFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The first start on an Apache Kafka 4.4 log directory: what Kafka's KRaft metadata log ({@code __cluster_metadata-0},
 * which Kafka keeps in its first log directory unless {@code metadata.log.dir} says otherwise) says of the topics is
 * taken over into the partition directories, where Ferrite keeps it — each topic's id ({@code partition.metadata},
 * which Kafka writes too: checked, written when missing) and its config overrides ({@code partition.properties}) —
 * before the topic registry loads them. Partition directories of topics the image does not hold, or of another id, are
 * Kafka 4.4's stray logs, renamed {@code -stray}, kept and not served, as Kafka's broker does at its start; the
 * directories Kafka renamed {@code -delete} at a deletion the log manager removes, as Kafka does. On a metadata log that
 * could not be read whole (a damaged batch or record) nothing is renamed stray: a topic it does not show is kept.
 *
 * <p>Once only: {@link #MARKER} in the first log directory records that it was done, and from then on Ferrite's own
 * state (its partition files, its creation journal) is the truth: a later start reads nothing of
 * {@code __cluster_metadata}, which stays on disk as Kafka left it and is never served as a topic. A metadata log that
 * cannot be read is logged, and the start goes on with what the partition directories hold (and tries again next
 * time). What cannot come across is one log line per item, at WARN; never a failed start.
 */
public final class KafkaImport
{
    /** Written once the import is done: its presence is the rule "Ferrite's own state wins". */
    public static final String MARKER = "ferrite-kafka-metadata.imported";
    private static final Logger LOG = LoggerFactory.getLogger(KafkaImport.class);

    private final LogManager logs;
    private final int nodeId;
    private final KafkaMetadataImage image;

    private KafkaImport(final LogManager logs, final int nodeId, final KafkaMetadataImage image)
    {
        this.logs = logs;
        this.nodeId = nodeId;
        this.image = image;
    }

    /** The Kafka metadata log directory among {@code logDirs}, or null. */
    public static Path metadataDir(final List<Path> logDirs)
    {
        for (final Path dir : logDirs)
        {
            if (Files.isDirectory(dir.resolve(KafkaMetadataLog.DIR)))
            {
                return dir.resolve(KafkaMetadataLog.DIR);
            }
        }
        return null;
    }

    /** Takes over Kafka's topic metadata into {@code logs} when this is the first start on a Kafka directory. */
    public static void runOnce(final List<Path> logDirs, final LogManager logs, final int nodeId) throws IOException
    {
        final Path metadata = metadataDir(logDirs);
        final Path marker = logDirs.get(0).resolve(MARKER);
        if (metadata == null || Files.exists(marker))
        {
            return;
        }
        final KafkaMetadataLog log;
        try
        {
            log = KafkaMetadataLog.read(metadata);
        }
        catch (final IOException | RuntimeException ex)
        {
            LOG.error("Kafka's metadata log {} cannot be read ({}): topic ids and configs are not taken over from it; the topics "
                + "keep what their partition directories hold; tried again at the next start", metadata, ex.toString());
            return;
        }
        LOG.info("first start on a Kafka log directory: taking over topic ids and configs from {} ({})", metadata,
            String.join(", ", log.sources()));
        new KafkaImport(logs, nodeId, log.image()).apply();
        DurableFile.write(marker, ("Kafka's metadata log " + metadata + " was taken over at " + java.time.Instant.now()
            + "; from now on Ferrite's own files are the truth and it is not read again\n").getBytes(StandardCharsets.UTF_8));
    }

    private void apply() throws IOException
    {
        final Map<String, KafkaMetadataImage.TopicState> byName = new HashMap<>();
        image.topics.values().forEach(t -> byName.put(t.name, t));
        final Map<String, List<PartitionLog>> local = new TreeMap<>();
        for (final PartitionLog log : logs.logs())
        {
            local.computeIfAbsent(log.topic(), k -> new ArrayList<>()).add(log);
        }
        int topics = 0;
        for (final Map.Entry<String, List<PartitionLog>> e : local.entrySet())
        {
            final KafkaMetadataImage.TopicState topic = byName.get(e.getKey());
            if (topic == null && image.unreadable > 0)
            {
                LOG.warn("topic {}: not in Kafka's metadata, which could not be read whole: kept and served as it is", e.getKey());
                continue;
            }
            if (topic == null)
            {
                LOG.warn("topic {}: not in Kafka's metadata (deleted, or never created by this cluster): its {} partition "
                    + "director{} renamed -stray, kept and not served, as Kafka 4.4 does", e.getKey(), e.getValue().size(),
                    e.getValue().size() == 1 ? "y" : "ies");
                for (final PartitionLog log : e.getValue())
                {
                    logs.strayLogs(log.topic(), log.partition(), log.partition() + 1);
                }
                continue;
            }
            topics++;
            takeOver(topic, e.getValue());
        }
        for (final KafkaMetadataImage.TopicState topic : image.topics.values())
        {
            partitionsNotHere(topic);
        }
        notTakenOver();
        LOG.info("taken over from Kafka's metadata: {} topics with their ids and configs", topics);
    }

    private void takeOver(final KafkaMetadataImage.TopicState topic, final List<PartitionLog> partitionLogs) throws IOException
    {
        final Map<String, String> overrides = image.topicConfigs.getOrDefault(topic.name, Map.of());
        Map<String, String> accepted = null;
        for (final PartitionLog log : partitionLogs)
        {
            final long[] onDisk = TopicIds.read(log.dir());
            final boolean stray = !topic.partitions.containsKey(log.partition()) || (onDisk != null && !Arrays.equals(onDisk, topic.id));
            if (stray && image.unreadable > 0)
            {
                LOG.warn("{}: not as Kafka's metadata has it, which could not be read whole: kept as it is", log.dir().getFileName());
                continue;
            }
            if (stray)
            {
                LOG.warn("{}: {} in Kafka's metadata ({} there, topic id {}): renamed -stray, kept and not served, as Kafka 4.4 does",
                    log.dir().getFileName(), onDisk == null ? "not" : "of another topic id", topic.partitions.size() + " partitions",
                    TopicIds.encode(topic.id[0], topic.id[1]));
                logs.strayLogs(log.topic(), log.partition(), log.partition() + 1);
                continue;
            }
            accepted = accepted == null ? configs(topic.name, log.partition(), overrides) : accepted;
            logs.updateConfig(topic.name, log.partition(), accepted); // durable before the id, as a creation writes them
            TopicIds.write(log.dir(), topic.id);
        }
    }

    /** Kafka's overrides of a topic, stored on one partition: those Ferrite refuses are logged and left out. */
    private Map<String, String> configs(final String topic, final int partition, final Map<String, String> overrides)
        throws IOException
    {
        try
        {
            logs.updateConfig(topic, partition, overrides);
            return overrides;
        }
        catch (final RuntimeException refused)
        {
            final Map<String, String> accepted = new TreeMap<>();
            for (final Map.Entry<String, String> e : overrides.entrySet())
            {
                final Map<String, String> tried = new TreeMap<>(accepted);
                tried.put(e.getKey(), e.getValue());
                try
                {
                    logs.updateConfig(topic, partition, tried);
                    accepted.put(e.getKey(), e.getValue());
                }
                catch (final RuntimeException ex)
                {
                    LOG.warn("topic {}: config {}={} from Kafka's metadata not taken over: {}", topic, e.getKey(), e.getValue(),
                        ex.getMessage());
                }
            }
            return accepted;
        }
    }

    /** Partitions this node does not lead alone, or whose files are not here: said, one line each. */
    private void partitionsNotHere(final KafkaMetadataImage.TopicState topic)
    {
        for (final Map.Entry<Integer, KafkaMetadataImage.PartitionState> p : topic.partitions.entrySet())
        {
            final KafkaMetadataImage.PartitionState state = p.getValue();
            final boolean onlyHere = state.replicas.length == 1 && state.replicas[0] == nodeId;
            if (logs.log(topic.name, p.getKey()) == null)
            {
                LOG.warn("{}-{}: not in this node's log directories (Kafka had its replicas on brokers {}, leader {}): not taken "
                    + "over: Ferrite has no copy of its records", topic.name, p.getKey(), Arrays.toString(state.replicas), state.leader);
            }
            else if (!onlyHere || (state.leader != nodeId && state.leader != -1)) // -1: none, as a clean stop leaves it
            {
                LOG.warn("{}-{}: Kafka had its replicas on brokers {}, leader {}: only this node's copy (node {}) comes across, "
                    + "served as a single-node partition led here", topic.name, p.getKey(), Arrays.toString(state.replicas),
                    state.leader, nodeId);
            }
        }
    }

    /** What the metadata holds that Ferrite does not take over: one line per item. */
    private void notTakenOver()
    {
        for (final String acl : image.acls)
        {
            LOG.warn("Kafka ACL {}: not taken over (ACLs are not kept by this Ferrite)", acl);
        }
        for (final String user : image.scramCredentials)
        {
            LOG.warn("Kafka SCRAM credential of user {}: not taken over (SCRAM is not supported yet)", user);
        }
        for (final String quota : image.quotas)
        {
            LOG.warn("Kafka client quota {}: not taken over (quotas are not supported yet)", quota);
        }
        for (final String token : image.delegationTokens)
        {
            LOG.warn("Kafka delegation token {}: not taken over", token);
        }
        for (final Map.Entry<String, java.util.Set<String>> e : image.otherConfigs.entrySet())
        {
            LOG.warn("Kafka {} configs {}: not taken over (set them again in Ferrite's configuration)", e.getKey(), e.getValue());
        }
        if (!image.featureLevels.isEmpty())
        {
            LOG.warn("Kafka feature levels {}: not taken over (Ferrite serves its own API versions)", image.featureLevels);
        }
        if (!image.skipped.isEmpty() || image.unreadable > 0)
        {
            LOG.info("Kafka metadata records not used (by api key: count): {}; unreadable: {}", image.skipped, image.unreadable);
        }
    }
}
