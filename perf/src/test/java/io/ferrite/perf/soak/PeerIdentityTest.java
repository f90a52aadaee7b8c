package io.ferrite.perf.soak;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The proxies tell the peers apart: a connection a child process opened (bash's {@code /dev/tcp}, a real process with
 * its own descriptor table, as a node is) is put down to the node whose pid is that process's, one this JVM opened
 * to nobody (0: a client); a process that is not the owner is not taken for it. Linux only, as the soak.
 */
class PeerIdentityTest
{
    @Test
    void aConnectionBelongsToTheProcessThatOpenedIt() throws Exception
    {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress()))
        {
            server.setSoTimeout(30_000); // a child that never connects (no /dev/tcp) fails the test, not hangs it
            final Process child = new ProcessBuilder("bash", "-c",
                "exec 3<>/dev/tcp/127.0.0.1/" + server.getLocalPort() + "; sleep 60").start();
            final Process other = new ProcessBuilder("sleep", "60").start();
            try (Socket fromChild = server.accept();
                Socket own = new Socket(InetAddress.getLoopbackAddress(), server.getLocalPort());
                Socket fromSelf = server.accept())
            {
                // node 1: a process that is no party to either connection; node 2: the child that opened one
                final PeerIdentity peers = new PeerIdentity(2, id -> id == 1 ? other.pid() : child.pid());
                assertEquals(2, peers.nodeOf(fromChild.getPort(), server.getLocalPort()));
                assertEquals(0, peers.nodeOf(fromSelf.getPort(), server.getLocalPort()));
                assertEquals(own.getLocalPort(), fromSelf.getPort());
                // the same processes as nodes the other way round
                final PeerIdentity swapped = new PeerIdentity(2, id -> id == 1 ? child.pid() : other.pid());
                assertEquals(1, swapped.nodeOf(fromChild.getPort(), server.getLocalPort()));
            }
            finally
            {
                for (final Process p : List.of(child, other))
                {
                    p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                }
            }
        }
    }
}
