package io.ferrite.broker.net;

import java.util.ArrayList;

/**
 * The connections of one network thread muted by a quota (Kafka's throttled channels, KIP-219): once a throttled
 * request's response is written the connection reads nothing — its key watches no event, and requests the client
 * sends meanwhile wait in the socket or the input — until its throttle time is over; then it reads again, the requests
 * that arrived first. A client of Kafka 2.0 or later waits out the same time itself (the response's
 * {@code throttle_time_ms}); an older one relies on the mute. Network thread only; removal swaps in the last entry.
 */
final class ThrottledConnections
{
    private final ArrayList<Connection> muted = new ArrayList<>();

    boolean isEmpty()
    {
        return muted.isEmpty();
    }

    /**
     * After {@code connection}'s response was written: mutes it when a quota throttles it beyond now, and says so (the
     * caller then reads no more of it); else forgets an elapsed throttle. Unthrottled: one branch, no clock read.
     */
    boolean muteIfThrottled(final Connection connection)
    {
        if (connection.throttledUntilMs == 0)
        {
            return false;
        }
        if (connection.throttledUntilMs <= System.currentTimeMillis())
        {
            connection.throttledUntilMs = 0;
            return false;
        }
        connection.key.interestOps(0);
        muted.add(connection);
        return true;
    }

    /** Milliseconds to the nearest end of a throttle (at most {@code maxMs}; 0 or less: due now). */
    long timeoutMs(final long maxMs, final long nowMs)
    {
        long until = Long.MAX_VALUE;
        for (int i = 0; i < muted.size(); i++)
        {
            until = Math.min(until, muted.get(i).throttledUntilMs);
        }
        return Math.min(maxMs, until - nowMs);
    }

    /** Unmutes the connections whose throttle is over, reading what they sent meanwhile. Returns how many. */
    int poll(final long nowMs, final RequestDispatcher dispatcher)
    {
        int ended = 0;
        for (int i = 0; i < muted.size(); )
        {
            final Connection connection = muted.get(i);
            if (!connection.closed && connection.throttledUntilMs > nowMs)
            {
                i++;
                continue;
            }
            final int last = muted.size() - 1;
            muted.set(i, muted.get(last));
            muted.remove(last);
            ended++;
            connection.throttledUntilMs = 0;
            if (!connection.closed)
            {
                dispatcher.unmuted(connection);
            }
        }
        return ended;
    }
}
