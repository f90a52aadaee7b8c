package io.ferrite.broker.config;

import io.ferrite.log.config.ConfigException;

import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.Locale;

/**
 * The listener settings' values as addresses: the broker's {@code PLAINTEXT://host:port} (the first of a list) and the
 * Prometheus endpoint's {@code http://host:port}. A bad value is a {@link ConfigException} naming the setting.
 */
final class Listeners
{
    private static final String PLAINTEXT = "PLAINTEXT://";
    private static final String HTTP = "http://";
    private static final String PLAINTEXT_FORM = "expected PLAINTEXT://host:port";

    private Listeners()
    {
    }

    /** The first listener's host; empty means all interfaces. */
    static String host(final String name, final String listeners)
    {
        final URI uri = uri(name, listeners, first(name, listeners), PLAINTEXT_FORM);
        return uri.getHost() == null ? "" : uri.getHost();
    }

    /** The first listener's port. */
    static int port(final String name, final String listeners)
    {
        return port(name, listeners, uri(name, listeners, first(name, listeners), PLAINTEXT_FORM), PLAINTEXT_FORM);
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

    private static String first(final String name, final String listeners)
    {
        final String first = listeners.split(",")[0].trim();
        if (!first.toUpperCase(Locale.ROOT).startsWith(PLAINTEXT))
        {
            throw new ConfigException(name, listeners, "only PLAINTEXT listeners are supported");
        }
        return first.replaceFirst("(?i)^PLAINTEXT://", "plaintext://");
    }
}
