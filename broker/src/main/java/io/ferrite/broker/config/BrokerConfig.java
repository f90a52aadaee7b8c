package io.ferrite.broker.config;

import io.ferrite.log.CleanerConfig;
import io.ferrite.log.LogConfig;
import io.ferrite.log.WriteStrategy;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
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
import static io.ferrite.log.config.ConfigKey.Validator.in;

/**
 * The broker's configuration: Kafka's property names and defaults (Ferrite's own under
 * {@code ferrite.}), from a properties file and {@code --override}s. The {@code log.*} and other
 * broker-level topic defaults become the defaults of every topic; {@link #TOPIC_SYNONYMS} says which
 * broker property stands behind which topic config, as DescribeConfigs reports it.
 */
public final class BrokerConfig
{
    public static final String NODE_ID = "node.id";
    public static final String LISTENERS = "listeners";
    public static final String ADVERTISED_LISTENERS = "advertised.listeners";
    public static final String LOG_DIRS = "log.dirs";
    public static final String LOG_DIR = "log.dir";
    /** Kafka's {@code metadata.log.dir}, read at the first start on a Kafka log directory (see topic.KafkaImport). */
    public static final String KAFKA_METADATA_LOG_DIR = "kafka.metadata.log.dir";
    /** false: the first start on a Kafka log directory does not take over Kafka's metadata (see topic.KafkaImport). */
    public static final String KAFKA_METADATA_IMPORT_ENABLE = "kafka.metadata.import.enable";
    public static final String NUM_NETWORK_THREADS = "num.network.threads";
    public static final String NUM_PARTITIONS = "num.partitions";
    public static final String DEFAULT_REPLICATION_FACTOR = "default.replication.factor";
    public static final String AUTO_CREATE_TOPICS = "auto.create.topics.enable";
    public static final String SOCKET_REQUEST_MAX_BYTES = "socket.request.max.bytes";
    public static final String SOCKET_SEND_BUFFER_BYTES = "socket.send.buffer.bytes";
    public static final String SOCKET_RECEIVE_BUFFER_BYTES = "socket.receive.buffer.bytes";
    public static final String LOG_RETENTION_CHECK_INTERVAL_MS = "log.retention.check.interval.ms";
    public static final String PRODUCER_ID_EXPIRATION_MS = "producer.id.expiration.ms";
    public static final String REPLICA_LAG_TIME_MAX_MS = "replica.lag.time.max.ms";
    public static final String REPLICA_SOCKET_TIMEOUT_MS = "replica.socket.timeout.ms";
    public static final String REPLICA_FETCH_BACKOFF_MS = "replica.fetch.backoff.ms";
    public static final String REPLICA_FETCH_WAIT_MAX_MS = "replica.fetch.wait.max.ms";
    public static final String REPLICA_SOCKET_RECEIVE_BUFFER_BYTES = "replica.socket.receive.buffer.bytes";
    public static final String SOCKET_CONNECTION_SETUP_TIMEOUT_MS = "socket.connection.setup.timeout.ms";
    public static final String PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS = "producer.id.expiration.check.interval.ms";
    public static final String DELETE_TOPIC_ENABLE = "delete.topic.enable";
    public static final String LOG_THREADS = "ferrite.log.threads";
    public static final String IDLE_STRATEGY = "ferrite.idle.strategy";
    public static final String WRITE_STRATEGY = "ferrite.log.write.strategy";
    public static final String GROUP_MIN_SESSION_TIMEOUT_MS = "group.min.session.timeout.ms";
    public static final String GROUP_MAX_SESSION_TIMEOUT_MS = "group.max.session.timeout.ms";
    public static final String GROUP_INITIAL_REBALANCE_DELAY_MS = "group.initial.rebalance.delay.ms";
    public static final String GROUP_MAX_SIZE = "group.max.size";
    public static final String OFFSETS_RETENTION_MINUTES = "offsets.retention.minutes";
    public static final String OFFSETS_RETENTION_CHECK_INTERVAL_MS = "offsets.retention.check.interval.ms";
    /** Testing only: offsets.retention.minutes in milliseconds, below Kafka's one-minute floor. */
    public static final String INTERNAL_OFFSETS_RETENTION_MS = "internal.offsets.retention.ms";
    public static final String OFFSETS_TOPIC_NUM_PARTITIONS = "offsets.topic.num.partitions";
    public static final String OFFSETS_TOPIC_SEGMENT_BYTES = "offsets.topic.segment.bytes";
    public static final String OFFSETS_TOPIC_REPLICATION_FACTOR = "offsets.topic.replication.factor";
    public static final String TRANSACTION_MAX_TIMEOUT_MS = "transaction.max.timeout.ms";
    public static final String TRANSACTION_STATE_LOG_NUM_PARTITIONS = "transaction.state.log.num.partitions";
    public static final String TRANSACTION_STATE_LOG_SEGMENT_BYTES = "transaction.state.log.segment.bytes";
    public static final String TRANSACTION_STATE_LOG_REPLICATION_FACTOR = "transaction.state.log.replication.factor";
    public static final String TRANSACTION_STATE_LOG_MIN_ISR = "transaction.state.log.min.isr";
    public static final String TRANSACTIONAL_ID_EXPIRATION_MS = "transactional.id.expiration.ms";
    public static final String TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS = "transaction.abort.timed.out.transaction.cleanup.interval.ms";
    public static final String ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS = "add.partitions.to.txn.retry.backoff.max.ms";
    public static final String ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS = "add.partitions.to.txn.retry.backoff.ms";
    public static final String OFFSET_METADATA_MAX_BYTES = "offset.metadata.max.bytes";
    public static final String FETCH_MAX_BYTES = "fetch.max.bytes";
    public static final String FETCH_INLINE_RECORD_BYTES = "ferrite.fetch.inline.record.bytes";
    public static final String LOG_CLEANER_ENABLE = "log.cleaner.enable";
    public static final String LOG_CLEANER_THREADS = "log.cleaner.threads";
    public static final String LOG_CLEANER_DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size";
    public static final String LOG_CLEANER_IO_BUFFER_LOAD_FACTOR = "log.cleaner.io.buffer.load.factor";
    public static final String LOG_CLEANER_IO_BUFFER_SIZE = "log.cleaner.io.buffer.size";
    public static final String LOG_CLEANER_IO_MAX_BYTES_PER_SECOND = "log.cleaner.io.max.bytes.per.second";
    public static final String LOG_CLEANER_BACKOFF_MS = "log.cleaner.backoff.ms";
    /** The Prometheus endpoint: {@code http://host:port} (port 0: any free one); not set, no endpoint. */
    public static final String METRICS_LISTENER = "ferrite.metrics.listener";
    /** false: the network threads record nothing per request (no request, error, record or byte counts, no times). */
    public static final String METRICS_RECORDING = "ferrite.metrics.recording";

