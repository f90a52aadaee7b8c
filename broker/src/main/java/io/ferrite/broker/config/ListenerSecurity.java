package io.ferrite.broker.config;

import io.ferrite.broker.config.ListenerEndpoints.Endpoint;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;
import io.ferrite.log.config.ConfigKey;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.ferrite.log.config.ConfigKey.Type.INT;
import static io.ferrite.log.config.ConfigKey.Type.LIST;
import static io.ferrite.log.config.ConfigKey.Type.LONG;
import static io.ferrite.log.config.ConfigKey.Type.PASSWORD;
import static io.ferrite.log.config.ConfigKey.Type.STRING;
import static io.ferrite.log.config.ConfigKey.Validator.NONE;
import static io.ferrite.log.config.ConfigKey.Validator.atLeast;

/**
 * The broker's listeners and their security as Kafka 4.4 configures them: the broker listeners of {@code listeners}
 * (those not named in {@code controller.listener.names}), what each advertises, and for a SASL_PLAINTEXT listener its
 * mechanisms ({@code listener.name.<listener>.sasl.enabled.mechanisms}, else {@code sasl.enabled.mechanisms}: PLAIN,
 * SCRAM-SHA-256, SCRAM-SHA-512) and its PLAIN users ({@code listener.name.<listener>.plain.sasl.jaas.config}); for an SSL or
 * SASL_SSL listener its TLS ({@link TlsSettings}). What Ferrite does not have (GSSAPI, OAUTHBEARER) is refused at start
 * with a message that says so, never served as plaintext.
 */
public final class ListenerSecurity
{
    public static final String SASL_ENABLED_MECHANISMS = "sasl.enabled.mechanisms";
    public static final String FAILED_AUTHENTICATION_DELAY_MS = "connection.failed.authentication.delay.ms";
    public static final String CONNECTIONS_MAX_IDLE_MS = "connections.max.idle.ms";
    public static final String SASL_SERVER_MAX_RECEIVE_SIZE = "sasl.server.max.receive.size";
    public static final String CONNECTIONS_MAX_REAUTH_MS = "connections.max.reauth.ms";
    public static final String CONTROLLER_LISTENER_NAMES = "controller.listener.names";
    public static final String PLAIN = "PLAIN";
    private static final String PLAIN_JAAS_SUFFIX = "plain.sasl.jaas.config";
    /** Kafka's per-mechanism JAAS names of the SCRAM mechanisms: known, not read (SCRAM's users are the credentials' file). */
    private static final List<String> SCRAM_JAAS_SUFFIXES = List.of("scram-sha-256.sasl.jaas.config", "scram-sha-512.sasl.jaas.config");
    /** The mechanisms Ferrite serves. */
    private static final List<String> SERVED = List.of(PLAIN, "SCRAM-SHA-256", "SCRAM-SHA-512");

    private ListenerSecurity()
    {
    }

    /** The settings of this class in the broker's catalogue. */
    static void define(final ConfigCatalogue c)
    {
        c.define(ListenerEndpoints.PROTOCOL_MAP, STRING, ListenerEndpoints.DEFAULT_PROTOCOL_MAP, NONE, true,
            "each listener name's security protocol, NAME:PROTOCOL,... (PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL)")
            .define(SASL_ENABLED_MECHANISMS, LIST, "GSSAPI", NONE, true, "the SASL mechanisms of SASL listeners "
                + "(listener.name.<listener>.sasl.enabled.mechanisms per listener): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; Kafka's default GSSAPI is refused")
            .define(FAILED_AUTHENTICATION_DELAY_MS, INT, "100", atLeast(0), true,
                "how long a failed SASL authentication's answer and the connection's close wait (slows password guessing)")
            .define(CONNECTIONS_MAX_IDLE_MS, LONG, "600000", NONE, true, "how long a connection may stay with no byte moving before "
                + "it is closed (negative: never), authenticated or not, as Kafka; a connection whose response is being made is left until it is written")
            .define(SASL_SERVER_MAX_RECEIVE_SIZE, INT, "524288", NONE, true,
                "the largest frame a SASL connection may send before it authenticated: a larger one fails the authentication (-1: "
                + "Kafka's unlimited, here socket.request.max.bytes)")
            .define(CONNECTIONS_MAX_REAUTH_MS, LONG, "0", NONE, true, "the lifetime of a SASL session (KIP-368), per listener and "
                + "mechanism with listener.name.<listener>.<mechanism>.connections.max.reauth.ms: a client re-authenticates on its "
                + "connection before it ends, a connection whose session ended is closed at its next request; 0 or less: sessions never end");
        TlsSettings.define(c);
        AuthorizerSettings.define(c); // authorizer.class.name, super.users, allow.everyone.if.no.acl.found
    }

