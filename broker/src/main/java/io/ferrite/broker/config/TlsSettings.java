package io.ferrite.broker.config;

import io.ferrite.broker.config.ListenerEndpoints.Endpoint;
import io.ferrite.log.config.ConfigCatalogue;
import io.ferrite.log.config.ConfigException;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.List;

import static io.ferrite.log.config.ConfigKey.Type.LIST;
import static io.ferrite.log.config.ConfigKey.Type.PASSWORD;
import static io.ferrite.log.config.ConfigKey.Type.STRING;
import static io.ferrite.log.config.ConfigKey.Validator.NONE;
import static io.ferrite.log.config.ConfigKey.Validator.in;

/**
 * The TLS settings of SSL and SASL_SSL listeners, with Kafka 4.4's names and defaults: the broker's {@code ssl.*} values,
 * each overridden per listener by {@code listener.name.<listener>.ssl.*} as in Kafka. A listener's keystore and truststore
 * are read at start (JKS or PKCS12, whatever {@link KeyStore} reads of the type named); a missing or unreadable one, a
 * wrong password or a protocol the JDK does not have stops the start with the setting's name (Kafka starts without a
 * keystore and then fails every handshake; Ferrite refuses at once). Passwords are {@code PASSWORD} settings: never
 * shown by DescribeConfigs, never in a message.
 */
public final class TlsSettings
{
    public static final String KEYSTORE_TYPE = "ssl.keystore.type";
    public static final String KEYSTORE_LOCATION = "ssl.keystore.location";
    public static final String KEYSTORE_PASSWORD = "ssl.keystore.password";
    public static final String KEY_PASSWORD = "ssl.key.password";
    public static final String TRUSTSTORE_TYPE = "ssl.truststore.type";
    public static final String TRUSTSTORE_LOCATION = "ssl.truststore.location";
    public static final String TRUSTSTORE_PASSWORD = "ssl.truststore.password";
    public static final String CLIENT_AUTH = "ssl.client.auth";
    public static final String ENABLED_PROTOCOLS = "ssl.enabled.protocols";
    public static final String PROTOCOL = "ssl.protocol";
    public static final String CIPHER_SUITES = "ssl.cipher.suites";
    public static final String KEYMANAGER_ALGORITHM = "ssl.keymanager.algorithm";
    public static final String TRUSTMANAGER_ALGORITHM = "ssl.trustmanager.algorithm";
    public static final String ENDPOINT_IDENTIFICATION_ALGORITHM = "ssl.endpoint.identification.algorithm";
    public static final String PRINCIPAL_MAPPING_RULES = "ssl.principal.mapping.rules";

    /** The names a TLS listener may override with {@code listener.name.<listener>.}. */
    static final List<String> PER_LISTENER = List.of(KEYSTORE_TYPE, KEYSTORE_LOCATION, KEYSTORE_PASSWORD, KEY_PASSWORD, TRUSTSTORE_TYPE,
        TRUSTSTORE_LOCATION, TRUSTSTORE_PASSWORD, CLIENT_AUTH, ENABLED_PROTOCOLS, PROTOCOL, CIPHER_SUITES, KEYMANAGER_ALGORITHM,
        TRUSTMANAGER_ALGORITHM);

    /**
     * What a TLS listener's connections are made with.
     *
     * @param clientAuth {@code none}, {@code requested} or {@code required}
     * @param cipherSuites the suites enabled, or null: the JDK's defaults
     */
    public record Server(SSLContext context, String[] protocols, String[] cipherSuites, String clientAuth)
    {
    }

    private TlsSettings()
    {
    }

