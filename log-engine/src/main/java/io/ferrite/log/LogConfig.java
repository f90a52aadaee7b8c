package io.ferrite.log;

import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.ferrite.log.config.ConfigKey.Type.BOOLEAN;
import static io.ferrite.log.config.ConfigKey.Type.DOUBLE;
import static io.ferrite.log.config.ConfigKey.Type.INT;
import static io.ferrite.log.config.ConfigKey.Type.LIST;
import static io.ferrite.log.config.ConfigKey.Type.LONG;
import static io.ferrite.log.config.ConfigKey.Type.STRING;
import static io.ferrite.log.config.ConfigKey.Validator.NONE;
import static io.ferrite.log.config.ConfigKey.Validator.atLeast;
import static io.ferrite.log.config.ConfigKey.Validator.between;
import static io.ferrite.log.config.ConfigKey.Validator.betweenOr;
import static io.ferrite.log.config.ConfigKey.Validator.in;

/**
 * A partition's configuration: Kafka's topic configs (names, defaults and validation of Kafka
 * 4.4) and Ferrite's own, under {@code ferrite.}. Immutable; the hot path reads the typed fields.
 *
 * <p>Every Kafka topic config is accepted so that tools and clients that set them keep working;
 * {@link ConfigKey#implemented()} says which ones Ferrite acts on.
 */
public final class LogConfig
{
    public static final String SEGMENT_BYTES = "segment.bytes";
    /** Kafka's testing-only override of {@code segment.bytes}, below its 1 MiB minimum. */
    public static final String INTERNAL_SEGMENT_BYTES = "internal.segment.bytes";
    public static final String SEGMENT_MS = "segment.ms";
    public static final String SEGMENT_JITTER_MS = "segment.jitter.ms";
    public static final String SEGMENT_INDEX_BYTES = "segment.index.bytes";
    public static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    public static final String FLUSH_MESSAGES = "flush.messages";
    public static final String FLUSH_MS = "flush.ms";
    public static final String RETENTION_BYTES = "retention.bytes";
    public static final String RETENTION_MS = "retention.ms";
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    public static final String MAX_DECOMPRESSED_MESSAGE_BYTES = "max.decompressed.message.bytes";
    public static final String MESSAGE_TIMESTAMP_TYPE = "message.timestamp.type";
    public static final String MESSAGE_TIMESTAMP_BEFORE_MAX_MS = "message.timestamp.before.max.ms";
    public static final String MESSAGE_TIMESTAMP_AFTER_MAX_MS = "message.timestamp.after.max.ms";
    public static final String FILE_DELETE_DELAY_MS = "file.delete.delay.ms";
    public static final String CLEANUP_POLICY = "cleanup.policy";
    public static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    public static final String COMPRESSION_TYPE = "compression.type";
    public static final String DELETE_RETENTION_MS = "delete.retention.ms";
    public static final String MIN_COMPACTION_LAG_MS = "min.compaction.lag.ms";
    public static final String MAX_COMPACTION_LAG_MS = "max.compaction.lag.ms";
    public static final String MIN_CLEANABLE_DIRTY_RATIO = "min.cleanable.dirty.ratio";
    /** {@code flush}: acknowledge once in the page cache, flush per flush.messages/flush.ms (Kafka's way);
     *  {@code fsync}: acknowledge only once an fsync covers the append (group commit). */
    public static final String DURABILITY = "ferrite.durability";

    public static final String DURABILITY_FLUSH = "flush";
    public static final String DURABILITY_FSYNC = "fsync";
    public static final String CREATE_TIME = "CreateTime";
    public static final String LOG_APPEND_TIME = "LogAppendTime";

    /**
     * Kafka's check of {@code leader/follower.replication.throttled.replicas}: the literal
     * {@code *}, or {@code partition:broker} pairs.
     */
    private static final ConfigKey.Validator THROTTLED_REPLICAS = ConfigKey.Validator.described(
        "the literal *, or partitionId:brokerId entries", (n, v) ->
    {
        final List<?> entries = (List<?>)v;
        if (entries == null || (entries.size() == 1 && "*".equals(entries.get(0))))
        {
            return;
        }
        for (final Object e : entries)
        {
            if (!String.valueOf(e).matches("([0-9]+:[0-9]+)?"))
            {
                throw new ConfigException(n, v, n + " must be the literal '*' or a list of replicas in the following format: "
                    + "[partitionId]:[brokerId],[partitionId]:[brokerId],...");
            }
        }
    });

