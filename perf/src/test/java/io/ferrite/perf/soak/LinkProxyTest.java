package io.ferrite.perf.soak;

import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A proxy's acceptor outlives a connection whose handling throws: that connection is closed and counted, the next
 * one is forwarded (here: the first look-up of a node's pid throws, as a {@code /proc} surprise would); and the soak
 * refuses a fault name it does not know rather than dropping it.
 */
class LinkProxyTest
{
    @Test
    void anAcceptedConnectionThatFailsIsClosedAndTheProxyGoesOn() throws Exception
    {
        final AtomicBoolean thrown = new AtomicBoolean();
        final PeerIdentity peers = new PeerIdentity(1, id ->
        {
            if (thrown.compareAndSet(false, true))
            {
                throw new IllegalStateException("a /proc surprise");
            }
            return -1;
        });
        final Links links = new Links(1);
        try (ServerSocket echo = new ServerSocket(0, 5, InetAddress.getLoopbackAddress());
            LinkProxy proxy = new LinkProxy(1, echo.getLocalPort(), links, peers,
                new ServerSocket(0, 5, InetAddress.getLoopbackAddress())))
        {
            echo.setSoTimeout(30_000);
            try (Socket failed = new Socket(InetAddress.getLoopbackAddress(), proxy.port()))
            {
                failed.setSoTimeout(30_000);
                assertEquals(-1, failed.getInputStream().read(), "the failed connection is closed");
            }
            assertEquals(1, links.acceptFailures());
            try (Socket client = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
                Socket upstream = echo.accept())
            {
                client.setSoTimeout(30_000);
                upstream.getOutputStream().write(42);
                final InputStream in = client.getInputStream();
                assertEquals(42, in.read(), "the next connection is forwarded");
            }
            assertEquals(1, links.acceptFailures());
            assertEquals(1, links.acceptedCounts().get("0->1"));
        }
    }

    @Test
    void anUnknownFaultNameIsRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> SoakOptions.parse("--faults", "kill,partitions"));
        assertEquals(java.util.List.of("kill", "partition"), Nemesis.known(SoakOptions.parse("--faults", "partition,kill").faults));
    }
}