    static void define(final ConfigCatalogue c)
    {
        c.define(KEYSTORE_TYPE, STRING, "JKS", NONE, true, "the file format of the key store (JKS, PKCS12)")
            .define(KEYSTORE_LOCATION, STRING, null, NONE, true, "the key store of SSL and SASL_SSL listeners: the broker's key and certificate")
            .define(KEYSTORE_PASSWORD, PASSWORD, null, NONE, true, "the key store's password")
            .define(KEY_PASSWORD, PASSWORD, null, NONE, true, "the password of the key in the key store (default: the key store's)")
            .define(TRUSTSTORE_TYPE, STRING, "JKS", NONE, true, "the file format of the trust store (JKS, PKCS12)")
            .define(TRUSTSTORE_LOCATION, STRING, null, NONE, true,
                "the certificates that client certificates are checked against (default: the JDK's trusted authorities)")
            .define(TRUSTSTORE_PASSWORD, PASSWORD, null, NONE, true, "the trust store's password (none: read without an integrity check)")
            .define(CLIENT_AUTH, STRING, "none", in("required", "requested", "none"), true,
                "mutual TLS: required (a client without a trusted certificate is refused), requested (asked for, not required) or none; "
                    + "a client's certificate makes its principal User:<distinguished name>")
            .define(ENABLED_PROTOCOLS, LIST, "TLSv1.2,TLSv1.3", NONE, true, "the TLS versions a listener accepts")
            .define(PROTOCOL, STRING, "TLSv1.3", NONE, true, "the SSLContext's protocol")
            .define(CIPHER_SUITES, LIST, "", NONE, true, "the cipher suites enabled (empty: the JDK's defaults)")
            .define(KEYMANAGER_ALGORITHM, STRING, "SunX509", NONE, true, "the key manager factory's algorithm")
            .define(TRUSTMANAGER_ALGORITHM, STRING, "PKIX", NONE, true, "the trust manager factory's algorithm")
            .define(ENDPOINT_IDENTIFICATION_ALGORITHM, STRING, "https", NONE, true,
                "accepted; a client-side setting (Ferrite's brokers open no TLS connections): clients check the broker's host name")
            .define(PRINCIPAL_MAPPING_RULES, STRING, "DEFAULT", in("DEFAULT"), true,
                "only DEFAULT: a client certificate's principal is its distinguished name as the JDK writes it (RFC 2253), as Kafka's default rule");
    }

    /** A listener's value of {@code name}: its {@code listener.name.<listener>.} override, else the broker's, else the default. */
    static String value(final BrokerConfig config, final Endpoint listener, final String name)
    {
        final String own = config.values().get(ListenerSecurity.prefix(listener) + name);
        if (own != null)
        {
            return own;
        }
        final Object broker = config.get(name);
        if (broker instanceof List<?> list)
        {
            return String.join(",", list.stream().map(String::valueOf).toList());
        }
        return broker == null ? null : broker.toString();
    }

    /**
     * A listener's {@code ssl.client.auth}. As Kafka 4.4's ChannelBuilders (KIP-684): the broker-wide value applies to
     * SSL listeners only; a SASL_SSL listener takes only its {@code listener.name.<listener>.} setting, else none.
     */
    static String clientAuth(final BrokerConfig config, final Endpoint listener)
    {
        if (listener.protocol().equals("SASL_SSL"))
        {
            final String own = config.values().get(ListenerSecurity.prefix(listener) + CLIENT_AUTH);
            return own == null ? "none" : own;
        }
        return value(config, listener, CLIENT_AUTH);
    }

    /**
     * Whether a broker-wide {@code ssl.client.auth} other than none is set but not applied to SASL_SSL {@code listener}
     * (which has no setting of its own): Kafka 4.4 warns then, with {@link #CLIENT_AUTH_IGNORED}.
     */
    public static boolean brokerClientAuthIgnored(final BrokerConfig config, final Endpoint listener)
    {
        final Object broker = config.get(CLIENT_AUTH);
        return listener.protocol().equals("SASL_SSL") && config.values().get(ListenerSecurity.prefix(listener) + CLIENT_AUTH) == null
            && broker != null && !broker.toString().trim().equalsIgnoreCase("none");
    }

    /** Kafka 4.4's warning when a broker-wide {@code ssl.client.auth} is not applied to a SASL_SSL listener. */
    public static final String CLIENT_AUTH_IGNORED = "Broker configuration 'ssl.client.auth' is applied only to SSL listeners. "
        + "Listener-prefixed configuration can be used to enable SSL client authentication for SASL_SSL listeners. In future "
        + "releases, broker-wide option without listener prefix may be applied to SASL_SSL listeners as well. All configuration "
        + "options intended for specific listeners should be listener-prefixed.";