    /** Every topic config, in the order DescribeConfigs lists them. */
    public static final ConfigCatalogue CATALOGUE = new ConfigCatalogue()
        .define(CLEANUP_POLICY, LIST, "delete", in("compact", "delete"), true,
            "delete: old segments are removed by retention.ms and retention.bytes; compact: the log cleaner keeps the last record of each key "
                + "(and no time or size retention); compact,delete: both")
        .define(COMPRESSION_TYPE, STRING, "producer", in("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"), false,
            "stored; batches are kept as the producer compressed them")
        .define("compression.gzip.level", INT, "-1", betweenOr(1, 9, -1), false, "stored")
        .define("compression.lz4.level", INT, "9", between(1, 17), false, "stored")
        .define("compression.zstd.level", INT, "3", between(-131072, 22), false, "stored")
        .define(DELETE_RETENTION_MS, LONG, "86400000", atLeast(0), true,
            "how long the cleaner keeps a tombstone (and a transaction marker) after the clean that first passed it")
        .define(FILE_DELETE_DELAY_MS, LONG, "60000", atLeast(0), true,
            "how long a deleted segment's file stays open for reads already under way; a deleted partition's renamed -delete directory is removed then too")
        .define(FLUSH_MESSAGES, LONG, Long.toString(Long.MAX_VALUE), atLeast(1), true,
            "fsync after this many messages (flush durability)")
        .define(FLUSH_MS, LONG, Long.toString(Long.MAX_VALUE), atLeast(0), true, "fsync at this interval (flush durability)")
        .define(INDEX_INTERVAL_BYTES, INT, "4096", atLeast(0), true, "bytes of log between offset index entries")
        .define("leader.replication.throttled.replicas", LIST, "", THROTTLED_REPLICAS, false,
            "stored (no replication throttling on one node)")
        .define("follower.replication.throttled.replicas", LIST, "", THROTTLED_REPLICAS, false,
            "stored (no replication throttling on one node)")
        .define("local.retention.bytes", LONG, "-2", atLeast(-2), false, "stored (tiered storage)")
        .define("local.retention.ms", LONG, "-2", atLeast(-2), false, "stored (tiered storage)")
        .define(MAX_COMPACTION_LAG_MS, LONG, Long.toString(Long.MAX_VALUE), atLeast(1), true,
            "a compacted log whose oldest dirty batch is older than this is cleaned whatever its dirty ratio; its active segment rolls at this age too")
        .define(MAX_DECOMPRESSED_MESSAGE_BYTES, INT, "2147483639", between(1, 2147483639), true,
            "largest decompressed size of a batch's records")
        .define(MAX_MESSAGE_BYTES, INT, "1048588", atLeast(0), true, "largest batch accepted")
        .define(MESSAGE_TIMESTAMP_AFTER_MAX_MS, LONG, "3600000", atLeast(0), true,
            "how far a CreateTime timestamp may lie in the future")
        .define(MESSAGE_TIMESTAMP_BEFORE_MAX_MS, LONG, Long.toString(Long.MAX_VALUE), atLeast(0), true,
            "how far a CreateTime timestamp may lie in the past")
        .define(MESSAGE_TIMESTAMP_TYPE, STRING, CREATE_TIME, in(CREATE_TIME, LOG_APPEND_TIME), true,
            "CreateTime keeps the producer's timestamps; LogAppendTime sets the broker's")
        .define("message.downconversion.enable", BOOLEAN, "true", NONE, false, "stored (no down-conversion in Kafka 4)")
        .define(MIN_INSYNC_REPLICAS, INT, "1", atLeast(1), true, "replicas that must have an acks=all write")
        .define(MIN_CLEANABLE_DIRTY_RATIO, DOUBLE, "0.5", between(0, 1), true,
            "a compacted log is cleaned once its dirty bytes are more than this share of its cleanable bytes")
        .define(MIN_COMPACTION_LAG_MS, LONG, "0", atLeast(0), true, "the cleaner leaves the segments with a record younger than this")
        .define("preallocate", BOOLEAN, "false", NONE, false, "Ferrite always preallocates the active segment (sparse)")
        .define("remote.storage.enable", BOOLEAN, "false", NONE, false, "stored (tiered storage)")
        .define("remote.log.copy.disable", BOOLEAN, "false", NONE, false, "stored (tiered storage)")
        .define("remote.log.delete.on.disable", BOOLEAN, "false", NONE, false, "stored (tiered storage)")
        .define("remote.copy.lag.ms", LONG, "0", atLeast(-1), false, "stored (tiered storage)")
        .define("remote.copy.lag.bytes", LONG, "-1", atLeast(-1), false, "stored (tiered storage)")
        .define(RETENTION_BYTES, LONG, "-1", NONE, true, "largest size of the log before old segments are deleted; -1 for none")
        .define(RETENTION_MS, LONG, "604800000", atLeast(-1), true, "age after which segments are deleted; -1 for none")
        .define(SEGMENT_BYTES, INT, "1073741824", atLeast(1024 * 1024), true, "size at which a segment rolls")
        .define(INTERNAL_SEGMENT_BYTES, INT, null, atLeast(14), true, "testing only: segment.bytes below its minimum")
        .define(SEGMENT_INDEX_BYTES, INT, "10485760", atLeast(4), true, "preallocated size of a segment's indexes")
        .define(SEGMENT_JITTER_MS, LONG, "0", atLeast(0), true, "random jitter subtracted from segment.ms")
        .define(SEGMENT_MS, LONG, "604800000", atLeast(1), true, "age at which a segment rolls")
        .define("unclean.leader.election.enable", BOOLEAN, "false", NONE, false, "stored")
        .define("errors.deadletterqueue.group.enable", BOOLEAN, "false", NONE, false, "stored")
        .define(DURABILITY, STRING, DURABILITY_FLUSH, in(DURABILITY_FLUSH, DURABILITY_FSYNC), true,
            "flush: acknowledge from the page cache (Kafka's way); fsync: acknowledge after a group fsync covers the append");