    /** Checks the listener settings of {@code config} (at its construction). */
    static void check(final BrokerConfig config)
    {
        final List<Endpoint> listeners = brokerListeners(config);
        advertised(config);
        for (final Endpoint e : listeners)
        {
            switch (e.protocol())
            {
                case "PLAINTEXT":
                    break;
                case "SASL_PLAINTEXT":
                    plainUsers(config, e); // every mechanism checked, the users read
                    reauthMs(config, e);
                    break;
                case "SSL":
                    TlsSettings.server(config, e); // the stores read, the protocols checked
                    break;
                case "SASL_SSL":
                    plainUsers(config, e);
                    reauthMs(config, e);
                    TlsSettings.server(config, e);
                    break;
                default:
                    throw new ConfigException(BrokerConfig.LISTENERS, config.listeners(), "listener " + e.name() + " uses security protocol "
                        + e.protocol() + ", which Ferrite does not serve: use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL");
            }
        }
        final boolean cluster = config.values().containsKey("process.roles") || config.values().containsKey("controller.quorum.voters");
        if (cluster && (listeners.size() != 1 || !listeners.get(0).protocol().equals("PLAINTEXT")))
        {
            throw new ConfigException(BrokerConfig.LISTENERS, config.listeners(),
                "a node of a cluster has one PLAINTEXT broker listener (and its controller listener) for now");
        }
    }

    /** The broker's listeners: those of {@code listeners} not named in {@code controller.listener.names}, in order. */
    public static List<Endpoint> brokerListeners(final BrokerConfig config)
    {
        final List<String> controllers = controllerNames(config);
        final List<Endpoint> all = ListenerEndpoints.parse(BrokerConfig.LISTENERS, config.listeners(),
            config.values().get(ListenerEndpoints.PROTOCOL_MAP), controllers);
        final List<Endpoint> brokers = new ArrayList<>();
        for (final Endpoint e : all)
        {
            if (!controllers.contains(e.name()))
            {
                brokers.add(e);
            }
        }
        if (brokers.isEmpty())
        {
            throw new ConfigException(BrokerConfig.LISTENERS, config.listeners(), "no broker listener (all are controller listeners)");
        }
        return brokers;
    }

    /**
     * What each broker listener advertises, by name: its {@code advertised.listeners} entry, else its {@code listeners}
     * one (a host of "" or a port of 0 there: filled in once bound). As in Kafka 4.4 (KIP-853), {@code advertised.listeners}
     * may also name controller listeners (Kafka's sample {@code server.properties} does): their names are checked against
     * all of {@code listeners}, then left out, since the broker's requests never come in on them.
     */
    public static Map<String, Endpoint> advertised(final BrokerConfig config)
    {
        final List<String> controllers = controllerNames(config);
        final Map<String, Endpoint> byName = new LinkedHashMap<>();
        for (final Endpoint e : brokerListeners(config))
        {
            byName.put(e.name(), e);
        }
        final String advertised = config.values().get(BrokerConfig.ADVERTISED_LISTENERS);
        if (advertised != null)
        {
            final List<String> valid = new ArrayList<>();
            ListenerEndpoints.parse(BrokerConfig.LISTENERS, config.listeners(), config.values().get(ListenerEndpoints.PROTOCOL_MAP),
                controllers).forEach(e -> valid.add(e.name()));
            for (final Endpoint e : ListenerEndpoints.parse(BrokerConfig.ADVERTISED_LISTENERS, advertised,
                config.values().get(ListenerEndpoints.PROTOCOL_MAP), controllers))
            {
                if (!valid.contains(e.name()))
                {
                    throw new ConfigException(BrokerConfig.ADVERTISED_LISTENERS, advertised, "advertised.listeners listener names must be "
                        + "equal to or a subset of the ones defined in listeners. Found " + e.name() + ". The valid options based on "
                        + "currently configured listeners are " + String.join(",", valid));
                }
                if (!controllers.contains(e.name()))
                {
                    byName.put(e.name(), e);
                }
            }
        }
        return byName;
    }

    /** The SASL mechanisms of a listener (upper case): its own setting, else the broker's. */
    public static List<String> mechanisms(final BrokerConfig config, final Endpoint listener)
    {
        final String own = config.values().get(prefix(listener) + SASL_ENABLED_MECHANISMS);
        final List<String> mechanisms = new ArrayList<>();
        if (own != null)
        {
            Arrays.stream(own.split(",")).map(String::trim).filter(m -> !m.isEmpty()).forEach(mechanisms::add);
        }
        else
        {
            @SuppressWarnings("unchecked")
            final List<String> broker = (List<String>)config.get(SASL_ENABLED_MECHANISMS);
            mechanisms.addAll(broker);
        }
        return mechanisms;
    }

