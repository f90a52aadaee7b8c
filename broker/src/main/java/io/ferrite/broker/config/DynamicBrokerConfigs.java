package io.ferrite.broker.config;

import io.ferrite.log.LogConfig;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogReconfiguration;
import io.ferrite.log.clean.OffsetMap;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;
import io.ferrite.log.config.PropertiesFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

/**
 * Dynamic broker configs (Kafka's {@code DynamicBrokerConfig}): values set at run time by IncrementalAlterConfigs or
 * AlterConfigs for this node ({@code --entity-name <id>}) or for every broker ({@code --entity-default}), on top of
 * the static properties as Kafka layers them: this node's dynamic value, else the cluster default's, else the file's,
 * else the default. Ferrite accepts the ones Kafka 4.4 changes at run time that it honours ({@link #DYNAMIC}): the
 * cleaner's {@code log.cleaner.*} settings and the broker-level topic defaults (the most specific broker synonym of
 * each topic config, Kafka's {@code DynamicLogConfig}); names it does not know are kept as Kafka keeps custom configs.
 *
 * <p>Persistence: one small properties file, {@value #FILE}, in the first log directory, replaced whole and fsynced
 * with its directory ({@link PropertiesFile}, {@link io.ferrite.log.config.DurableFile}): a change is rare, tiny and
 * whole, so a file written atomically is enough and a crash leaves the old set or the new one; the creation journal
 * is for topics, and a single node has no metadata log. Read back at start, before the logs open, so the logs and
 * the cleaner start with the dynamic values.
 *
 * <p>Applied live by {@link LogReconfiguration}: each log's config is one volatile reference its owner reads, the
 * cleaner threads are restarted with the new settings. One writer: the admin agent ({@link #alter} is synchronized
 * anyway); readers take the {@link State} snapshot, a volatile read.
 */
public final class DynamicBrokerConfigs
{
    private static final Logger LOG = LoggerFactory.getLogger(DynamicBrokerConfigs.class);
    public static final String FILE = "dynamic-broker-configs.properties";
    private static final String BROKER_PREFIX = "broker.";
    private static final String DEFAULT_PREFIX = "default.";

    /** The cleaner's settings Kafka's {@code LogCleaner} reconfigures (not {@code log.cleaner.enable}). */
    static final Set<String> CLEANER = Set.of(BrokerConfig.LOG_CLEANER_THREADS, BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE,
        BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR, BrokerConfig.LOG_CLEANER_IO_BUFFER_SIZE,
        BrokerConfig.LOG_CLEANER_IO_MAX_BYTES_PER_SECOND, BrokerConfig.LOG_CLEANER_BACKOFF_MS);

    /** The configs that change at run time here: {@link #CLEANER} and the first broker synonym of every topic config. */
    public static final Set<String> DYNAMIC = dynamicNames();

    /**
     * What is in force: {@code effective} is the static properties with the cluster default's and then this node's
     * dynamic values on top; {@code topicDefaults} its topic defaults (computed once per change).
     */
    public record State(BrokerConfig statics, BrokerConfig effective, Map<String, String> perBroker, Map<String, String> clusterDefault,
        Map<String, String> topicDefaults)
    {
    }

    private final Path file;
    private volatile State state;
    private LogManager logs;

    private DynamicBrokerConfigs(final Path file, final State state)
    {
        this.file = file;
        this.state = state;
    }

    /** Static properties only, nothing stored (for a configuration that is not a running broker's). */
    public static DynamicBrokerConfigs none(final BrokerConfig statics)
    {
        return new DynamicBrokerConfigs(null, new State(statics, statics, Map.of(), Map.of(), statics.topicDefaults()));
    }

    /**
     * In cluster mode: the dynamic configs are the metadata image's ({@link #follow}), not {@value #FILE}'s. A file
     * left in {@code logDir} by this node run alone is neither read nor changed nor migrated: its values are not in
     * force while the node is in a cluster (a warning names them), and are again if it is started alone.
     */
    public static DynamicBrokerConfigs forCluster(final BrokerConfig statics, final Path logDir)
    {
        final Path file = logDir.resolve(FILE);
        if (Files.exists(file))
        {
            LOG.warn("cluster mode: the dynamic broker configs in {} (this node's when alone) are not applied: a cluster's "
                + "come from its metadata (kafka-configs --entity-type brokers against the cluster sets them there)", file);
        }
        return new DynamicBrokerConfigs(null, state(statics, Map.of(), Map.of()));
    }