    /** Topic config -> the broker properties that set its default, most specific first (Kafka's synonyms). */
    public static final Map<String, List<String>> TOPIC_SYNONYMS = topicSynonyms();

    public static final ConfigCatalogue CATALOGUE = catalogue();

    private final Map<String, String> values;
    private final Map<String, Object> parsed = new HashMap<>();

    private BrokerConfig(final Map<String, String> values)
    {
        this.values = Collections.unmodifiableMap(new LinkedHashMap<>(values));
        UnknownNames.refuseUnknownFerrite(values.keySet());
        for (final Map.Entry<String, String> e : values.entrySet())
        {
            final ConfigKey key = CATALOGUE.key(e.getKey());
            if (key != null)
            {
                parsed.put(e.getKey(), key.parse(e.getValue()));
            }
        }
        topicDefaults(); // validates the topic defaults too
        ReplicaChecks.check(this);
        AuthorizerSettings.check(this);
        ListenerSecurity.check(this);
        metricsListener();
    }

    /**
     * A configuration from properties (a file's, then {@code --override}s on top).
     *
     * @throws ConfigException for an invalid value
     */
    public static BrokerConfig of(final Map<String, String> values)
    {
        return new BrokerConfig(values);
    }

    /** The properties as given (for DescribeConfigs: which were set). */
    public Map<String, String> values()
    {
        return values;
    }

