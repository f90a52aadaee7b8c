package io.ferrite.broker.net;

import io.ferrite.broker.acl.Authorizer;
import io.ferrite.broker.scram.ScramCredentials;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One of the broker's listeners, as its connections know it: its name and security protocol, for a SASL listener the
 * mechanisms it offers, its PLAIN users and the broker's SCRAM credentials, and the endpoint it advertises (Metadata, DescribeCluster and
 * FindCoordinator answer a client with the endpoint of the listener its request came in on, as Kafka does). Immutable
 * but for the advertised endpoint, set once the listener is bound (a port of 0 is known then).
 */
public final class Listener
{
    /** A PLAINTEXT listener advertising nothing of its own (its handlers' endpoint is used): for tests and tools. */
    public static final Listener PLAINTEXT = new Listener("PLAINTEXT", "PLAINTEXT", List.of(), Map.of(), 0);
    /** Kafka's {@code connections.max.idle.ms} default: 10 minutes. */
    public static final long DEFAULT_IDLE_MS = 600_000;

    private final String name;
    private final String protocol;
    private final List<String> mechanisms;
    /** PLAIN users: name -> password as UTF-8 (compared in constant time). */
    private final Map<String, byte[]> users;
    /** The broker's SCRAM credentials (the same for every listener, as in Kafka). */
    private final ScramCredentials scramCredentials;
    private final long failedAuthenticationDelayMs;
    private final long idleMs;
    private final int saslMaxReceiveSize;
    /** A SASL listener's {@code connections.max.reauth.ms} by mechanism; a mechanism not in it: 0, no re-authentication. */
    private final Map<String, Long> reauthMs;
    /** A TLS listener's engines (SSL, SASL_SSL), else null. */
    private final TlsEngines tls;
    /** The broker's authorizer (set before the network threads start). */
    private Authorizer authorizer = Authorizer.DISABLED;
    private volatile String advertisedHost;
    private volatile int advertisedPort = -1;

    /**
     * @param protocol PLAINTEXT or SASL_PLAINTEXT (SSL and SASL_SSL: the constructor with TLS engines)
     * @param mechanisms a SASL listener's mechanisms, in the order offered
     * @param users a SASL listener's PLAIN users (name -> password)
     */
    public Listener(final String name, final String protocol, final List<String> mechanisms, final Map<String, String> users,
        final long failedAuthenticationDelayMs)
    {
        this(name, protocol, mechanisms, users, new ScramCredentials(), failedAuthenticationDelayMs);
    }

    /** @param scramCredentials the broker's SCRAM credentials, which a SCRAM mechanism checks */
    public Listener(final String name, final String protocol, final List<String> mechanisms, final Map<String, String> users,
        final ScramCredentials scramCredentials, final long failedAuthenticationDelayMs)
    {
        this(name, protocol, mechanisms, users, scramCredentials, failedAuthenticationDelayMs, null);
    }

    /** @param tls an SSL or SASL_SSL listener's engines; null for PLAINTEXT and SASL_PLAINTEXT */
    public Listener(final String name, final String protocol, final List<String> mechanisms, final Map<String, String> users,
        final ScramCredentials scramCredentials, final long failedAuthenticationDelayMs, final TlsEngines tls)
    {
        this(name, protocol, mechanisms, users, scramCredentials, failedAuthenticationDelayMs, tls, DEFAULT_IDLE_MS,
            SaslAuthenticator.MAX_RECEIVE_SIZE);
    }

    /**
     * @param idleMs {@code connections.max.idle.ms}: how long a connection may stay with no byte moving before it is closed
     * @param saslMaxReceiveSize {@code sasl.server.max.receive.size}: the largest frame before SASL authentication
     */
    public Listener(final String name, final String protocol, final List<String> mechanisms, final Map<String, String> users,
        final ScramCredentials scramCredentials, final long failedAuthenticationDelayMs, final TlsEngines tls,
        final long idleMs, final int saslMaxReceiveSize)
    {
        this(name, protocol, mechanisms, users, scramCredentials, failedAuthenticationDelayMs, tls, idleMs, saslMaxReceiveSize, Map.of());
    }

