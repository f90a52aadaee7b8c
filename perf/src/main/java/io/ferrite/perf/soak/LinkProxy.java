package io.ferrite.perf.soak;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A loopback TCP proxy in front of one listener (broker or controller) of node {@code to}: everyone reaches that
 * listener through it (the node advertises the proxy's port, and the voters name it). Each accepted connection is
 * put down to the node that opened it ({@link PeerIdentity}), and two pump threads forward its bytes as the
 * {@link Links} entry {@code from -> to} says, looked at again for every chunk: pass, delay, drop (the connection is
 * closed, and so is every new one while the link drops) or blackhole (bytes read and discarded, nothing forwarded,
 * the connection left open). A blackholed connection is closed when its link heals: bytes went missing from its
 * stream, as a real connection would time out.
 */
final class LinkProxy implements AutoCloseable, Links.Listener
{
    private final int to;
    private final int targetPort;
    private final Links links;
    private final PeerIdentity peers;
    private final ServerSocket server;
    private final Set<Conn> conns = ConcurrentHashMap.newKeySet();

    LinkProxy(final int to, final int targetPort, final Links links, final PeerIdentity peers, final ServerSocket server)
    {
        this.to = to;
        this.targetPort = targetPort;
        this.links = links;
        this.peers = peers;
        this.server = server;
        links.listen(this);
        final Thread acceptor = new Thread(this::accept, "proxy-" + to + "-" + server.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port()
    {
        return server.getLocalPort();
    }

    private void accept()
    {
        while (!server.isClosed())
        {
            final Socket client;
            try
            {
                client = server.accept();
            }
            catch (final IOException ex)
            {
                continue; // the server closed, or one accept failed: the loop's condition decides
            }
            try
            {
                serve(client);
            }
            catch (final IOException | RuntimeException ex)
            {
                // one connection's failure (the node gone under the /proc scan, no thread to be had, ...): that
                // connection is closed, the proxy goes on; an unexpected one is logged and counted
                if (ex instanceof RuntimeException)
                {
                    System.out.println("proxy " + server.getLocalPort() + " to node " + to + ": a connection failed: " + ex);
                    links.acceptFailed();
                }
                try
                {
                    client.close();
                }
                catch (final IOException closing)
                {
                    // closed already
                }
            }
        }
    }

    /** Puts an accepted connection down to its node and forwards it as its link says. */
    private void serve(final Socket client) throws IOException
    {
        client.setTcpNoDelay(true);
        final int from = peers.nodeOf(client.getPort(), server.getLocalPort());
        links.accepted(from, to);
        final Links.Link link = links.get(from, to);
        if (link.mode() == Links.Mode.DROP)
        {
            client.close();
            return;
        }
        Socket upstream = null;
        if (link.mode() != Links.Mode.BLACKHOLE)
        {
            upstream = new Socket();
            try
            {
                upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2_000);
                upstream.setTcpNoDelay(true);
            }
            catch (final IOException ex)
            {
                // the node is down (killed, or not listening yet): the client sees the connection close
                client.close();
                upstream.close();
                return;
            }
        }
        final Conn c = new Conn(from, client, upstream);
        conns.add(c);
        try
        {
            c.start();
        }
        catch (final IOException | RuntimeException ex)
        {
            c.close();
            throw ex;
        }
    }

    @Override
    public void changed(final int from, final int to, final Links.Link before, final Links.Link after)
    {
        if (to != this.to)
        {
            return;
        }
        if (after.mode() == Links.Mode.DROP || before.mode() == Links.Mode.BLACKHOLE && after.mode() != Links.Mode.BLACKHOLE)
        {
            for (final Conn c : conns)
            {
                if (c.from == from)
                {
                    c.close();
                }
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        for (final Conn c : conns)
        {
            c.close();
        }
    }

    /** One proxied connection from node {@code from} (0: a client); {@code upstream} null while blackholed from the start. */
    private final class Conn
    {
        final int from;
        final Socket client;
        final Socket upstream;

        Conn(final int from, final Socket client, final Socket upstream)
        {
            this.from = from;
            this.client = client;
            this.upstream = upstream;
        }

        void start() throws IOException
        {
            pump(client, upstream, "up");
            if (upstream != null)
            {
                pump(upstream, client, "down");
            }
        }

        private void pump(final Socket in, final Socket out, final String way) throws IOException
        {
            final InputStream input = in.getInputStream();
            final OutputStream output = out == null ? null : out.getOutputStream();
            final Thread t = new Thread(() ->
            {
                final byte[] buffer = new byte[64 * 1024];
                try
                {
                    for (int n = input.read(buffer); n >= 0; n = input.read(buffer))
                    {
                        final Links.Link link = links.get(from, to);
                        if (link.mode() == Links.Mode.BLACKHOLE)
                        {
                            continue; // read and discarded: nothing reaches the other side
                        }
                        if (link.mode() == Links.Mode.DROP || output == null)
                        {
                            return; // cut; or blackholed from its start and healed before its close came
                        }
                        if (link.mode() == Links.Mode.DELAY)
                        {
                            TimeUnit.MILLISECONDS.sleep(link.delayMs());
                        }
                        output.write(buffer, 0, n);
                        output.flush();
                    }
                }
                catch (final IOException | InterruptedException ex)
                {
                    // the other side closed, or this connection was cut
                }
                finally
                {
                    close();
                }
            }, "proxy-" + from + "-" + to + "-" + way);
            t.setDaemon(true);
            t.start();
        }

        void close()
        {
            conns.remove(this);
            try
            {
                client.close();
            }
            catch (final IOException ex)
            {
                // closed already
            }
            if (upstream != null)
            {
                try
                {
                    upstream.close();
                }
                catch (final IOException ex)
                {
                    // closed already
                }
            }
        }
    }
}
