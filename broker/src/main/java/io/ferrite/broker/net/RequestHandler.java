package io.ferrite.broker.net;

import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Answers the requests of one API; called on the connection's network thread. */
@FunctionalInterface
public interface RequestHandler
{
    /** Returned instead of a response end: the request breaks the protocol and the connection closes. */
    int CLOSE = -1;
    /**
     * Returned instead of a response end: the response comes later, from the
     * {@link PendingResponse} the handler gave {@link Connection#defer}.
     */
    int DEFERRED = -2;

    /**
     * Writes the response body for the request body {@code in[offset, limit)} into {@code out} from
     * {@code outOffset}, and returns where it ends (or {@link #CLOSE}). Bad input is reported by
     * throwing {@link io.ferrite.wire.ProtocolException}, which also closes the connection.
     */
    int handle(ApiKeys api, short version, DirectBuffer in, int offset, int limit, MutableDirectBuffer out, int outOffset,
        Connection connection);
}
