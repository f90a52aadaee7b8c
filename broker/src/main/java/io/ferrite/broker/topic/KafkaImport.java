package io.ferrite.broker.topic;

import io.ferrite.broker.ProducerIdFile;
import io.ferrite.broker.StartupException;
import io.ferrite.broker.admin.CreationJournal;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.metrics.CountersFile;
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
 * which Kafka keeps in its first log directory unless {@code metadata.log.dir} says otherwise: then Ferrite's
 * {@value BrokerConfig#KAFKA_METADATA_LOG_DIR} names it) says of the topics is taken over into the partition directories,
 * where Ferrite keeps it — each topic's id ({@code partition.metadata}, which Kafka writes too: checked, written when
 * missing) and its config overrides ({@code partition.properties}) — before the topic registry loads them. Partition
 * directories of topics the image does not hold, or of another id, are Kafka 4.4's stray logs, renamed {@code -stray},
 * kept and not served, as Kafka's broker does at its start; the directories Kafka renamed {@code -delete} at a deletion
 * the log manager removes, as Kafka does.
 *
 * <p>It never guesses: log directories holding partitions but no Ferrite state (a first start on Kafka's data) whose
 * metadata log is missing, empty, has a gap, or cannot be read whole fail the start ({@link StartupException}) with
 * nothing renamed or written, since the broker defaults in place of Kafka's overrides would let retention delete what
 * Kafka kept; {@value BrokerConfig#KAFKA_METADATA_IMPORT_ENABLE}{@code =false} says to start without Kafka's metadata.
 *
 * <p>Once per data set: it is considered only when no log directory holds Ferrite's own state ({@link #MARKER}, the
 * counters file, the creation journal, the producer-id file), and {@link #MARKER} is written in every log directory once
 * it was done or decided not to apply — and into a directory added later — so a reordered or grown {@code log.dirs}
 * never runs it again over topics Ferrite created. From then on Ferrite's own files are the truth: {@code
 * __cluster_metadata} stays on disk as Kafka left it and is never served as a topic. What cannot come across is one log
 * line per item, at WARN. An I/O failure while applying (a partition's files) fails the start before the marker is
 * written: every step is idempotent, and the next start does it again.
 */
public final class KafkaImport
{
    /** Written in every log directory once the import is done or decided against: "Ferrite's own state wins". */
    public static final String MARKER = "ferrite-kafka-metadata.imported";
    /** Files only Ferrite writes: one in any log directory means Ferrite has run on this data. */
    private static final List<String> FERRITE_STATE = List.of(MARKER, CountersFile.NAME, CreationJournal.FILE_NAME, ProducerIdFile.FILE);
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
    public static void runOnce(final BrokerConfig config, final LogManager logs) throws IOException
    {
        final List<Path> logDirs = config.logDirs();
        final String ours = ferriteState(logDirs);
        if (ours != null)
        {
            mark(logDirs, "Ferrite's own state (" + ours + ") was found: Kafka's metadata is not read");
            return;
        }
        final String setting = config.getString(BrokerConfig.KAFKA_METADATA_LOG_DIR);
        final Path metadata = setting == null ? metadataDir(logDirs) : kafkaMetadataDir(Path.of(setting));
        final int partitions = logs.logs().size();
        if (!config.getBoolean(BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE))
        {
            LOG.warn("{}=false: Kafka's metadata is not taken over; the {} partitions found keep the broker defaults",
                BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE, partitions);
            mark(logDirs, BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE + "=false: Kafka's metadata was not taken over");
            return;
        }
        if (metadata == null && partitions == 0)
        {
            mark(logDirs, "a first start on directories without Kafka's data: nothing to take over");
            return;
        }
        if (metadata == null)
        {
            throw refused(logDirs + " hold " + partitions + " partitions and no Ferrite state (a first start on Kafka's data), but no "
                + KafkaMetadataLog.DIR + " (Kafka keeps it in its metadata.log.dir when that is set)");
        }
        final KafkaMetadataLog log;
        try
        {
            log = KafkaMetadataLog.read(metadata);
        }
        catch (final IOException | RuntimeException ex)
        {
            throw refused("Kafka's metadata log " + metadata + " cannot be read (" + ex + ")");
        }
        final String incomplete = log.incomplete() != null ? log.incomplete()
            : log.image().unreadable > 0 ? log.image().unreadable + " batches or records cannot be read"
            : log.image().topics.isEmpty() && partitions > 0 ? "it holds no topic, and the log directories hold " + partitions + " partitions"
            : null;
        if (incomplete != null && partitions == 0)
        {
            LOG.warn("Kafka's metadata log {} is not whole ({}), and the log directories hold no partition: nothing to take over",
                metadata, incomplete);
            mark(logDirs, "Kafka's metadata log " + metadata + " was not whole, with no partition to take over");
            return;
        }
        if (incomplete != null)
        {
            throw refused("Kafka's metadata log " + metadata + " is not whole: " + incomplete);
        }
        LOG.info("first start on a Kafka log directory: taking over topic ids and configs from {} ({})", metadata,
            String.join(", ", log.sources()));
        new KafkaImport(logs, config.nodeId(), log.image()).apply();
        mark(logDirs, "Kafka's metadata log " + metadata + " was taken over");
    }

    /** The failed start: what was found, and the two ways on. Nothing was renamed or written. */
    private static StartupException refused(final String found)
    {
        return new StartupException(found + ": the topics' ids and configs (cleanup.policy, retention) cannot be taken over, and the "
            + "broker defaults in their place could let retention delete what Kafka kept; nothing was changed. Put Kafka's "
            + KafkaMetadataLog.DIR + " whole into the first log directory or set " + BrokerConfig.KAFKA_METADATA_LOG_DIR
            + " to Kafka's metadata.log.dir, or set " + BrokerConfig.KAFKA_METADATA_IMPORT_ENABLE
            + "=false to start with the broker defaults");
    }

    /** Kafka's {@code metadata.log.dir} (or its {@code __cluster_metadata-0} itself), which must be there. */
    private static Path kafkaMetadataDir(final Path setting) throws StartupException
    {
        final Path dir = setting.getFileName() != null && setting.getFileName().toString().equals(KafkaMetadataLog.DIR)
            ? setting : setting.resolve(KafkaMetadataLog.DIR);
        if (!Files.isDirectory(dir))
        {
            throw new StartupException(BrokerConfig.KAFKA_METADATA_LOG_DIR + ": " + dir + " is not a directory");
        }
        return dir;
    }

    /** The first of Ferrite's own files found in {@code logDirs}, or null when Ferrite has never run on them. */
    private static String ferriteState(final List<Path> logDirs)
    {
        for (final Path dir : logDirs)
        {
            for (final String name : FERRITE_STATE)
            {
                if (Files.exists(dir.resolve(name)))
                {
                    return dir.resolve(name).toString();
                }
            }
        }
        return null;
    }

    /** The marker, durably, in each log directory that has none yet. */
    private static void mark(final List<Path> logDirs, final String why) throws IOException
    {
        final byte[] text = (why + " at " + java.time.Instant.now() + "; from then on Ferrite's own files are the truth and "
            + "Kafka's metadata is not read again\n").getBytes(StandardCharsets.UTF_8);
        for (final Path dir : logDirs)
        {
            if (!Files.exists(dir.resolve(MARKER)))
            {
                DurableFile.write(dir.resolve(MARKER), text);
            }
        }
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