    /**
     * Names given that Ferrite does not know (Kafka warns about such ones and carries on). The per-listener settings
     * Ferrite reads ({@link ListenerSecurity#perListenerNames}) are known; any other {@code listener.name.} one is not.
     */
    public List<String> unknownNames()
    {
        final List<String> unknown = new ArrayList<>();
        final Map<String, ConfigKey.Type> perListener = ListenerSecurity.perListenerNames(this);
        for (final String name : values.keySet())
        {
            if (CATALOGUE.key(name) == null && !perListener.containsKey(name))
            {
                unknown.add(name);
            }
        }
        return unknown;
    }

    public Object get(final String name)
    {
        if (parsed.containsKey(name))
        {
            return parsed.get(name);
        }
        final ConfigKey key = CATALOGUE.key(name);
        return key == null ? null : key.defaultParsed();
    }

    public int getInt(final String name)
    {
        return (Integer)get(name);
    }

    public long getLong(final String name)
    {
        return (Long)get(name);
    }

    public boolean getBoolean(final String name)
    {
        return (Boolean)get(name);
    }

    public String getString(final String name)
    {
        return (String)get(name);
    }

    public int nodeId()
    {
        return getInt(NODE_ID);
    }

    public String listeners()
    {
        return getString(LISTENERS);
    }

    public List<Path> logDirs()
    {
        @SuppressWarnings("unchecked")
        final List<String> dirs = values.containsKey(LOG_DIRS) ? (List<String>)get(LOG_DIRS) : List.of(getString(LOG_DIR));
        final List<Path> paths = new ArrayList<>();
        for (final String d : dirs)
        {
            paths.add(Path.of(d));
        }
        return paths;
    }

    /** The log cleaner's settings ({@code log.cleaner.*}), with the log engine's compaction. */
    public CleanerConfig cleaner()
    {
        return CleanerConfig.defaults().with(getBoolean(LOG_CLEANER_ENABLE), getInt(LOG_CLEANER_THREADS), getLong(LOG_CLEANER_DEDUPE_BUFFER_SIZE),
            (Double)get(LOG_CLEANER_IO_BUFFER_LOAD_FACTOR), getInt(LOG_CLEANER_IO_BUFFER_SIZE), (Double)get(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND),
            getLong(LOG_CLEANER_BACKOFF_MS));
    }

    public WriteStrategy writeStrategy()
    {
        return WriteStrategy.valueOf(getString(WRITE_STRATEGY).toUpperCase(java.util.Locale.ROOT));
    }

    /** Where the Prometheus endpoint listens ({@value #METRICS_LISTENER}; its host not resolved yet), or null: none. */
    public InetSocketAddress metricsListener()
    {
        final String listener = getString(METRICS_LISTENER);
        return listener == null ? null : Listeners.http(METRICS_LISTENER, listener);
    }

    /** The topic config defaults the broker properties give (what a topic without overrides gets). */
    public Map<String, String> topicDefaults()
    {
        final Map<String, String> defaults = new HashMap<>();
        for (final Map.Entry<String, List<String>> e : TOPIC_SYNONYMS.entrySet())
        {
            for (final String brokerName : e.getValue())
            {
                if (values.containsKey(brokerName))
                {
                    defaults.put(e.getKey(), topicValue(e.getKey(), brokerName, values.get(brokerName)));
                    break;
                }
            }
        }
        try
        {
            LogConfig.of(defaults);
        }
        catch (final ConfigException ex)
        {
            throw new ConfigException("Invalid broker default for a topic config: " + ex.getMessage());
        }
        return defaults;
    }

