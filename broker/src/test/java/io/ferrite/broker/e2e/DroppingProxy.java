package io.ferrite.broker.e2e;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP proxy in front of the broker that injects the failure idempotence exists for: now and then,
 * after passing a Produce request on, it waits for the broker to act on it and then cuts the
 * connection before the response gets back, so the producer retries a batch the log already holds.
 */
final class DroppingProxy implements AutoCloseable
{
    private static final short PRODUCE = 0;

    private final ServerSocket server;
    private final Random random;
    private final double dropChance;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    final AtomicInteger dropped = new AtomicInteger();
    private volatile int targetPort;

    DroppingProxy(final long seed, final double dropChance) throws IOException
    {
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.random = new Random(seed);
        this.dropChance = dropChance;
        final Thread acceptor = new Thread(this::accept, "proxy-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port()
    {
        return server.getLocalPort();
    }

    void target(final int port)
    {
        this.targetPort = port;
    }

    private void accept()
    {
        while (!server.isClosed())
        {
            try
            {
                final Socket client = server.accept();
                final Socket broker;
                try
                {
                    broker = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                }
                catch (final IOException refused)
                {
                    // the broker is down (killed, not yet started again): this client's connection
                    // fails, as it would without the proxy, and the proxy goes on accepting — it used
                    // to end here, and every later connection, the checking consumer's too, hung
                    closeQuietly(client);
                    continue;
                }
                client.setTcpNoDelay(true);
                broker.setTcpNoDelay(true);
                sockets.add(client);
                sockets.add(broker);
                start(() -> requests(client, broker));
                start(() -> pump(broker, client));
            }
            catch (final IOException ex)
            {
                return;
            }
        }
    }

    private static void start(final Runnable r)
    {
        final Thread t = new Thread(r, "proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    /** Client to broker, frame by frame, dropping the connection after some Produce requests. */
    private void requests(final Socket client, final Socket broker)
    {
        try (DataInputStream in = new DataInputStream(client.getInputStream()))
        {
            final OutputStream out = broker.getOutputStream();
            while (true)
            {
                final int size = in.readInt();
                final byte[] frame = new byte[size];
                in.readFully(frame);
                final short apiKey = (short)(((frame[0] & 0xff) << 8) | (frame[1] & 0xff));
                out.write(new byte[] {(byte)(size >>> 24), (byte)(size >>> 16), (byte)(size >>> 8), (byte)size});
                out.write(frame);
                out.flush();
                final boolean drop;
                synchronized (random)
                {
                    drop = apiKey == PRODUCE && random.nextDouble() < dropChance;
                }
                if (drop)
                {
                    Thread.sleep(30); // the broker appends; its response dies with the connection
                    dropped.incrementAndGet();
                    client.close();
                    broker.close();
                    return;
                }
            }
        }
        catch (final IOException | InterruptedException ex)
        {
            closeQuietly(client);
            closeQuietly(broker);
        }
    }

    private static void pump(final Socket from, final Socket to)
    {
        final byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream())
        {
            final OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) > 0)
            {
                out.write(buffer, 0, n);
                out.flush();
            }
        }
        catch (final IOException ex)
        {
            // one side went away
        }
        closeQuietly(from);
        closeQuietly(to);
    }

    private static void closeQuietly(final Socket s)
    {
        try
        {
            s.close();
        }
        catch (final IOException ignored)
        {
            // closing
        }
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        for (final Socket s : sockets)
        {
            closeQuietly(s);
        }
    }
}
