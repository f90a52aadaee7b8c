package io.ferrite.broker.e2e;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of a broker that passes each request frame on only when the test lets it
 * ({@link #pass}): a request it holds keeps its sender waiting for the answer, so what the sender queues meanwhile is
 * certain to be queued when the held one is answered. It counts the request frames it read ({@link #requests}), and
 * {@link #cut} closes every connection (the requests held fail on their senders).
 */
final class GatedProxy implements AutoCloseable
{
    private final ServerSocket server;
    private final int targetPort;
    private final Semaphore passes = new Semaphore(0);
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final AtomicInteger requests = new AtomicInteger();

    GatedProxy(final int targetPort) throws IOException
    {
        this.targetPort = targetPort;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::accept, "gated-proxy-acceptor");
    }

    int port()
    {
        return server.getLocalPort();
    }

    /** Lets {@code frames} more request frames through (each held until one is let through). */
    void pass(final int frames)
    {
        passes.release(frames);
    }

    /** The request frames read from the clients so far (passed on or held). */
    int requests()
    {
        return requests.get();
    }

    /** Closes every connection now. */
    void cut()
    {
        for (final Socket s : sockets)
        {
            try
            {
                s.close();
            }
            catch (final IOException ignored)
            {
                // closing anyway
            }
        }
    }

    private void accept()
    {
        try
        {
            while (!server.isClosed())
            {
                final Socket client = server.accept();
                final Socket broker = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(broker);
                daemon(() -> requests(client, broker), "gated-proxy-requests");
                daemon(() -> answers(broker, client), "gated-proxy-answers");
            }
        }
        catch (final IOException ignored)
        {
            // closed
        }
    }

    private void requests(final Socket client, final Socket broker)
    {
        try
        {
            final DataInputStream in = new DataInputStream(client.getInputStream());
            final OutputStream out = broker.getOutputStream();
            while (true)
            {
                final int size = in.readInt();
                final byte[] frame = new byte[size];
                in.readFully(frame);
                requests.incrementAndGet();
                passes.acquire();
                out.write(new byte[] {(byte)(size >>> 24), (byte)(size >>> 16), (byte)(size >>> 8), (byte)size});
                out.write(frame);
                out.flush();
            }
        }
        catch (final IOException | InterruptedException ignored)
        {
            closeBoth(client, broker);
        }
    }

    private static void answers(final Socket broker, final Socket client)
    {
        try
        {
            final InputStream in = broker.getInputStream();
            final OutputStream out = client.getOutputStream();
            in.transferTo(out);
        }
        catch (final IOException ignored)
        {
            // cut or closed
        }
        closeBoth(client, broker);
    }

    private static void closeBoth(final Socket a, final Socket b)
    {
        try
        {
            a.close();
            b.close();
        }
        catch (final IOException ignored)
        {
            // closing anyway
        }
    }

    private static void daemon(final Runnable r, final String name)
    {
        final Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        cut();
        passes.release(Integer.MAX_VALUE / 2); // a frame waiting for its pass goes on, to its closed connection
    }
}
