package io.ferrite.broker.cluster;

import io.ferrite.broker.net.Connection;
import io.ferrite.broker.net.PendingResponse;
import io.ferrite.broker.net.RequestHandler;
import io.ferrite.replication.ClusterNode;
import io.ferrite.wire.message.ApiKeys;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * A request Kafka's KRaft broker forwards to the active controller (CreateTopics, DeleteTopics, CreatePartitions):
 * its body goes to the controller over the broker's controller channel ({@link ClusterNode#forward}) and the
 * client is answered with the controller's response once the controller answered; the controller decides
 * (replication factor up to the live brokers, Kafka's placement, validation). The connection waits meanwhile,
 * its other requests behind it, as for any deferred answer; a controller that does not answer within
 * {@code request.timeout.ms} is answered with the request's own error response (REQUEST_TIMED_OUT), made by Kafka's
 * request class. The local logs are made when the metadata image shows the topic ({@link ClusterPartitions}).
 */
final class ForwardingHandler implements RequestHandler
{
    private final Supplier<ClusterNode> node;
    private final Runnable waker;

    ForwardingHandler(final Supplier<ClusterNode> node, final Runnable waker)
    {
        this.node = node;
        this.waker = waker;
    }

    @Override
    public int handle(final ApiKeys api, final short version, final DirectBuffer in, final int offset, final int limit,
        final MutableDirectBuffer out, final int outOffset, final Connection connection)
    {
        final byte[] body = new byte[limit - offset];
        in.getBytes(offset, body);
        final CompletableFuture<ByteBuffer> answer = node.get().forward(api.id, version, ByteBuffer.wrap(body));
        connection.defer(new Forwarded(answer));
        answer.whenComplete((done, failure) -> waker.run());
        return DEFERRED;
    }

    /** The controller's answer, written by the connection's network thread once it came. */
    private static final class Forwarded implements PendingResponse
    {
        private final CompletableFuture<ByteBuffer> answer;

        Forwarded(final CompletableFuture<ByteBuffer> answer)
        {
            this.answer = answer;
        }

        @Override
        public int poll(final Connection connection, final int outOffset, final long nowMs)
        {
            if (!answer.isDone())
            {
                return NOT_READY;
            }
            final ByteBuffer body = answer.getNow(null);
            if (body == null)
            {
                return RequestHandler.CLOSE; // ClusterNode.forward completes with an error response, never exceptionally
            }
            connection.out.putBytes(outOffset, body, body.position(), body.remaining());
            return outOffset + body.remaining();
        }

        @Override
        public long deadlineMs()
        {
            return Long.MAX_VALUE; // the controller channel times out itself (request.timeout.ms) and answers then
        }
    }
}
