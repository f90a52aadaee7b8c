package io.ferrite.client;

import org.agrona.DirectBuffer;

/** What a {@link NodeConnection} hands its owner: each answer, in request order, or the failure of a request. */
interface ResponseListener
{
    /** The body of the answer to a request sent with {@code context}, in {@code [offset, limit)} of {@code buffer}. */
    void onResponse(NodeConnection connection, short apiKey, short version, Object context,
        DirectBuffer buffer, int offset, int limit);

    /** The request sent with {@code context} got no answer: the connection closed or it timed out. */
    void onFailure(NodeConnection connection, short apiKey, Object context, short errorCode);

    /** A request that waits for no answer (acks=0) was written whole to the socket. */
    void onWritten(NodeConnection connection, Object context);

    /** Every byte queued on the connection was taken by the socket (a trace's stage; nothing to do by default). */
    default void onFlushed(NodeConnection connection)
    {
    }

    /** The connection negotiated its versions and can take requests. */
    void onReady(NodeConnection connection);
}