    /**
     * @param reauthMs {@code connections.max.reauth.ms} of each mechanism (KIP-368): a session's lifetime after it
     *     authenticated with it; 0 or absent: sessions never expire and a SaslHandshake after authentication is refused
     */
    public Listener(final String name, final String protocol, final List<String> mechanisms, final Map<String, String> users,
        final ScramCredentials scramCredentials, final long failedAuthenticationDelayMs, final TlsEngines tls,
        final long idleMs, final int saslMaxReceiveSize, final Map<String, Long> reauthMs)
    {
        this.reauthMs = Map.copyOf(reauthMs);
        this.idleMs = idleMs;
        this.saslMaxReceiveSize = saslMaxReceiveSize;
        if ((tls != null) != protocol.endsWith("SSL"))
        {
            throw new IllegalArgumentException(protocol + (tls == null ? " needs" : " has no use for") + " TLS engines");
        }
        this.tls = tls;
        this.name = name;
        this.scramCredentials = scramCredentials;
        this.protocol = protocol;
        this.mechanisms = List.copyOf(mechanisms);
        final Map<String, byte[]> bytes = new HashMap<>();
        users.forEach((user, password) -> bytes.put(user, password.getBytes(StandardCharsets.UTF_8)));
        this.users = bytes;
        this.failedAuthenticationDelayMs = failedAuthenticationDelayMs;
    }

    public String name()
    {
        return name;
    }

    public String protocol()
    {
        return protocol;
    }

    /** Whether a connection must authenticate with SASL before anything but ApiVersions and the SASL requests. */
    public boolean sasl()
    {
        return protocol.startsWith("SASL_");
    }

    /** A TLS listener's engines, or null: its connections are not encrypted. */
    TlsEngines tls()
    {
        return tls;
    }

    public List<String> mechanisms()
    {
        return mechanisms;
    }

    /** The password of a PLAIN user, or null: no such user. */
    byte[] password(final String user)
    {
        return users.get(user);
    }

    ScramCredentials scramCredentials()
    {
        return scramCredentials;
    }

    /** The broker's authorizer, the same on every listener; {@code Authorizer.DISABLED} when none is configured. */
    public Authorizer authorizer()
    {
        return authorizer;
    }

    /** Sets the authorizer, before the network threads start (their start publishes it). */
    public void authorizer(final Authorizer authorizer)
    {
        this.authorizer = authorizer;
    }

    long failedAuthenticationDelayMs()
    {
        return failedAuthenticationDelayMs;
    }

    /** How long a connection may stay with no byte moving ({@code connections.max.idle.ms}; never: Long.MAX_VALUE). */
    long idleMs()
    {
        return idleMs;
    }

    /** The largest frame a SASL connection may send before it authenticated ({@code sasl.server.max.receive.size}). */
    int saslMaxReceiveSize()
    {
        return saslMaxReceiveSize;
    }

    /**
     * The session lifetime of a connection that authenticated with {@code mechanism} ({@code connections.max.reauth.ms}),
     * or 0: it never expires. Read once per authentication, not per request.
     */
    long reauthMs(final String mechanism)
    {
        final Long ms = reauthMs.get(mechanism);
        return ms == null ? 0 : ms;
    }

    /** Sets the endpoint this listener advertises (once bound). */
    public void advertise(final String host, final int port)
    {
        this.advertisedHost = host;
        this.advertisedPort = port;
    }

    /** The advertised host, or null: none of its own (then the handler's). */
    public String advertisedHost()
    {
        return advertisedHost;
    }

    /** The advertised port, or -1: none of its own. */
    public int advertisedPort()
    {
        return advertisedPort;
    }

    /** Its name and protocol only: never its users. */
    @Override
    public String toString()
    {
        return name + " (" + protocol + ")";
    }
}
