package io.ferrite.broker.net;

/**
 * A response that could not be written when its request was handled: a produce waiting for its
 * log threads, a fetch waiting for data. While one is pending its connection reads nothing more
 * (the request's bytes stay where they are: log threads may be reading them) and answers nothing
 * else, which keeps responses in request order.
 */
public interface PendingResponse
{
    /** {@link #poll} result: not yet. */
    int NOT_READY = -2;
    /** {@link #poll} result: done, and the request gets no response (a produce with acks=0). */
    int NO_RESPONSE = -3;

    /**
     * Called on the network thread when something may have changed (appends came back, data
     * arrived, a deadline passed): writes the response body into {@code connection.out} from
     * {@code outOffset} and returns where it ends, or {@link #NOT_READY}, {@link #NO_RESPONSE}, or
     * {@link RequestHandler#CLOSE}.
     */
    int poll(Connection connection, int outOffset, long nowMs);

    /** The time (epoch ms) at which {@link #poll} must be called even if nothing changed. */
    long deadlineMs();

    /**
     * Called instead of {@link #poll} when the connection closes (or a poll failed) while this
     * waits: gives back what it holds elsewhere, such as a fetch's registrations on its partitions.
     */
    default void cancel()
    {
    }
}
