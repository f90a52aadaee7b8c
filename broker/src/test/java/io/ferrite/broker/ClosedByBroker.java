package io.ferrite.broker;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketException;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Asserts that the broker closed a client's connection: its socket is read to the end, which is -1 (the broker's FIN) or
 * a reset. A read that waits past the socket's {@code SO_TIMEOUT} ends in a {@link java.net.SocketTimeoutException},
 * which is neither (it is an {@link java.io.InterruptedIOException}, not a {@link SocketException}) and fails the test:
 * a broker that left the connection open must not pass as one that closed it.
 */
public final class ClosedByBroker
{
    private ClosedByBroker()
    {
    }

    /**
     * The broker closes {@code socket}: reads end, or are reset, with less than 8 KiB first (a refused SASL exchange's
     * answer, TLS records, an alert or close_notify).
     */
    public static void assertClosedByBroker(final Socket socket) throws IOException
    {
        assertClosedByBroker(socket, 8192);
    }

    /** The broker closes {@code socket}: reads end, or are reset, with fewer than {@code mostBytes} bytes read first. */
    public static void assertClosedByBroker(final Socket socket, final int mostBytes) throws IOException
    {
        // a socket closed here would end its reads with "Socket closed", which the catch below would take for a reset
        assertFalse(socket.isClosed(), "the socket was closed by the test, not by the broker");
        final InputStream in = socket.getInputStream();
        final byte[] buffer = new byte[4096];
        int total = 0;
        try
        {
            int n;
            while ((n = in.read(buffer)) >= 0)
            {
                total += n;
                assertTrue(total < mostBytes, "closed, not answered: " + total + " bytes");
            }
        }
        catch (final SocketException | SSLException reset)
        {
            // a reset is a close too (a SocketTimeoutException is neither: it fails the test)
        }
    }
}