    /** A broker property's value in its topic config's unit (hours and minutes become milliseconds). */
    static String topicValue(final String topicName, final String brokerName, final String value)
    {
        if (brokerName.endsWith(".hours"))
        {
            return Long.toString(Long.parseLong(value.trim()) * 3_600_000L);
        }
        if (brokerName.endsWith(".minutes"))
        {
            return Long.toString(Long.parseLong(value.trim()) * 60_000L);
        }
        return value;
    }

    /**
     * Kafka 4.4's table of topic configs and the broker properties behind them (its
     * {@code ServerTopicConfigSynonyms}), most specific first, and Ferrite's own.
     */
    private static Map<String, List<String>> topicSynonyms()
    {
        final Map<String, List<String>> s = new LinkedHashMap<>();
        s.put(LogConfig.SEGMENT_BYTES, List.of("log.segment.bytes"));
        s.put(LogConfig.SEGMENT_MS, List.of("log.roll.ms", "log.roll.hours"));
        s.put(LogConfig.SEGMENT_JITTER_MS, List.of("log.roll.jitter.ms", "log.roll.jitter.hours"));
        s.put(LogConfig.SEGMENT_INDEX_BYTES, List.of("log.index.size.max.bytes"));
        s.put(LogConfig.FLUSH_MESSAGES, List.of("log.flush.interval.messages"));
        s.put(LogConfig.FLUSH_MS, List.of("log.flush.interval.ms", "log.flush.scheduler.interval.ms"));
        s.put(LogConfig.RETENTION_BYTES, List.of("log.retention.bytes"));
        s.put(LogConfig.RETENTION_MS, List.of("log.retention.ms", "log.retention.minutes", "log.retention.hours"));
        s.put(LogConfig.MAX_MESSAGE_BYTES, List.of("message.max.bytes"));
        s.put(LogConfig.MAX_DECOMPRESSED_MESSAGE_BYTES, List.of("max.decompressed.message.bytes"));
        s.put(LogConfig.INDEX_INTERVAL_BYTES, List.of("log.index.interval.bytes"));
        s.put("delete.retention.ms", List.of("log.cleaner.delete.retention.ms"));
        s.put("min.compaction.lag.ms", List.of("log.cleaner.min.compaction.lag.ms"));
        s.put("max.compaction.lag.ms", List.of("log.cleaner.max.compaction.lag.ms"));
        s.put(LogConfig.FILE_DELETE_DELAY_MS, List.of("log.segment.delete.delay.ms"));
        s.put("min.cleanable.dirty.ratio", List.of("log.cleaner.min.cleanable.ratio"));
        s.put(LogConfig.CLEANUP_POLICY, List.of("log.cleanup.policy"));
        s.put("unclean.leader.election.enable", List.of("unclean.leader.election.enable"));
        s.put(LogConfig.MIN_INSYNC_REPLICAS, List.of("min.insync.replicas"));
        s.put(LogConfig.COMPRESSION_TYPE, List.of("compression.type"));
        s.put("compression.gzip.level", List.of("compression.gzip.level"));
        s.put("compression.lz4.level", List.of("compression.lz4.level"));
        s.put("compression.zstd.level", List.of("compression.zstd.level"));
        s.put("preallocate", List.of("log.preallocate"));
        s.put(LogConfig.MESSAGE_TIMESTAMP_TYPE, List.of("log.message.timestamp.type"));
        s.put(LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, List.of("log.message.timestamp.before.max.ms"));
        s.put(LogConfig.MESSAGE_TIMESTAMP_AFTER_MAX_MS, List.of("log.message.timestamp.after.max.ms"));
        s.put("local.retention.ms", List.of("log.local.retention.ms"));
        s.put("local.retention.bytes", List.of("log.local.retention.bytes"));
        s.put("remote.copy.lag.ms", List.of("log.remote.copy.lag.ms"));
        s.put("remote.copy.lag.bytes", List.of("log.remote.copy.lag.bytes"));
        s.put(LogConfig.DURABILITY, List.of("ferrite.log.durability"));
        return Collections.unmodifiableMap(s);
    }