    public final int segmentBytes;
    public final long segmentMs;
    public final long segmentJitterMs;
    public final int segmentIndexBytes;
    public final int indexIntervalBytes;
    public final long flushMessages;
    public final long flushMs;
    public final long retentionBytes;
    public final long retentionMs;
    public final int maxMessageBytes;
    public final int maxDecompressedMessageBytes;
    public final boolean logAppendTime;
    public final long timestampBeforeMaxMs;
    public final long timestampAfterMaxMs;
    public final long fileDeleteDelayMs;
    public final int minInsyncReplicas;
    public final boolean fsyncDurability;
    public final List<String> cleanupPolicy;
    /** {@code cleanup.policy} has compact: the log cleaner cleans this log. */
    public final boolean compact;
    /** {@code cleanup.policy} has delete: retention.ms and retention.bytes delete old segments. */
    public final boolean delete;
    public final long deleteRetentionMs;
    public final long minCompactionLagMs;
    public final long maxCompactionLagMs;
    public final double minCleanableDirtyRatio;
    /**
     * The age at which the active segment rolls: {@code segment.ms}, or {@code max.compaction.lag.ms}
     * when a compacted log's is shorter (Kafka's {@code maxSegmentMs}), since the cleaner never
     * cleans the active segment and the lag could not be kept otherwise.
     */
    public final long rollMs;

    private final Map<String, String> overrides;

