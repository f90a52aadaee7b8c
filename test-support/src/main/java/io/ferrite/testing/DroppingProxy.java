package io.ferrite.testing;

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
 * connection before the response gets back, so the producer retries a batch the log already holds
 * (the requests behind it on that connection are not passed on). The broker must advertise the proxy's
 * port ({@code advertised.listeners}) so that clients reach it through the proxy.
 * <p>By default the connection is cut 30 ms after the request is passed on, and the broker's answer
 * usually gets back to the client within them: the request behind it is what the client resends. With
 * {@code loseAnswers} nothing the broker sends on that connection from then on reaches the client, so the
 * answer to the request passed on (and to those before it not yet answered) is lost for certain, and the
 * client resends a batch the broker has appended.
 */
public final class DroppingProxy implements AutoCloseable
{
    private static final short PRODUCE = 0;

    private final ServerSocket server;
    private final Random random;
    private final double dropChance;
    private final boolean loseAnswers;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final List<Thread> pumps = new CopyOnWriteArrayList<>();
    public final AtomicInteger dropped = new AtomicInteger();
    private volatile int targetPort;
    private volatile boolean dropping = true;
    private volatile boolean mutedAll;
    /** Guards {@link #held}: while it is set the answers wait in the proxy (and the broker's socket) instead of going on. */
    private final Object holdLock = new Object();
    private boolean held;

    public DroppingProxy(final long seed, final double dropChance) throws IOException
    {
        this(seed, dropChance, false);
    }

    public DroppingProxy(final long seed, final double dropChance, final boolean loseAnswers) throws IOException
    {
        this.loseAnswers = loseAnswers;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.random = new Random(seed);
        this.dropChance = dropChance;
        final Thread acceptor = new Thread(this::accept, "proxy-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    public int port()
    {
        return server.getLocalPort();
    }

    /** Whether Produce requests may be cut (true at first); off, every frame is passed on and no chance is drawn. */
    public void dropping(final boolean on)
    {
        this.dropping = on;
    }

    /**
     * On: nothing the brokers send reaches the clients, on every connection, until it is turned off (a test that
     * needs a request appended and its answer lost for certain: it waits for the append, then {@link #cutAll()}).
     */
    public void muteAnswers(final boolean on)
    {
        this.mutedAll = on;
    }

    /**
     * On: what the brokers send waits in the proxy, on every connection, until it is turned off; then it goes on in
     * order, nothing lost (a test that needs a request answered late for certain: its sender keeps it in flight).
     */
    public void holdAnswers(final boolean on)
    {
        synchronized (holdLock)
        {
            held = on;
            holdLock.notifyAll();
        }
    }

    private void awaitRelease() throws InterruptedException
    {
        synchronized (holdLock)
        {
            while (held)
            {
                holdLock.wait();
            }
        }
    }

    /** Cuts every connection now: their requests in flight fail on the clients. */
    public void cutAll()
    {
        for (final Socket s : sockets)
        {
            closeQuietly(s);
        }
        sockets.clear();
    }

    public void target(final int port)
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
                final java.util.concurrent.atomic.AtomicBoolean muted = new java.util.concurrent.atomic.AtomicBoolean();
                pumps.add(start(() -> requests(client, broker, muted)));
                pumps.add(start(() -> pump(broker, client, muted)));
            }
            catch (final IOException ex)
            {
                return;
            }
        }
    }

    private static Thread start(final Runnable r)
    {
        final Thread t = new Thread(r, "proxy-pump");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** This proxy's pump threads (two a connection) that have not ended: none some time after {@link #close()}. */
    public int livePumps()
    {
        int n = 0;
        for (final Thread t : pumps)
        {
            n += t.isAlive() ? 1 : 0;
        }
        return n;
    }

    /** Whether one of this proxy's pumps is waiting for held answers to be released ({@link #holdAnswers}). */
    public boolean holdingAnswers()
    {
        for (final Thread t : pumps)
        {
            if (t.getState() == Thread.State.WAITING)
            {
                return true;
            }
        }
        return false;
    }

    /** Client to broker, frame by frame, dropping the connection after some Produce requests. */
    private void requests(final Socket client, final Socket broker, final java.util.concurrent.atomic.AtomicBoolean muted)
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
                final boolean drop;
                synchronized (random)
                {
                    drop = dropping && apiKey == PRODUCE && random.nextDouble() < dropChance;
                }
                if (drop && loseAnswers)
                {
                    muted.set(true); // before the request goes on: its answer cannot get back
                }
                out.write(new byte[] {(byte)(size >>> 24), (byte)(size >>> 16), (byte)(size >>> 8), (byte)size});
                out.write(frame);
                out.flush();
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

    private void pump(final Socket from, final Socket to, final java.util.concurrent.atomic.AtomicBoolean muted)
    {
        final byte[] buffer = new byte[64 * 1024];
        try (InputStream in = from.getInputStream())
        {
            final OutputStream out = to.getOutputStream();
            int n;
            while ((n = in.read(buffer)) > 0)
            {
                if (muted.get() || mutedAll)
                {
                    continue; // the connection is being cut: its answers are lost
                }
                awaitRelease();
                out.write(buffer, 0, n);
                out.flush();
            }
        }
        catch (final IOException | InterruptedException ex)
        {
            // one side went away (or the proxy's thread was stopped)
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

    /** Closes the connections; answers held are let go first, so no pump is left waiting for a release (review L3). */
    @Override
    public void close() throws IOException
    {
        holdAnswers(false);
        server.close();
        for (final Socket s : sockets)
        {
            closeQuietly(s);
        }
    }
}