    /**
     * The broker properties that stand for the same setting as {@code name}, most specific first
     * (Kafka's {@code brokerConfigSynonyms}): the three retention units, the two roll and jitter
     * units, and {@code log.flush.interval.ms} falling back to the scheduler interval; any other
     * property is its only synonym. DescribeConfigs lists a broker config's synonyms from these.
     */
    public static List<String> brokerSynonyms(final String name)
    {
        switch (name)
        {
            case "log.retention.ms":
            case "log.retention.minutes":
            case "log.retention.hours":
                return TOPIC_SYNONYMS.get(LogConfig.RETENTION_MS);
            case "log.roll.ms":
            case "log.roll.hours":
                return TOPIC_SYNONYMS.get(LogConfig.SEGMENT_MS);
            case "log.roll.jitter.ms":
            case "log.roll.jitter.hours":
                return TOPIC_SYNONYMS.get(LogConfig.SEGMENT_JITTER_MS);
            case "log.flush.interval.ms":
                return TOPIC_SYNONYMS.get(LogConfig.FLUSH_MS);
            default:
                return List.of(name);
        }
    }

    /**
     * Kafka's default of a broker property behind a topic config: the topic config's default,
     * except where Kafka leaves the most specific unit unset (null) so that the coarser one
     * decides ({@code log.retention.ms} unset, {@code log.retention.hours=168}).
     */
    private static String brokerDefault(final String brokerName, final ConfigKey topicKey)
    {
        switch (brokerName)
        {
            case "log.retention.ms":
            case "log.retention.minutes":
            case "log.roll.ms":
            case "log.roll.jitter.ms":
            case "log.flush.interval.ms":
                return null;
            case "log.retention.hours":
            case "log.roll.hours":
                return "168";
            case "log.roll.jitter.hours":
                return "0";
            default:
                return topicKey.defaultValue();
        }
    }