    private LogConfig(final Map<String, String> overrides, final boolean crossChecked)
    {
        this.overrides = Map.copyOf(overrides);
        final Map<String, Object> parsed = CATALOGUE.parse(overrides);
        final Integer internal = (Integer)parsed.get(INTERNAL_SEGMENT_BYTES);
        segmentBytes = internal != null ? internal : intOf(parsed, SEGMENT_BYTES);
        segmentMs = longOf(parsed, SEGMENT_MS);
        segmentJitterMs = longOf(parsed, SEGMENT_JITTER_MS);
        segmentIndexBytes = intOf(parsed, SEGMENT_INDEX_BYTES);
        indexIntervalBytes = intOf(parsed, INDEX_INTERVAL_BYTES);
        flushMessages = longOf(parsed, FLUSH_MESSAGES);
        flushMs = longOf(parsed, FLUSH_MS);
        retentionBytes = longOf(parsed, RETENTION_BYTES);
        retentionMs = longOf(parsed, RETENTION_MS);
        maxMessageBytes = intOf(parsed, MAX_MESSAGE_BYTES);
        maxDecompressedMessageBytes = intOf(parsed, MAX_DECOMPRESSED_MESSAGE_BYTES);
        logAppendTime = LOG_APPEND_TIME.equals(valueOf(parsed, MESSAGE_TIMESTAMP_TYPE));
        timestampBeforeMaxMs = longOf(parsed, MESSAGE_TIMESTAMP_BEFORE_MAX_MS);
        timestampAfterMaxMs = longOf(parsed, MESSAGE_TIMESTAMP_AFTER_MAX_MS);
        fileDeleteDelayMs = longOf(parsed, FILE_DELETE_DELAY_MS);
        minInsyncReplicas = intOf(parsed, MIN_INSYNC_REPLICAS);
        fsyncDurability = DURABILITY_FSYNC.equals(valueOf(parsed, DURABILITY));
        @SuppressWarnings("unchecked")
        final List<String> policy = (List<String>)valueOf(parsed, CLEANUP_POLICY);
        cleanupPolicy = policy;
        compact = policy.contains("compact");
        delete = policy.contains("delete");
        deleteRetentionMs = longOf(parsed, DELETE_RETENTION_MS);
        minCompactionLagMs = longOf(parsed, MIN_COMPACTION_LAG_MS);
        maxCompactionLagMs = longOf(parsed, MAX_COMPACTION_LAG_MS);
        minCleanableDirtyRatio = (Double)valueOf(parsed, MIN_CLEANABLE_DIRTY_RATIO);
        rollMs = compact && maxCompactionLagMs > 0 ? Math.min(maxCompactionLagMs, segmentMs) : segmentMs;
        if (crossChecked && minCompactionLagMs > maxCompactionLagMs)
        {
            // Kafka's one check across two topic configs (LogConfig.validateValues: a topic's creation or change)
            throw new ConfigException("conflict topic config setting min.compaction.lag.ms (" + minCompactionLagMs
                + ") > max.compaction.lag.ms (" + maxCompactionLagMs + ")");
        }
    }

    /** Kafka's defaults and Ferrite's. */
    public static LogConfig defaults()
    {
        return new LogConfig(Map.of(), true);
    }

    /**
     * A config from topic overrides on top of the defaults.
     *
     * @throws ConfigException for an unknown name or an invalid value
     */
    public static LogConfig of(final Map<String, String> overrides)
    {
        return new LogConfig(overrides, true);
    }

    /**
     * This config with more overrides on top, checked as a topic's creation or change is
     * ({@code min.compaction.lag.ms} not above {@code max.compaction.lag.ms}).
     *
     * @throws ConfigException for an unknown name, an invalid value or the two lags crossed
     */
    public LogConfig with(final Map<String, String> more)
    {
        return new LogConfig(merged(more), true);
    }

    /**
     * A log's config in force: its stored overrides {@code more} on these defaults, each value checked but not the
     * two lags against each other. Kafka checks them when a topic is created or changed, not when the broker
     * defaults under a topic's overrides change (its {@code DynamicLogConfig}) nor when a log is loaded
     * ({@code LogConfig.fromProps}): a dynamic default {@code log.cleaner.min.compaction.lag.ms} above a topic's own
     * {@code max.compaction.lag.ms} is taken, and the log runs with both (as Kafka's cleaner does).
     *
     * @throws ConfigException for an unknown name or an invalid value
     */
    public LogConfig inForce(final Map<String, String> more)
    {
        return new LogConfig(merged(more), false);
    }

    private Map<String, String> merged(final Map<String, String> more)
    {
        final Map<String, String> merged = new HashMap<>(overrides);
        merged.putAll(more);
        return merged;
    }

    /** The overrides this config was made from (what a topic stores). */
    public Map<String, String> overrides()
    {
        return overrides;
    }

    private static Object valueOf(final Map<String, Object> parsed, final String name)
    {
        return parsed.containsKey(name) ? parsed.get(name) : CATALOGUE.key(name).defaultParsed();
    }

    private static int intOf(final Map<String, Object> parsed, final String name)
    {
        return (Integer)valueOf(parsed, name);
    }

    private static long longOf(final Map<String, Object> parsed, final String name)
    {
        return (Long)valueOf(parsed, name);
    }

    @Override
    public String toString()
    {
        return "LogConfig" + overrides;
    }
}