    /**
     * The dynamic configs stored in {@code logDir} on top of {@code statics}. As Kafka at start, a stored value that
     * no longer holds (the static file changed under it, or an older Ferrite stored it) never stops the broker: a
     * name that may not change at run time or a value that does not parse is left out on its own, then the cluster
     * default's set and this node's set are each checked whole ({@link #check}'s rules, the cleaner's included) and
     * left out when not valid, each logged. A file that cannot be read at all is logged and ignored.
     */
    public static DynamicBrokerConfigs load(final BrokerConfig statics, final Path logDir) throws IOException
    {
        final Path file = logDir.resolve(FILE);
        final Map<String, String> perBroker = new LinkedHashMap<>();
        final Map<String, String> clusterDefault = new LinkedHashMap<>();
        if (Files.exists(file))
        {
            final Properties stored = new Properties();
            try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8))
            {
                stored.load(in);
            }
            catch (final IllegalArgumentException ex)
            {
                LOG.error("the dynamic broker configs in {} cannot be read, ignored: {}", file, ex.getMessage());
                stored.clear();
            }
            for (final String key : stored.stringPropertyNames())
            {
                if (key.startsWith(BROKER_PREFIX))
                {
                    perBroker.put(key.substring(BROKER_PREFIX.length()), stored.getProperty(key));
                }
                else if (key.startsWith(DEFAULT_PREFIX))
                {
                    clusterDefault.put(key.substring(DEFAULT_PREFIX.length()), stored.getProperty(key));
                }
            }
        }
        final State none = state(statics, Map.of(), Map.of());
        final Map<String, String> defaults = loadable(none, false, clusterDefault, file);
        final State withDefaults = state(statics, Map.of(), defaults);
        final Map<String, String> own = loadable(withDefaults, true, perBroker, file);
        if (!own.isEmpty() || !defaults.isEmpty())
        {
            LOG.info("dynamic broker configs: this node {}, cluster default {}", own.keySet(), defaults.keySet());
        }
        return new DynamicBrokerConfigs(file, state(statics, own, defaults));
    }

    /** The entries of {@code stored} that may be loaded on top of {@code current}, as {@link #load} says. */
    private static Map<String, String> loadable(final State current, final boolean perBroker, final Map<String, String> stored,
        final Path file)
    {
        final Map<String, String> kept = new LinkedHashMap<>();
        for (final Map.Entry<String, String> e : stored.entrySet())
        {
            final String problem = notDynamic(List.of(e.getKey())) != null ? "not dynamic" : unparsable(e.getKey(), e.getValue());
            if (problem == null)
            {
                kept.put(e.getKey(), e.getValue());
            }
            else
            {
                LOG.error("the dynamic broker config {} of {} in {} is left out: {}", e.getKey(), perBroker ? "this node" : "the cluster default",
                    file, problem);
            }
        }
        final String invalid = check(current, perBroker, kept);
        if (invalid != null)
        {
            LOG.error("the dynamic broker configs {} of {} in {} are left out: {}", kept.keySet(), perBroker ? "this node" : "the cluster default",
                file, invalid);
            return Map.of();
        }
        return kept;
    }

    private static String unparsable(final String name, final String value)
    {
        final ConfigKey key = BrokerConfig.CATALOGUE.key(name);
        try
        {
            if (key != null)
            {
                key.parse(value);
            }
            return null;
        }
        catch (final ConfigException ex)
        {
            return ex.getMessage();
        }
    }

    private static State state(final BrokerConfig statics, final Map<String, String> perBroker, final Map<String, String> clusterDefault)
    {
        final Map<String, String> merged = new LinkedHashMap<>(statics.values());
        merged.putAll(clusterDefault);
        merged.putAll(perBroker);
        final BrokerConfig effective = BrokerConfig.of(merged);
        return new State(statics, effective, Collections.unmodifiableMap(new LinkedHashMap<>(perBroker)),
            Collections.unmodifiableMap(new LinkedHashMap<>(clusterDefault)), Collections.unmodifiableMap(effective.topicDefaults()));
    }

    public State state()
    {
        return state;
    }

    /** The configuration in force (static, dynamic on top). */
    public BrokerConfig effective()
    {
        return state.effective();
    }

    /** From now on, changes reach {@code logManager}'s logs and cleaner. */
    public synchronized void applyTo(final LogManager logManager)
    {
        this.logs = logManager;
    }

    /**
     * Kafka's refusal of the names among {@code names} that cannot change at run time ({@code INVALID_REQUEST}), in
     * the order given: every Kafka 4.4 broker config ({@link KafkaBrokerConfigNames}) and every one Ferrite knows that
     * is not {@link #DYNAMIC} here (Kafka's static ones, and its dynamic ones that Ferrite does not honour); null when
     * every one may change. A name neither knows is a custom config, kept.
     */
    public static String notDynamic(final List<String> names)
    {
        final Set<String> refused = new LinkedHashSet<>();
        for (final String name : names)
        {
            if ((BrokerConfig.CATALOGUE.key(name) != null || KafkaBrokerConfigNames.known(name)) && !DYNAMIC.contains(name))
            {
                refused.add(name);
            }
        }
        return refused.isEmpty() ? null : "Cannot update these configs dynamically: " + List.copyOf(refused);
    }

    /**
     * Why {@code next} cannot become this node's ({@code perBroker}) or the cluster default's dynamic set, with
     * Kafka's message ({@code INVALID_REQUEST}), or null when it can: each value parses and passes its config's
     * check, the whole configuration stays valid, {@code log.cleaner.threads} stays within half and double of the
     * threads running (Kafka's {@code LogCleaner.validateReconfiguration}) and the cleaner can start with the result
     * ({@link #cleanerProblem}).
     */
    public String check(final boolean perBroker, final Map<String, String> next)
    {
        return check(state, perBroker, next);
    }

    private static String check(final State current, final boolean perBroker, final Map<String, String> next)
    {
        final String refused = notDynamic(List.copyOf(next.keySet()));
        if (refused != null)
        {
            return refused;
        }
        try
        {
            for (final Map.Entry<String, String> e : next.entrySet())
            {
                final ConfigKey key = BrokerConfig.CATALOGUE.key(e.getKey());
                if (key != null)
                {
                    key.parse(e.getValue());
                }
            }
            final State after = perBroker ? state(current.statics(), next, current.clusterDefault()) :
                state(current.statics(), current.perBroker(), next);
            final int threads = current.effective().getInt(BrokerConfig.LOG_CLEANER_THREADS);
            final int newThreads = after.effective().getInt(BrokerConfig.LOG_CLEANER_THREADS);
            if (newThreads < 1)
            {
                return cleanerThreads("should be at least 1");
            }
            if (newThreads < threads / 2)
            {
                return cleanerThreads("cannot be reduced to less than half the current value " + threads);
            }
            if (newThreads > threads * 2)
            {
                return cleanerThreads("cannot be increased to more than double the current value " + threads);
            }
            return cleanerProblem(after.effective());
        }
        catch (final ConfigException ex)
        {
            return ex.getMessage();
        }
    }

    /**
     * Why the cleaner threads could not start with {@code config}'s settings, or null: Kafka's own rule (its
     * {@code KafkaConfig} requires more than 1 MiB of {@code log.cleaner.dedupe.buffer.size} per cleaner thread, with
     * Scala's {@code require} message), then what each thread's offset map needs (a load factor in (0, 1] here;
     * Kafka takes any and its cleaner fails later, "offset map is too small", when the factor is too small).
     */
    static String cleanerProblem(final BrokerConfig config)
    {
        final long dedupe = config.getLong(BrokerConfig.LOG_CLEANER_DEDUPE_BUFFER_SIZE);
        final int threads = config.getInt(BrokerConfig.LOG_CLEANER_THREADS);
        if (dedupe / threads <= 1024 * 1024)
        {
            return "requirement failed: log.cleaner.dedupe.buffer.size must be at least 1MB per cleaner thread.";
        }
        final double loadFactor = (Double)config.get(BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR);
        final String problem = OffsetMap.problem(OffsetMap.memoryPerThread(dedupe, threads), loadFactor);
        return problem == null ? null : "Invalid value " + loadFactor + " for configuration "
            + BrokerConfig.LOG_CLEANER_IO_BUFFER_LOAD_FACTOR + ": " + problem;
    }

    /** Kafka's message for a refused cleaner thread count (its ConfigException wrapped once more by the broker). */
    private static String cleanerThreads(final String why)
    {
        return "Invalid value org.apache.kafka.common.config.ConfigException: Log cleaner threads " + why
            + " for configuration Invalid dynamic configuration";
    }

    /**
     * Makes {@code next} this node's ({@code perBroker}) or the cluster default's dynamic set, all or nothing
     * ({@link LogReconfiguration#apply}): the cleaner restarted with it, every log's new config computed, then stored
     * durably and in force. The caller has {@link #check}ed it.
     *
     * @throws IOException           when the file cannot be written or a log's overrides cannot be read (nothing changed)
     * @throws IllegalStateException when the cleaner cannot start with it (nothing changed, the old threads run)
     * @throws ConfigException       when a log's stored overrides are not valid (nothing changed)
     */
    public synchronized void alter(final boolean perBroker, final Map<String, String> next) throws IOException
    {
        final State current = state;
        final State after = perBroker ? state(current.statics(), next, current.clusterDefault()) :
            state(current.statics(), current.perBroker(), next);
        final LogReconfiguration.Store store = () ->
        {
            if (file != null)
            {
                final Map<String, String> stored = new LinkedHashMap<>();
                after.perBroker().forEach((k, v) -> stored.put(BROKER_PREFIX + k, v));
                after.clusterDefault().forEach((k, v) -> stored.put(DEFAULT_PREFIX + k, v));
                PropertiesFile.write(file, stored, "Ferrite's dynamic broker configs: broker.* this node's, default.* the cluster default's");
            }
            state = after;
        };
        install(after, perBroker, next, store);
    }

    /**
     * Cluster mode: the metadata image's dynamic configs of this node ({@code perBroker}) or of the cluster default are
     * now {@code configs} (Kafka's controller wrote them; this node checked them before it forwarded the change). Put
     * in force and applied to the logs and the cleaner as {@link #alter} does (all or nothing), without a file: the metadata log keeps
     * them. As Kafka's broker skips what it cannot apply from the metadata, a config that cannot change at run time
     * is left out and the whole set is kept out when it does not hold on top of the static properties (logged).
     *
     * @throws IOException when a log's overrides cannot be read while applying
     */
    public synchronized void follow(final boolean perBroker, final Map<String, String> configs) throws IOException
    {
        final Map<String, String> next = new LinkedHashMap<>();
        configs.forEach((name, value) ->
        {
            if (BrokerConfig.CATALOGUE.key(name) != null && !DYNAMIC.contains(name))
            {
                LOG.warn("the cluster's dynamic broker config {} cannot change at run time here: not applied", name);
            }
            else
            {
                next.put(name, value);
            }
        });
        final State current = state;
        if ((perBroker ? current.perBroker() : current.clusterDefault()).equals(next))
        {
            return;
        }
        final State after;
        try
        {
            after = perBroker ? state(current.statics(), next, current.clusterDefault()) :
                state(current.statics(), current.perBroker(), next);
        }
        catch (final ConfigException ex)
        {
            LOG.error("the cluster's dynamic broker configs {} of {} are not valid here, not applied: {}", next.keySet(),
                perBroker ? "this node" : "the cluster default", ex.getMessage());
            return;
        }
        install(after, perBroker, next, () -> state = after);
    }

    private void install(final State after, final boolean perBroker, final Map<String, String> next,
        final LogReconfiguration.Store store) throws IOException
    {
        if (logs != null)
        {
            LogReconfiguration.apply(logs, LogConfig.of(after.topicDefaults()), after.effective().cleaner(), store);
        }
        else
        {
            store.run();
        }
        // names only: a custom config may be a secret (DescribeConfigs hides its value too)
        LOG.info("dynamic broker configs of {} now {}", perBroker ? "this node" : "the cluster default", next.keySet());
    }

    private static Set<String> dynamicNames()
    {
        final Set<String> names = new LinkedHashSet<>(CLEANER);
        for (final List<String> synonyms : BrokerConfig.TOPIC_SYNONYMS.values())
        {
            if (!synonyms.get(0).startsWith("ferrite."))
            {
                names.add(synonyms.get(0));
            }
        }
        return Collections.unmodifiableSet(names);
    }
}