    private static ConfigCatalogue catalogue()
    {
        final ConfigCatalogue c = new ConfigCatalogue()
            .define(NODE_ID, INT, "1", atLeast(0), true, "this broker's id")
            .define(LISTENERS, STRING, "PLAINTEXT://127.0.0.1:9092", NONE, true, "where the broker listens")
            .define(ADVERTISED_LISTENERS, STRING, null, NONE, true, "what clients are told to connect to (default: listeners)")
            // a cluster (issue 14; replication-lite, docs/configuration.md): read by Kafka's own classes there
            .define("process.roles", STRING, null, NONE, true, "broker,controller: a node of a cluster (not set: one node alone)")
            .define("controller.quorum.voters", STRING, null, NONE, true, "the cluster's voters, id@host:port,...")
            .define("controller.listener.names", STRING, null, NONE, true, "the controller listener's name in listeners")
            .define("ferrite.cluster.id", STRING, null, NONE, true, "the cluster's id (kafka-storage format --cluster-id)")
            .define("metadata.log.dir", STRING, null, NONE, true, "the metadata log's directory (default: <first log dir>/cluster-metadata)")
            .define(KAFKA_METADATA_LOG_DIR, STRING, null, NONE, true, "at the first start on an Apache Kafka log directory: Kafka's "
                + "metadata.log.dir, which holds __cluster_metadata-0 (default: looked for in log.dirs)")
            .define(KAFKA_METADATA_IMPORT_ENABLE, BOOLEAN, "true", NONE, true, "at the first start on an Apache Kafka log directory: "
                + "take over its topics' ids and configs from Kafka's metadata log, or refuse to start without it (false: start "
                + "with the broker defaults, which retention applies to Kafka's data)")
            .define("broker.heartbeat.interval.ms", INT, "2000", atLeast(1), true, "how often a broker heartbeats to the controller")
            .define("broker.session.timeout.ms", INT, "9000", atLeast(1), true, "a broker not heard from for this long is fenced")
            .define("ferrite.cluster.crash.fence.ms", LONG, "500", atLeast(-1), true, "the active controller fences a broker "
                + "whose heartbeat connection closed, that did not heartbeat within this grace and whose listener refuses "
                + "connections (its process is gone) without waiting out broker.session.timeout.ms; -1: off (Kafka's behaviour)")
            .define("initial.broker.registration.timeout.ms", INT, "60000", atLeast(1), true, "how long a starting broker tries to register")
            .define(LOG_DIRS, LIST, null, NONE, true, "log directories (default: log.dir)")
            .define(LOG_DIR, STRING, "./data", NONE, true, "the log directory when log.dirs is not set")
            .define(NUM_NETWORK_THREADS, INT, "3", atLeast(1), true, "network threads (NIO selectors)")
            .define(NUM_PARTITIONS, INT, "1", atLeast(1), true, "partitions of an auto-created topic, and of CreateTopics asking -1")
            .define(DEFAULT_REPLICATION_FACTOR, INT, "1", atLeast(1), true, "replication factor when CreateTopics asks -1")
            .define(AUTO_CREATE_TOPICS, BOOLEAN, "true", NONE, true, "create topics named in Metadata requests")
            .define(DELETE_TOPIC_ENABLE, BOOLEAN, "true", NONE, true, "allow DeleteTopics")
            .define(SOCKET_REQUEST_MAX_BYTES, INT, "104857600", atLeast(1), true, "largest request; a larger frame closes its connection")
            .define(SOCKET_SEND_BUFFER_BYTES, INT, "102400", NONE, true, "SO_SNDBUF (-1: the OS default)")
            .define(SOCKET_RECEIVE_BUFFER_BYTES, INT, "102400", NONE, true, "SO_RCVBUF (-1: the OS default)")
            .define(LOG_RETENTION_CHECK_INTERVAL_MS, LONG, "300000", atLeast(1), true, "how often retention runs")
            .define(PRODUCER_ID_EXPIRATION_MS, INT, "86400000", atLeast(1), true,
                "how long a partition remembers an idle producer (no batch or marker since, no transaction open); read at start")
            .define(PRODUCER_ID_EXPIRATION_CHECK_INTERVAL_MS, INT, "600000", atLeast(1), true,
                "how often each partition's log thread forgets the producers idle longer than producer.id.expiration.ms")
            .define(REPLICA_LAG_TIME_MAX_MS, LONG, "30000", atLeast(1), true,
                "a follower that has not caught up with the leader's log end for this long is proposed out of the ISR")
            .define(REPLICA_SOCKET_TIMEOUT_MS, INT, "30000", atLeast(1), true,
                "a follower's fetch not answered within this drops its connection to the leader, made again after the backoff")
            .define(REPLICA_FETCH_WAIT_MAX_MS, INT, "500", atLeast(0), true,
                "how long a follower's fetch waits at the leader for records (at most replica.socket.timeout.ms)")
            .define(REPLICA_FETCH_BACKOFF_MS, INT, "1000", atLeast(0), true,
                "a follower's wait after a fetch error or a lost connection before it fetches or connects again")
            .define(REPLICA_SOCKET_RECEIVE_BUFFER_BYTES, INT, "65536", NONE, true, "a follower's SO_RCVBUF (-1: the OS default)")
            .define(SOCKET_CONNECTION_SETUP_TIMEOUT_MS, LONG, "10000", atLeast(1), true,
                "how long a follower waits for its connection to the leader to be made")
            .define(LOG_THREADS, INT, "1", atLeast(1), true, "threads that append (each partition has one)")
            .define(IDLE_STRATEGY, STRING, "backoff", in("busy-spin", "backoff", "park", "sleep"), true,
                "how log threads wait for work: busy-spin (lowest latency, a core each), backoff (spin, then park 1 us "
                    + "to 1 ms; no yields), park (spin, then park 10 ms at a time; a network thread handing over work unparks it), sleep")
            .define(WRITE_STRATEGY, STRING, "mapped", in("mapped", "channel"), true, "how segments are written (see log-engine)")
            .define(METRICS_LISTENER, STRING, null, NONE, true, "http://host:port: serve the counters and JVM metrics in "
                + "Prometheus' text format at /metrics there (docs/operations.md); not set: no endpoint")
            .define(METRICS_RECORDING, BOOLEAN, "true", NONE, true, "false: the network threads record nothing per request "
                + "(requests, errors, records and bytes in and out, request times, duty cycles all stay at 0); connections, "
                + "consumer lag, the group coordinator's and the logs' figures still count. For measuring what the recording "
                + "costs (docs/operations.md); read at the start")
            .define(GROUP_MIN_SESSION_TIMEOUT_MS, INT, "6000", NONE, true, "shortest session timeout a member may ask for")
            .define(GROUP_MAX_SESSION_TIMEOUT_MS, INT, "1800000", NONE, true, "longest session timeout a member may ask for")
            .define(GROUP_INITIAL_REBALANCE_DELAY_MS, INT, "3000", atLeast(0), true,
                "how long the first rebalance of an empty group waits for more members")
            .define(GROUP_MAX_SIZE, INT, Integer.toString(Integer.MAX_VALUE), atLeast(1), true, "members a group may have")
            .define(OFFSETS_RETENTION_MINUTES, INT, "10080", atLeast(1), true, "how long an empty group's offsets are kept")
            .define(OFFSETS_RETENTION_CHECK_INTERVAL_MS, LONG, "600000", atLeast(1), true, "how often expired offsets are removed")
            .define(INTERNAL_OFFSETS_RETENTION_MS, LONG, null, atLeast(1), true, "testing only: offsets retention in milliseconds")
            .define(OFFSETS_TOPIC_NUM_PARTITIONS, INT, "50", atLeast(1), true, "partitions of __consumer_offsets (created on first use)")
            .define(OFFSETS_TOPIC_REPLICATION_FACTOR, INT, "3", atLeast(1), true,
                "replication factor of __consumer_offsets in a cluster (created through the controller, refused with fewer brokers: "
                    + "a cluster of 1 or 2 brokers has no working consumer group with the default, as Kafka — set it to the broker count or less)")
            .define(OFFSETS_TOPIC_SEGMENT_BYTES, INT, "104857600", atLeast(1), true, "segment.bytes of __consumer_offsets")
            .define(OFFSET_METADATA_MAX_BYTES, INT, "4096", NONE, true, "largest metadata string of a committed offset")
            .define(TRANSACTION_MAX_TIMEOUT_MS, INT, "900000", atLeast(1), true,
                "longest transaction.timeout.ms a producer may ask for (more: INVALID_TRANSACTION_TIMEOUT)")
            .define(TRANSACTION_STATE_LOG_NUM_PARTITIONS, INT, "50", atLeast(1), true, "partitions of __transaction_state (created on first use)")
            .define(TRANSACTION_STATE_LOG_SEGMENT_BYTES, INT, "104857600", atLeast(1), true, "segment.bytes of __transaction_state")
            .define(TRANSACTION_STATE_LOG_REPLICATION_FACTOR, INT, "3", atLeast(1), true,
                "replication factor of __transaction_state in a cluster (created through the controller, refused with fewer brokers: "
                    + "a cluster of 1 or 2 brokers has no working transactional producer with the default, as Kafka)")
            .define(TRANSACTION_STATE_LOG_MIN_ISR, INT, "2", atLeast(1), true,
                "min.insync.replicas of __transaction_state in a cluster (its topic config as the controller creates it)")
            .define(TRANSACTIONAL_ID_EXPIRATION_MS, INT, "604800000", atLeast(1), true,
                "how long an idle transactional id (no transaction running) is kept before it is removed")
            .define(TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS, INT, "10000", atLeast(1), true,
                "how often the coordinator looks for transactions past their transaction.timeout.ms, and aborts them")
            .define(ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MAX_MS, INT, "100", atLeast(0), true,
                "how long a produce v12+ whose partition's add meets CONCURRENT_TRANSACTIONS (its transaction still ending) retries it before that is its answer "
                    + "(a client's AddPartitionsToTxn and AddOffsetsToTxn are answered at once, as Kafka answers them)")
            // the coordinator on this node retries on the coordinators' agent whenever its state changes, and at its ticks
            // (txn.HeldAdd); the wait applies to a coordinator on another node of a cluster (txn.RemoteVerifier)
            .define(ADD_PARTITIONS_TO_TXN_RETRY_BACKOFF_MS, INT, "20", atLeast(1), true,
                "the wait before a produce v12+'s add that met CONCURRENT_TRANSACTIONS is sent again to its coordinator on another node")
            .define(FETCH_MAX_BYTES, INT, "57671680", atLeast(1024), true,
                "cap on the records of one fetch response: a request's max_bytes (and min_bytes) above it is lowered to it; a first batch larger than it still goes whole")
            .define(FETCH_INLINE_RECORD_BYTES, INT, "32768", atLeast(0), true, "a fetched partition's records up to this size are copied "
                + "into the response beside its headers (up to 128 KiB a response), larger ones sent from the segment file with sendfile; 0 sends all from the file")
            // Kafka 4.4's CleanerConfig: names, types, defaults and checks (none where Kafka has none)
            .define(LOG_CLEANER_ENABLE, BOOLEAN, "true", NONE, true,
                "run the log cleaner, which compacts cleanup.policy=compact topics (deprecated in Kafka 4.1; false: they grow for ever)")
            .define(LOG_CLEANER_THREADS, INT, "1", atLeast(0), true, "log cleaner threads (each with its own offset map)")
            .define(LOG_CLEANER_DEDUPE_BUFFER_SIZE, LONG, "134217728", NONE, true,
                "off-heap memory of the cleaner threads' key -> offset maps together (at most 2 GiB a thread), taken at a thread's first clean")
            .define(LOG_CLEANER_IO_BUFFER_LOAD_FACTOR, DOUBLE, "0.9", NONE, true, "how full an offset map gets before a clean stops filling it")
            .define(LOG_CLEANER_IO_BUFFER_SIZE, INT, "524288", atLeast(0), true,
                "accepted; Ferrite's cleaner reads and writes mapped segments, with no I/O buffers")
            .define(LOG_CLEANER_IO_MAX_BYTES_PER_SECOND, DOUBLE, Double.toString(Double.MAX_VALUE), NONE, true,
                "the cleaner threads' read and write bytes per second together, on average (Kafka's throttler, checked every 300 ms)")
            .define(LOG_CLEANER_BACKOFF_MS, LONG, "15000", atLeast(0), true, "how long a cleaner thread waits when no log needs cleaning");
        for (final Map.Entry<String, List<String>> e : topicSynonyms().entrySet())
        {
            final ConfigKey topicKey = LogConfig.CATALOGUE.key(e.getKey());
            for (final String brokerName : e.getValue())
            {
                final boolean scaled = brokerName.endsWith(".hours") || brokerName.endsWith(".minutes");
                // checked as the topic config is, so that a bad value is told under the name the user wrote
                c.define(brokerName, scaled ? INT : topicKey.type(), brokerDefault(brokerName, topicKey), scaled ? NONE : topicKey.validator(),
                    topicKey.implemented(), "default of the topic config " + e.getKey()
                    + (topicKey.implemented() ? "" : " (stored, no effect yet)"));
            }
        }
        ListenerSecurity.define(c); // listener.security.protocol.map, sasl.enabled.mechanisms, ...
        return c;
    }
}
