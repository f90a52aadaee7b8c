package io.ferrite.broker.net;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/** Accepts connections on the listener and deals them round-robin to the network threads. */
public final class Acceptor implements Runnable, AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(Acceptor.class);

    private final ServerSocketChannel server;
    private final NetworkThread[] networkThreads;
    private final Thread thread;
    private int next;

    public Acceptor(final InetSocketAddress address, final NetworkThread[] networkThreads) throws IOException
    {
        this.server = ServerSocketChannel.open();
        this.server.bind(address);
        this.networkThreads = networkThreads;
        this.thread = new Thread(this, "ferrite-acceptor");
        this.thread.setDaemon(true);
    }

    /** The bound address (the real port when 0 was asked for). */
    public InetSocketAddress address() throws IOException
    {
        return (InetSocketAddress)server.getLocalAddress();
    }

    public void start()
    {
        thread.start();
    }

    @Override
    public void run()
    {
        while (server.isOpen())
        {
            try
            {
                final SocketChannel channel = server.accept();
                networkThreads[next].accept(channel);
                next = (next + 1) % networkThreads.length;
            }
            catch (final ClosedChannelException ex)
            {
                return;
            }
            catch (final IOException ex)
            {
                LOG.warn("accept failed", ex); // e.g. out of file descriptors: keep accepting
            }
        }
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        try
        {
            thread.join(10_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
