package io.ferrite.broker.net;

import io.ferrite.broker.metrics.NetworkCounters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.net.ssl.SSLException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * The connections of one network thread: registered with its selector, counted, and closed — the
 * one place a connection ends, so each is closed and logged exactly once. Network thread only.
 */
final class Connections
{
    private static final Logger LOG = LoggerFactory.getLogger(Connections.class);

    private final int networkThread;
    private final Selector selector;
    private final NetworkStats stats;
    private final NetworkCounters counters;
    /** The direct memory its connections' first buffers and TLS buffers may hold (tls review 1, M1). */
    final DirectBudget budget;
    private long nextConnectionId;
    /** Written by the network thread only; read from elsewhere as an approximation. */
    private int count;

    Connections(final int networkThread, final Selector selector, final NetworkStats stats, final NetworkCounters counters,
        final DirectBudget budget)
    {
        this.budget = budget;
        this.counters = counters;
        this.networkThread = networkThread;
        this.selector = selector;
        this.stats = stats;
    }

    /**
     * Takes over an accepted channel: non-blocking, no Nagle delay, read interest; refused ({@link DirectMemoryShortage})
     * when its first buffers do not fit the thread's {@link DirectBudget}, which they are taken from until it is closed.
     */
    Connection register(final SocketChannel channel, final Listener listener) throws IOException
    {
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        if (!budget.take(DirectBudget.FIRST_BUFFERS))
        {
            throw budget.refusal(DirectBudget.FIRST_BUFFERS); // without asking the JDK (review M1)
        }
        boolean registered = false;
        try
        {
            final Connection connection = connection(channel, listener);
            if (listener.tls() != null)
            {
                final InetSocketAddress peer = (InetSocketAddress)channel.getRemoteAddress();
                connection.tls = new TlsChannel(listener.tls().create(peer.getAddress().getHostAddress(), peer.getPort()), channel, budget);
            }
            connection.key = channel.register(selector, SelectionKey.OP_READ, connection);
            registered = true;
            return registered(connection);
        }
        finally
        {
            if (!registered)
            {
                budget.giveBack(DirectBudget.FIRST_BUFFERS); // not a connection: release() will not give it back
            }
        }
    }

    private Connection connection(final SocketChannel channel, final Listener listener) throws IOException
    {
        try
        {
            // the thread's id in the top bits keeps ids unique over the broker without a shared counter
            return new Connection(((long)networkThread << 48) | nextConnectionId++, channel, String.valueOf(channel.getRemoteAddress()),
                stats, listener, counters.recording());
        }
        catch (final OutOfMemoryError ex) // its input and output buffers are direct: Bits.reserveMemory's refusal
        {
            throw DirectMemoryShortage.orRethrow(ex); // the heap's goes on up (review L8)
        }
    }

    private Connection registered(final Connection connection)
    {
        final java.util.function.Consumer<Object> watcher = NetworkThread.connectionWatcher;
        if (watcher != null)
        {
            watcher.accept(connection);
            if (connection.tls != null)
            {
                watcher.accept(connection.tls);
            }
        }
        count++;
        counters.accepted(count);
        return connection;
    }

    /**
     * Closes {@code connection} if it is still open. A protocol error (what a client sent) is a
     * warning; the end of a connection for any other reason is debug.
     */
    void close(final Connection connection, final String reason, final boolean protocolError)
    {
        if (connection.closed)
        {
            return;
        }
        if (protocolError)
        {
            LOG.warn("closing connection {} from {}: {}", connection.id, connection.remote(), reason);
        }
        else
        {
            LOG.debug("connection {} from {} ends: {}", connection.id, connection.remote(), reason);
        }
        release(connection);
    }

    /**
     * Closes {@code connection} after a failed SASL authentication or TLS handshake, with Kafka 4.4's INFO line (its
     * {@code Selector}'s "Failed authentication with <client> (<why>)"; the client's port too, which Kafka leaves out):
     * a mistyped password or a port scan is not a broker's warning (tls review 1, M3).
     */
    void closeFailedAuthentication(final Connection connection, final String why)
    {
        if (connection.closed)
        {
            return;
        }
        // Kafka's Selector: "Failed re-authentication with" once the connection had authenticated
        LOG.info("Failed {}authentication with {} ({})", connection.sasl != null && connection.sasl.reauthenticating() ? "re-" : "",
            connection.remote(), why);
        release(connection);
    }

    private void release(final Connection connection)
    {
        connection.closed = true;
        count--;
        counters.closed(count);
        // its first input and output are left to the collector (a log thread may still read them): the reserve covers them
        budget.giveBack(DirectBudget.FIRST_BUFFERS);
        connection.key.cancel();
        if (connection.tls != null)
        {
            connection.tls.close(); // close_notify, if the socket takes it
        }
        closeQuietly(connection.channel);
    }

    /**
     * Closes {@code connection} after {@code ex}: a failed TLS handshake (what the client sent, or a certificate not
     * trusted) is Kafka's INFO line, a TLS failure after it and direct memory used up (counted) one WARN line each; any
     * other I/O error (the client went away) is debug.
     */
    void closeAfter(final Connection connection, final IOException ex)
    {
        if (ex instanceof SSLException && connection.tls != null && !connection.tls.established())
        {
            closeFailedAuthentication(connection, NetMessages.handshakeFailed((SSLException)ex));
        }
        else if (ex instanceof SSLException)
        {
            close(connection, NetMessages.tlsFailed((SSLException)ex), true);
        }
        else if (ex instanceof DirectMemoryShortage)
        {
            close(connection, NetMessages.outOfDirectMemory(ex, stats.outOfDirectMemory()), true);
        }
        else
        {
            close(connection, NetMessages.ioError(ex), false);
        }
    }

    /** A connection refused at accept, its buffers not to be had: closed, counted, one WARN line (tls review M4). */
    void refuse(final SocketChannel channel, final DirectMemoryShortage ex)
    {
        String remote;
        try
        {
            remote = String.valueOf(channel.getRemoteAddress());
        }
        catch (final IOException | RuntimeException gone)
        {
            remote = "a client gone";
        }
        closeQuietly(channel);
        LOG.warn("refusing connection from {}: {}", remote, NetMessages.outOfDirectMemory(ex, stats.outOfDirectMemory()));
    }

    /** Closes every connection (the thread stops). */
    void closeAll()
    {
        for (final SelectionKey key : selector.keys())
        {
            close((Connection)key.attachment(), "shutdown", false);
        }
    }

    static void closeQuietly(final SocketChannel channel)
    {
        try
        {
            channel.close();
        }
        catch (final IOException ex)
        {
            LOG.debug("closing {}", channel, ex);
        }
    }

    int count()
    {
        return count;
    }
}