    /**
     * The TLS of an SSL or SASL_SSL listener, its stores read.
     *
     * @throws ConfigException naming the setting at fault (never a password)
     */
    public static Server server(final BrokerConfig config, final Endpoint listener)
    {
        final String clientAuth = clientAuth(config, listener).trim().toLowerCase(java.util.Locale.ROOT);
        if (!List.of("required", "requested", "none").contains(clientAuth))
        {
            throw new ConfigException(name(listener, config, CLIENT_AUTH), clientAuth, "must be required, requested or none");
        }
        final String location = value(config, listener, KEYSTORE_LOCATION);
        if (location == null)
        {
            throw new ConfigException(name(listener, config, KEYSTORE_LOCATION), "",
                "listener " + listener.name() + " (" + listener.protocol() + ") needs a key store: its certificate and key");
        }
        final String password = value(config, listener, KEYSTORE_PASSWORD);
        if (password == null)
        {
            throw new ConfigException(name(listener, config, KEYSTORE_PASSWORD), "", "SSL key store is specified, but key store password is not specified.");
        }
        final String keyPassword = value(config, listener, KEY_PASSWORD);
        try
        {
            final KeyStore keys = load(config, listener, KEYSTORE_TYPE, KEYSTORE_LOCATION, location, password);
            final KeyManagerFactory kmf = KeyManagerFactory.getInstance(value(config, listener, KEYMANAGER_ALGORITHM));
            kmf.init(keys, (keyPassword != null ? keyPassword : password).toCharArray());
            final TrustManagerFactory tmf = TrustManagerFactory.getInstance(value(config, listener, TRUSTMANAGER_ALGORITHM));
            final String trustLocation = value(config, listener, TRUSTSTORE_LOCATION);
            tmf.init(trustLocation == null ? null
                : load(config, listener, TRUSTSTORE_TYPE, TRUSTSTORE_LOCATION, trustLocation, value(config, listener, TRUSTSTORE_PASSWORD)));
            final SSLContext context = SSLContext.getInstance(value(config, listener, PROTOCOL));
            context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
            final String[] protocols = list(value(config, listener, ENABLED_PROTOCOLS));
            final String[] supported = context.getSupportedSSLParameters().getProtocols();
            for (final String p : protocols)
            {
                if (!Arrays.asList(supported).contains(p))
                {
                    throw new ConfigException(name(listener, config, ENABLED_PROTOCOLS), String.join(",", protocols),
                        "the JDK does not support " + p + " (it supports " + String.join(",", supported) + ")");
                }
            }
            final String[] suites = list(value(config, listener, CIPHER_SUITES));
            return new Server(context, protocols, suites.length == 0 ? null : suites, clientAuth);
        }
        catch (final GeneralSecurityException ex)
        {
            throw new ConfigException("listener " + listener.name() + ": cannot set up TLS: " + ex.getMessage());
        }
    }

    private static KeyStore load(final BrokerConfig config, final Endpoint listener, final String typeName, final String locationName,
        final String location, final String password) throws GeneralSecurityException
    {
        final KeyStore store = KeyStore.getInstance(value(config, listener, typeName));
        try (InputStream in = Files.newInputStream(Path.of(location)))
        {
            store.load(in, password == null ? null : password.toCharArray());
            return store;
        }
        catch (final IOException ex)
        {
            // a wrong password is an IOException whose cause is an UnrecoverableKeyException: the message names neither
            throw new ConfigException(name(listener, config, locationName), location, "cannot read it as a "
                + value(config, listener, typeName) + " store: " + ex.getMessage());
        }
    }

    /** The setting a listener's value came from: its override, else the broker's name. */
    private static String name(final Endpoint listener, final BrokerConfig config, final String name)
    {
        final String own = ListenerSecurity.prefix(listener) + name;
        return config.values().containsKey(own) ? own : name;
    }

    private static String[] list(final String value)
    {
        return value == null ? new String[0] : Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toArray(String[]::new);
    }
}
