package io.ferrite.broker.net;

import java.util.ArrayList;

/**
 * The connections of one network thread, each closed once no byte has moved on it for its listener's
 * {@code connections.max.idle.ms} (Kafka's default 10 minutes; negative: never), as Kafka 4.4's {@code Selector} closes
 * any idle connection, authenticated or not, PLAINTEXT too (tls review 1, M2): a stalled handshake or SASL exchange, a
 * client that connected and sent nothing, and a client that went quiet without closing do not hold their connection for
 * ever. A connection's idle time starts again whenever its socket is ready (its {@link Connection#activeMs}, stamped
 * with the time read once per select pass); a connection whose response is still being made (a produce waiting for its
 * log threads, a long fetch) is left alone until it is written. The close is a debug line (Kafka's is TRACE).
 *
 * <p>Network thread only. The list is swept once per {@link #SCAN_MS} at most (an indexed pass: no allocation, no
 * system call; 5 000 connections are a few microseconds); a closed connection leaves it at the next sweep (removal
 * swaps in the last entry).
 */
final class IdleConnections
{
    /** Between two sweeps: the close comes at most this much after the bound (and a select's wait). */
    static final long SCAN_MS = 100;

    private final ArrayList<Connection> all = new ArrayList<>();
    private final Connections connections;
    private long nextScanMs;

    IdleConnections(final Connections connections)
    {
        this.connections = connections;
    }

    /** A connection accepted at {@code nowMs}. */
    void add(final Connection connection, final long nowMs)
    {
        connection.activeMs = nowMs;
        all.add(connection);
    }

    boolean isEmpty()
    {
        return all.isEmpty();
    }

    /** The connections on the list (closed ones until the next sweep). */
    int size()
    {
        return all.size();
    }

    /** Closes the connections idle past their bound; returns how many were closed. */
    int expire(final long nowMs)
    {
        if (nowMs < nextScanMs)
        {
            return 0;
        }
        nextScanMs = nowMs + SCAN_MS;
        int expired = 0;
        for (int i = 0; i < all.size(); )
        {
            final Connection connection = all.get(i);
            boolean leaves = connection.closed;
            final long bound = connection.listener().idleMs();
            if (!leaves && connection.pending == null && nowMs - connection.activeMs >= bound)
            {
                connections.close(connection, "idle for connections.max.idle.ms (" + bound + " ms)", false);
                expired++;
                leaves = true;
            }
            if (leaves)
            {
                final int last = all.size() - 1;
                all.set(i, all.get(last));
                all.remove(last);
            }
            else
            {
                i++;
            }
        }
        return expired;
    }
}
