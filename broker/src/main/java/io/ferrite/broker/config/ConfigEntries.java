package io.ferrite.broker.config;

import io.ferrite.log.LogConfig;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Configs as Kafka reports them to clients: each with its value, where that value comes from
 * (the config source), the chain of synonyms behind it, its type and documentation. One place for
 * what DescribeConfigs and CreateTopics (v5+) both report, so that the two never disagree.
 *
 * <p>Kafka's sources, most specific first: a topic's own override ({@link #TOPIC_CONFIG},
 * {@code DYNAMIC_TOPIC_CONFIG} in the Admin API), this node's dynamic broker config
 * ({@link #DYNAMIC_BROKER_CONFIG}), the cluster default's ({@link #DYNAMIC_DEFAULT_BROKER_CONFIG}),
 * a broker property set in the file or by {@code --override} ({@link #STATIC_BROKER_CONFIG}) and a
 * default ({@link #DEFAULT_CONFIG}) ({@link DynamicBrokerConfigs}).
 *
 * <p>Values are printed the way Kafka prints parsed values ({@link ConfigKey#print}). Only configs
 * Ferrite knows are reported; {@link ConfigKey#doc()} says for each whether it has an effect.
 */
public final class ConfigEntries
{
    /** Kafka's config source ids (DescribeConfigsResponse.ConfigSource). */
    public static final byte TOPIC_CONFIG = 1;
    public static final byte DYNAMIC_BROKER_CONFIG = 2;
    public static final byte DYNAMIC_DEFAULT_BROKER_CONFIG = 3;
    public static final byte STATIC_BROKER_CONFIG = 4;
    public static final byte DEFAULT_CONFIG = 5;

    /** Kafka's config type ids (DescribeConfigsResponse.ConfigType). */
    static final byte TYPE_UNKNOWN = 0;

    /** The topic configs every topic reports: the catalogue less the test-only internal ones. */
    private static final List<ConfigKey> REPORTED_TOPIC_KEYS = LogConfig.CATALOGUE.keys().stream()
        .filter(key -> !isInternal(key.name())).toList();

    /** One link of a config's synonym chain: a name, its value there, and the source it comes from. */
    public record Synonym(String name, String value, byte source)
    {
    }

    /**
     * One reported config. {@code synonyms} is the full chain (empty when Kafka gives none);
     * callers leave it out when the request did not ask for synonyms.
     */
    public record Entry(String name, String value, byte source, boolean readOnly, boolean sensitive, List<Synonym> synonyms,
        byte type, String documentation)
    {
    }

    private final DynamicBrokerConfigs dynamic;

    /** Static properties only. */
    public ConfigEntries(final BrokerConfig broker)
    {
        this(DynamicBrokerConfigs.none(broker));
    }

    public ConfigEntries(final DynamicBrokerConfigs dynamic)
    {
        this.dynamic = dynamic;
    }

    /**
     * A topic's configs as DescribeConfigs reports them, in catalogue order, those {@code wanted}
     * only: every non-internal topic config, and an internal one only when the topic overrides
     * it (as Kafka lists a config that is set even when it would not list it otherwise).
     */
    public List<Entry> topic(final Map<String, String> overrides, final Predicate<String> wanted)
    {
        final DynamicBrokerConfigs.State state = dynamic.state();
        final List<Entry> entries = new ArrayList<>();
        for (final ConfigKey key : LogConfig.CATALOGUE.keys())
        {
            if ((!isInternal(key.name()) || overrides.containsKey(key.name())) && wanted.test(key.name()))
            {
                entries.add(topicEntry(state, key, overrides));
            }
        }
        return entries;
    }

    /**
     * One topic config. The value is the effective one (override, else the broker property
     * behind it, else the default). The synonym chain follows Kafka's rules to the letter,
     * including one surprise: the broker synonyms are listed set-in-the-file ones first, then
     * defaults, and everything before the most specific broker name is dropped. So a topic
     * whose {@code retention.ms} comes from {@code log.retention.hours=24} in the file reports
     * 86400000 with source DEFAULT_CONFIG and no synonyms, exactly as Kafka 4.4 does, while one
     * set by {@code log.retention.ms} reports STATIC_BROKER_CONFIG.
     */
    Entry topicEntry(final DynamicBrokerConfigs.State state, final ConfigKey key, final Map<String, String> overrides)
    {
        final Map<String, String> topicDefaults = state.topicDefaults();
        final String name = key.name();
        final String override = overrides.get(name);
        final String value;
        if (override != null)
        {
            value = printed(key, override);
        }
        else if (topicDefaults.containsKey(name))
        {
            value = printed(key, topicDefaults.get(name));
        }
        else
        {
            value = printed(key, key.defaultValue());
        }
        final List<Synonym> synonyms = new ArrayList<>();
        if (override != null)
        {
            synonyms.add(new Synonym(name, value, TOPIC_CONFIG));
        }
        final List<String> brokerNames = BrokerConfig.TOPIC_SYNONYMS.get(name);
        if (brokerNames != null)
        {
            synonyms.addAll(brokerChain(state, brokerNames.get(0), brokerNames, false, true));
        }
        final byte source = synonyms.isEmpty() ? DEFAULT_CONFIG : synonyms.get(0).source();
        return new Entry(name, value, source, false, key.type() == ConfigKey.Type.PASSWORD, Collections.unmodifiableList(synonyms),
            typeId(key.type()), key.doc());
    }

    /**
     * A topic's configs as CreateTopics v5+ reports them (Kafka's controller resolves each
     * config on its own there): the override as given, else the first broker synonym set in the
     * file (converted to the topic config's unit), else the default. No synonym chains.
     */
    public List<Entry> createdTopic(final Map<String, String> overrides)
    {
        final BrokerConfig broker = dynamic.state().statics();
        final List<Entry> entries = new ArrayList<>(REPORTED_TOPIC_KEYS.size());
        for (final ConfigKey key : REPORTED_TOPIC_KEYS)
        {
            final String name = key.name();
            String value = overrides.get(name);
            byte source = TOPIC_CONFIG;
            if (value == null)
            {
                source = DEFAULT_CONFIG;
                value = printed(key, key.defaultValue());
                for (final String brokerName : BrokerConfig.TOPIC_SYNONYMS.getOrDefault(name, List.of()))
                {
                    if (broker.values().containsKey(brokerName))
                    {
                        source = STATIC_BROKER_CONFIG;
                        value = BrokerConfig.topicValue(name, brokerName, broker.values().get(brokerName));
                        break;
                    }
                }
            }
            entries.add(new Entry(name, value, source, false, key.type() == ConfigKey.Type.PASSWORD, List.of(),
                typeId(key.type()), key.doc()));
        }
        return entries;
    }

    /**
     * This broker's configs as DescribeConfigs reports them for the broker resource named by its
     * id: every property Ferrite knows (set or not) with the value in force, then the ones set
     * that it does not know, those {@code wanted} only. Read-only but for the
     * {@link DynamicBrokerConfigs#DYNAMIC} ones.
     */
    public List<Entry> broker(final Predicate<String> wanted)
    {
        final DynamicBrokerConfigs.State state = dynamic.state();
        final BrokerConfig broker = state.effective();
        final ConfigCatalogue catalogue = BrokerConfig.CATALOGUE;
        final List<Entry> entries = new ArrayList<>();
        for (final ConfigKey key : catalogue.keys())
        {
            if (wanted.test(key.name()))
            {
                final String set = broker.values().get(key.name());
                final String value = set != null ? printed(key, set) : printed(key, key.defaultValue());
                entries.add(brokerEntry(state, key.name(), value, key.type() == ConfigKey.Type.PASSWORD, typeId(key.type()), key.doc(),
                    true));
            }
        }
        for (final String name : broker.unknownNames())
        {
            if (wanted.test(name))
            {
                // Kafka treats a property of unknown type as possibly secret: reported, value hidden
                entries.add(brokerEntry(state, name, broker.values().get(name), true, TYPE_UNKNOWN, null, true));
            }
        }
        for (final Map.Entry<String, ConfigKey.Type> e : ListenerSecurity.perListenerNames(broker).entrySet())
        {
            final String set = broker.values().get(e.getKey());
            if (set != null && wanted.test(e.getKey()))
            {
                // typed as Kafka types a listener override: as the name it overrides (the JAAS text a PASSWORD, hidden)
                entries.add(brokerEntry(state, e.getKey(), set, e.getValue() == ConfigKey.Type.PASSWORD, typeId(e.getValue()), null, true));
            }
        }
        return entries;
    }

    /**
     * The cluster default broker resource ({@code --entity-default}) as Kafka reports it: the
     * dynamic default configs only, each with its value as set and a synonym chain without this
     * node's dynamic values.
     */
    public List<Entry> clusterDefault(final Predicate<String> wanted)
    {
        final DynamicBrokerConfigs.State state = dynamic.state();
        final List<Entry> entries = new ArrayList<>();
        for (final Map.Entry<String, String> e : state.clusterDefault().entrySet())
        {
            if (wanted.test(e.getKey()))
            {
                final ConfigKey key = BrokerConfig.CATALOGUE.key(e.getKey());
                final boolean sensitive = key == null || key.type() == ConfigKey.Type.PASSWORD;
                entries.add(brokerEntry(state, e.getKey(), e.getValue(), sensitive, key == null ? TYPE_UNKNOWN : typeId(key.type()),
                    key == null ? null : key.doc(), false));
            }
        }
        return entries;
    }

    private Entry brokerEntry(final DynamicBrokerConfigs.State state, final String name, final String value, final boolean sensitive,
        final byte type, final String doc, final boolean perBroker)
    {
        final List<Synonym> synonyms = brokerChain(state, name, BrokerConfig.brokerSynonyms(name), sensitive, perBroker);
        final byte source = synonyms.isEmpty() ? DEFAULT_CONFIG : synonyms.get(0).source();
        final boolean readOnly = !DynamicBrokerConfigs.DYNAMIC.contains(name);
        return new Entry(name, sensitive ? null : value, source, readOnly, sensitive, synonyms, type, doc);
    }

    /**
     * Kafka's synonym chain of broker properties: those of {@code names} set dynamically for this
     * node, then for the cluster default, then in the file (each group in order), then those with
     * a default (in order), less every link before the first one named {@code head}; values hidden
     * when {@code sensitive}. Not {@code perBroker} (the cluster default resource): the cluster
     * default's links only, as Kafka filters them.
     */
    private List<Synonym> brokerChain(final DynamicBrokerConfigs.State state, final String head, final List<String> names,
        final boolean sensitive, final boolean perBroker)
    {
        final List<Synonym> chain = new ArrayList<>();
        if (!perBroker)
        {
            addSet(chain, state.clusterDefault(), names, sensitive, DYNAMIC_DEFAULT_BROKER_CONFIG);
            return dropBefore(head, chain);
        }
        addSet(chain, state.perBroker(), names, sensitive, DYNAMIC_BROKER_CONFIG);
        addSet(chain, state.clusterDefault(), names, sensitive, DYNAMIC_DEFAULT_BROKER_CONFIG);
        addSet(chain, state.statics().values(), names, sensitive, STATIC_BROKER_CONFIG);
        for (final String name : names)
        {
            final ConfigKey key = BrokerConfig.CATALOGUE.key(name);
            if (key != null && key.defaultValue() != null)
            {
                chain.add(new Synonym(name, sensitive ? null : printed(key, key.defaultValue()), DEFAULT_CONFIG));
            }
        }
        return dropBefore(head, chain);
    }

    private static List<Synonym> dropBefore(final String head, final List<Synonym> chain)
    {
        int first = 0;
        while (first < chain.size() && !chain.get(first).name().equals(head))
        {
            first++;
        }
        return chain.subList(first, chain.size());
    }

    private static void addSet(final List<Synonym> chain, final Map<String, String> set, final List<String> names, final boolean sensitive,
        final byte source)
    {
        for (final String name : names)
        {
            final String value = set.get(name);
            if (value != null)
            {
                chain.add(new Synonym(name, sensitive ? null : value, source));
            }
        }
    }

    /** A value as Kafka prints it once parsed; one that does not parse (cannot happen for validated configs) as it is. */
    private static String printed(final ConfigKey key, final String text)
    {
        if (text == null)
        {
            return null;
        }
        try
        {
            return key.canonical(text);
        }
        catch (final ConfigException ex)
        {
            return text;
        }
    }

    static boolean isInternal(final String name)
    {
        return name.startsWith("internal.");
    }

    /** Kafka's config type id of a catalogue type. */
    public static byte typeId(final ConfigKey.Type type)
    {
        switch (type)
        {
            case BOOLEAN: return 1;
            case STRING: return 2;
            case INT: return 3;
            case LONG: return 5;
            case DOUBLE: return 6;
            case LIST: return 7;
            case PASSWORD: return 9;
            default: return TYPE_UNKNOWN;
        }
    }
}
