package io.ferrite.broker.net;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;

/**
 * Makes the server-side {@link SSLEngine} of each connection of a TLS listener (SSL, SASL_SSL), as Kafka's
 * {@code DefaultSslEngineFactory} does for a server: the listener's protocols and cipher suites, and the client
 * authentication it asks for ({@code ssl.client.auth}). Immutable; used by the network threads.
 */
public final class TlsEngines
{
    private final SSLContext context;
    private final String[] protocols;
    private final String[] cipherSuites;
    private final boolean needClientAuth;
    private final boolean wantClientAuth;

    /**
     * @param cipherSuites null: the JDK's defaults
     * @param clientAuth {@code required}, {@code requested} or {@code none}
     */
    public TlsEngines(final SSLContext context, final String[] protocols, final String[] cipherSuites, final String clientAuth)
    {
        this.context = context;
        this.protocols = protocols.clone();
        this.cipherSuites = cipherSuites == null ? null : cipherSuites.clone();
        this.needClientAuth = clientAuth.equals("required");
        this.wantClientAuth = clientAuth.equals("requested");
    }

    /** A server engine for a connection from {@code host:port} (the peer's address, a hint for session reuse only). */
    SSLEngine create(final String host, final int port)
    {
        final SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(false);
        engine.setEnabledProtocols(protocols);
        if (cipherSuites != null)
        {
            engine.setEnabledCipherSuites(cipherSuites);
        }
        if (needClientAuth)
        {
            engine.setNeedClientAuth(true);
        }
        else if (wantClientAuth)
        {
            engine.setWantClientAuth(true);
        }
        return engine;
    }
}
