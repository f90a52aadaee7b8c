package io.ferrite.broker.net;

import java.util.ArrayList;

/**
 * The connections of one network thread that have not finished their TLS handshake or SASL authentication, closed once
 * no byte has moved on them for their listener's {@code connections.max.idle.ms} (Kafka's default 10 minutes): a
 * handshake or a SASL exchange that stalls, or a client that connected and sent nothing, does not hold its connection
 * for ever (tls review M4). Kafka's {@code Selector} applies that rule to every connection, handshaking or not: a
 * connection's idle time starts again whenever its socket is ready, and the oldest idle one past the bound is closed
 * (logged at TRACE). Ferrite applies it only to these: an authenticated connection, and every connection of a PLAINTEXT
 * listener, is never closed for idleness (clients close theirs first, at their own {@code connections.max.idle.ms} of 9
 * minutes), so nothing is added to their path.
 *
 * <p>Network thread only. A connection is looked at once per {@link #SCAN_MS} at most, and leaves the list once it is
 * closed or authenticated (found so by that look; removal swaps in the last entry).
 */
final class UnauthenticatedConnections
{
    /** Between two looks at the list: the close comes at most this much after the bound (and a select's wait). */
    static final long SCAN_MS = 100;

    private final ArrayList<Connection> waiting = new ArrayList<>();
    private final Connections connections;
    private long nextScanMs;

    UnauthenticatedConnections(final Connections connections)
    {
        this.connections = connections;
    }

    /** A connection accepted on an SSL or SASL listener at {@code nowMs}. */
    void add(final Connection connection, final long nowMs)
    {
        connection.unauthenticated = true;
        connection.activeMs = nowMs;
        waiting.add(connection);
    }

    boolean isEmpty()
    {
        return waiting.isEmpty();
    }

    int size()
    {
        return waiting.size();
    }

    /** Closes the connections idle past their bound (debug lines, as Kafka's TRACE); returns how many were closed. */
    int expire(final long nowMs)
    {
        if (nowMs < nextScanMs)
        {
            return 0;
        }
        nextScanMs = nowMs + SCAN_MS;
        int expired = 0;
        for (int i = 0; i < waiting.size(); )
        {
            final Connection connection = waiting.get(i);
            boolean leaves = connection.closed || connection.authenticated();
            if (!leaves && nowMs - connection.activeMs >= connection.listener().unauthenticatedIdleMs())
            {
                connections.close(connection, "idle for connections.max.idle.ms (" + connection.listener().unauthenticatedIdleMs()
                    + " ms) before its handshake or authentication finished", false);
                expired++;
                leaves = true;
            }
            if (leaves)
            {
                connection.unauthenticated = false;
                final int last = waiting.size() - 1;
                waiting.set(i, waiting.get(last));
                waiting.remove(last);
            }
            else
            {
                i++;
            }
        }
        return expired;
    }
}
