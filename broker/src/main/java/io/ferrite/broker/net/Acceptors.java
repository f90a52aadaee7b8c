package io.ferrite.broker.net;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;

/**
 * The broker's listeners, bound: one {@link Acceptor} per listener (each its own port and thread), all dealing their
 * connections to the same network threads, each connection knowing its {@link Listener}. Started and closed together.
 */
public final class Acceptors implements AutoCloseable
{
    private final List<Listener> listeners = new ArrayList<>();
    private final List<Acceptor> acceptors = new ArrayList<>();

    /** Adds a bound listener (in the order of {@code listeners}: the first is the broker's main one). */
    public void add(final Listener listener, final Acceptor acceptor)
    {
        listeners.add(listener);
        acceptors.add(acceptor);
    }

    public List<Listener> listeners()
    {
        return listeners;
    }

    /** Where listener {@code i} is bound (the real port when 0 was asked for). */
    public InetSocketAddress address(final int i) throws IOException
    {
        return acceptors.get(i).address();
    }

    /** Where the listener named {@code name} is bound, or null: no such listener. */
    public InetSocketAddress address(final String name) throws IOException
    {
        for (int i = 0; i < listeners.size(); i++)
        {
            if (listeners.get(i).name().equals(name))
            {
                return address(i);
            }
        }
        return null;
    }

    public void start()
    {
        acceptors.forEach(Acceptor::start);
    }

    /** Closes every acceptor; the first failure is thrown once all were tried. */
    @Override
    public void close() throws IOException
    {
        IOException failure = null;
        for (final Acceptor acceptor : acceptors)
        {
            try
            {
                acceptor.close();
            }
            catch (final IOException ex)
            {
                if (failure == null)
                {
                    failure = ex;
                }
                else
                {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (failure != null)
        {
            throw failure;
        }
    }
}
