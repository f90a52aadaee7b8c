package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Kafka's listener settings read as Kafka 4.4 reads them: {@code listeners} (and {@code advertised.listeners}) as
 * {@code NAME://host:port,...}, each name's security protocol from {@code listener.security.protocol.map}, with Kafka's
 * messages for a value it refuses (a listener it cannot parse, a name the map lacks, two listeners of one name or
 * port). As in Kafka, the names in {@code controller.listener.names} map to PLAINTEXT when the map is not set.
 */
public final class ListenerEndpoints
{
    /** Kafka's default {@code listener.security.protocol.map}. */
    public static final String DEFAULT_PROTOCOL_MAP = "SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT";
    public static final String PROTOCOL_MAP = "listener.security.protocol.map";
    private static final Set<String> PROTOCOLS = Set.of("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL");
    /** Kafka's form: a name, then a host (an IPv6 one in brackets, or none: every interface), then a port. */
    private static final Pattern ENDPOINT = Pattern.compile("^(.*)://\\[?([0-9a-zA-Z\\-%._:]*)\\]?:(-?[0-9]+)$");

    /** One listener: its name (upper case, as Kafka normalises it), security protocol, host ("": every interface) and port. */
    public record Endpoint(String name, String protocol, String host, int port)
    {
        /** {@code NAME://host:port}, as configured. */
        @Override
        public String toString()
        {
            return name + "://" + host + ":" + port;
        }
    }

    private ListenerEndpoints()
    {
    }

    /**
     * The listeners of {@code value} (the setting {@code setting}), their protocols from {@code protocolMap}
     * ({@code null}: not set, Kafka's default and the controller names as PLAINTEXT).
     *
     * @throws ConfigException with Kafka's message for what it refuses
     */
    public static List<Endpoint> parse(final String setting, final String value, final String protocolMap,
        final List<String> controllerNames)
    {
        final Map<String, String> protocols = protocols(protocolMap, controllerNames);
        final List<Endpoint> endpoints = new ArrayList<>();
        for (final String entry : value.split(","))
        {
            final String listener = entry.trim();
            if (listener.isEmpty())
            {
                continue;
            }
            final Matcher m = ENDPOINT.matcher(listener);
            if (!m.matches())
            {
                throw new ConfigException(setting, value, "Unable to parse " + listener + " to a broker endpoint");
            }
            final String name = m.group(1).toUpperCase(Locale.ROOT);
            final String protocol = protocols.get(name);
            if (protocol == null)
            {
                throw new ConfigException(setting, value, "No security protocol defined for listener " + name);
            }
            final int port = Integer.parseInt(m.group(3));
            if (port < 0 || port > 65535)
            {
                throw new ConfigException(setting, value, "Unable to parse " + listener + " to a broker endpoint");
            }
            endpoints.add(new Endpoint(name, protocol, m.group(2), port));
        }
        if (endpoints.isEmpty())
        {
            throw new ConfigException(setting, value, "no listener given (expected NAME://host:port,...)");
        }
        final Set<String> names = new HashSet<>();
        final Set<Integer> ports = new HashSet<>();
        for (final Endpoint e : endpoints)
        {
            if (!names.add(e.name()))
            {
                throw new ConfigException(setting, value, "Each listener must have a different name, listeners: " + value);
            }
            // port 0 (any free one) may repeat; advertised listeners may share a port (a proxy's)
            if (e.port() != 0 && !ports.add(e.port()) && setting.equals(BrokerConfig.LISTENERS))
            {
                throw new ConfigException(setting, value, "Each listener must have a different port, listeners: " + value);
            }
        }
        return endpoints;
    }

    /** {@code listener.security.protocol.map}: name -> protocol (null: Kafka's default, the controller names PLAINTEXT). */
    static Map<String, String> protocols(final String protocolMap, final List<String> controllerNames)
    {
        final Map<String, String> protocols = new LinkedHashMap<>();
        for (final String entry : (protocolMap == null ? DEFAULT_PROTOCOL_MAP : protocolMap).split(","))
        {
            if (entry.isBlank())
            {
                continue;
            }
            final int colon = entry.indexOf(':');
            final String protocol = colon < 0 ? "" : entry.substring(colon + 1).trim().toUpperCase(Locale.ROOT);
            if (colon < 0 || !PROTOCOLS.contains(protocol))
            {
                throw new ConfigException(PROTOCOL_MAP, protocolMap, "expected NAME:PROTOCOL,... with a protocol of " +
                    "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL, got '" + entry.trim() + "'");
            }
            protocols.put(entry.substring(0, colon).trim().toUpperCase(Locale.ROOT), protocol);
        }
        if (protocolMap == null)
        {
            for (final String name : controllerNames)
            {
                protocols.putIfAbsent(name.trim().toUpperCase(Locale.ROOT), "PLAINTEXT");
            }
        }
        return protocols;
    }
}
