package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The Prometheus endpoint's {@code http://host:port} as an address (the broker's listeners: {@link ListenerEndpoints}).
 * A bad value is a {@link ConfigException} naming the setting.
 */
final class Listeners
{
    private static final String HTTP = "http://";

    private Listeners()
    {
    }

    /**
     * An {@code http://host:port} listener (one; no path): its address, the host not resolved ({@code 0.0.0.0}: all
     * interfaces) — the config is read again at each dynamic config change, where a DNS lookup has no place; the
     * broker resolves it when it starts the endpoint.
     */
    static InetSocketAddress http(final String name, final String listener)
    {
        final String value = listener.trim();
        final String expected = "expected http://host:port";
        if (!value.toLowerCase(Locale.ROOT).startsWith(HTTP))
        {
            throw new ConfigException(name, listener, expected);
        }
        final URI uri = uri(name, listener, HTTP + value.substring(HTTP.length()), expected);
        final int port = port(name, listener, uri, expected);
        if (uri.getRawPath() != null && !uri.getRawPath().isEmpty() && !uri.getRawPath().equals("/") || uri.getRawQuery() != null)
        {
            throw new ConfigException(name, listener, expected + " (the path is always /metrics)");
        }
        if (uri.getHost() == null)
        {
            throw new ConfigException(name, listener, expected);
        }
        return InetSocketAddress.createUnresolved(uri.getHost(), port);
    }

    private static URI uri(final String name, final String value, final String listener, final String expected)
    {
        try
        {
            return new URI(listener);
        }
        catch (final URISyntaxException ex)
        {
            throw new ConfigException(name, value, expected + " (" + ex.getReason() + ")");
        }
    }

    private static int port(final String name, final String value, final URI uri, final String expected)
    {
        if (uri.getPort() < 0 || uri.getPort() > 65535)
        {
            throw new ConfigException(name, value, expected);
        }
        return uri.getPort();
    }
}