    /**
     * The PLAIN users (name -> password) of a SASL listener, after checking its mechanisms (none when it does not offer
     * PLAIN: SCRAM's users are the broker's credentials, made with AlterUserScramCredentials).
     *
     * @throws ConfigException for no mechanism, one Ferrite does not serve, or PLAIN without its JAAS setting
     */
    public static Map<String, String> plainUsers(final BrokerConfig config, final Endpoint listener)
    {
        final List<String> mechanisms = mechanisms(config, listener);
        final String setting = config.values().containsKey(prefix(listener) + SASL_ENABLED_MECHANISMS) ?
            prefix(listener) + SASL_ENABLED_MECHANISMS : SASL_ENABLED_MECHANISMS;
        if (mechanisms.isEmpty())
        {
            throw new ConfigException(setting, "", "No SASL mechanisms are enabled (listener " + listener.name() + ")");
        }
        for (final String m : mechanisms)
        {
            if (!SERVED.contains(m))
            {
                throw new ConfigException(setting, String.join(",", mechanisms), "SASL mechanism " + m + " (listener " + listener.name()
                    + ") is not supported by Ferrite: only PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (GSSAPI and OAUTHBEARER are not)");
            }
        }
        if (!mechanisms.contains(PLAIN))
        {
            return Map.of();
        }
        final String jaasSetting = prefix(listener) + PLAIN_JAAS_SUFFIX;
        final String jaas = config.values().get(jaasSetting);
        if (jaas == null)
        {
            throw new ConfigException("Could not find a 'KafkaServer' or '" + listener.name().toLowerCase(Locale.ROOT)
                + ".KafkaServer' entry in the JAAS configuration: set " + jaasSetting + " (Ferrite reads no JAAS file)");
        }
        return PlainJaas.users(jaasSetting, jaas);
    }

    /**
     * A SASL listener's {@code connections.max.reauth.ms} by mechanism, as Kafka 4.4's {@code SaslChannelBuilder} reads it:
     * {@code listener.name.<l>.<mechanism>.connections.max.reauth.ms}, else {@code listener.name.<l>.connections.max.reauth.ms},
     * else the broker's. A mechanism whose value is 0 or less is left out: its sessions never expire.
     */
    public static Map<String, Long> reauthMs(final BrokerConfig config, final Endpoint listener)
    {
        final Map<String, Long> byMechanism = new LinkedHashMap<>();
        final long broker = config.getLong(CONNECTIONS_MAX_REAUTH_MS);
        for (final String m : mechanisms(config, listener))
        {
            final String own = prefix(listener) + m.toLowerCase(Locale.ROOT) + "." + CONNECTIONS_MAX_REAUTH_MS;
            final String listenerWide = prefix(listener) + CONNECTIONS_MAX_REAUTH_MS;
            final long ms = config.values().containsKey(own) ? parseLong(config, own)
                : config.values().containsKey(listenerWide) ? parseLong(config, listenerWide) : broker;
            if (ms > 0)
            {
                byMechanism.put(m, ms);
            }
        }
        return byMechanism;
    }

    private static long parseLong(final BrokerConfig config, final String name)
    {
        final String value = config.values().get(name).trim();
        try
        {
            return Long.parseLong(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(name, value, "Not a number of type LONG");
        }
    }

    /**
     * The per-listener settings Ferrite knows, of the broker's listeners, with their Kafka types (those of the names they
     * override): {@code listener.name.<l>.sasl.enabled.mechanisms} (LIST), {@code listener.name.<l>.plain.sasl.jaas.config}
     * (PASSWORD) and the SCRAM mechanisms' {@code listener.name.<l>.scram-sha-256.sasl.jaas.config} and {@code -512} (PASSWORD;
     * taken as Kafka's operators write them, not read: a SCRAM login module has no server-side options Ferrite uses); of a TLS
 * listener its {@code listener.name.<l>.ssl.*} overrides ({@link TlsSettings}).
     * Known names: no "unknown property" warning for them, and DescribeConfigs types them as Kafka does.
     */
    public static Map<String, ConfigKey.Type> perListenerNames(final BrokerConfig config)
    {
        final Map<String, ConfigKey.Type> names = new LinkedHashMap<>();
        for (final Endpoint e : brokerListeners(config))
        {
            names.put(prefix(e) + SASL_ENABLED_MECHANISMS, LIST);
            names.put(prefix(e) + PLAIN_JAAS_SUFFIX, PASSWORD);
            SCRAM_JAAS_SUFFIXES.forEach(suffix -> names.put(prefix(e) + suffix, PASSWORD));
            names.put(prefix(e) + CONNECTIONS_MAX_REAUTH_MS, LONG);
            SERVED.forEach(m -> names.put(prefix(e) + m.toLowerCase(Locale.ROOT) + "." + CONNECTIONS_MAX_REAUTH_MS, LONG));
            if (e.protocol().endsWith("SSL"))
            {
                TlsSettings.PER_LISTENER.forEach(name -> names.put(prefix(e) + name, BrokerConfig.CATALOGUE.key(name).type()));
            }
        }
        return names;
    }

    /** Kafka's per-listener prefix: {@code listener.name.<name in lower case>.}. */
    public static String prefix(final Endpoint listener)
    {
        return "listener.name." + listener.name().toLowerCase(Locale.ROOT) + ".";
    }

    private static List<String> controllerNames(final BrokerConfig config)
    {
        final String names = config.values().get(CONTROLLER_LISTENER_NAMES);
        final List<String> list = new ArrayList<>();
        if (names != null)
        {
            Arrays.stream(names.split(",")).map(n -> n.trim().toUpperCase(Locale.ROOT)).filter(n -> !n.isEmpty()).forEach(list::add);
        }
        return list;
    }
}
