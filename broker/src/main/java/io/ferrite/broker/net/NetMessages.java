package io.ferrite.broker.net;

import io.ferrite.wire.ProtocolException;
import io.ferrite.wire.message.ApiKeys;

import java.io.IOException;

/**
 * The messages of the network threads' refusals and failures, built here rather than in the request path's
 * methods that report them: javac's inline string concatenation (the build's {@code -XDstringConcat=inline},
 * issue 17) turns each concatenation into a StringBuilder chain, which would grow those methods past the JIT's
 * inlining limits. Every method here runs only when a connection is refused, closed for a fault, or a thread
 * meets a fault.
 */
final class NetMessages
{
    private NetMessages()
    {
    }

    static ProtocolException shortFrame(final int length)
    {
        return new ProtocolException("RequestHeader", "frame of " + length + " bytes");
    }

    static String unknownApi(final short apiKey)
    {
        return "unknown API key " + apiKey;
    }

    static String unsupported(final ApiKeys api, final short version)
    {
        return api.title + " v" + version + " is not supported";
    }

    static String refused(final ApiKeys api, final short version)
    {
        return api.title + " v" + version + " request refused";
    }

    static String malformed(final ProtocolException ex)
    {
        return "malformed request: " + ex.getMessage();
    }

    static String failed(final Throwable ex)
    {
        return "request failed: " + ex;
    }

    static IllegalStateException interrupted(final int id)
    {
        return new IllegalStateException("network thread " + id + " was interrupted; it goes on");
    }

    static String tlsFailed(final javax.net.ssl.SSLException ex)
    {
        return "TLS failed: " + ex.getMessage();
    }

    /** Kafka's SslAuthenticationException message, with the JDK's reason after it. */
    static String handshakeFailed(final javax.net.ssl.SSLException ex)
    {
        return "SSL handshake failed: " + ex.getMessage();
    }

    static String outOfDirectMemory(final IOException ex, final long count)
    {
        return ex.getMessage() + " (connections refused or closed for it on this thread: " + count + ")";
    }

    static String ioError(final Exception ex)
    {
        return "I/O error: " + ex.getMessage();
    }

    static String frameTooLarge(final int size, final int maxRequestBytes, final boolean authenticating)
    {
        return authenticating ? "frame of " + size + " bytes before SASL authentication (sasl.server.max.receive.size is "
            + maxRequestBytes + ")" : "frame of " + size + " bytes (socket.request.max.bytes is " + maxRequestBytes + ")";
    }
}
