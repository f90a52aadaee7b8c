package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.function.IntSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A request whose handling throws an Error the JVM survives (a stack overflow, an assertion) costs only its connection,
 * as Kafka's {@code Processor} closes the channel whatever its request threw: the thread's other connections are served
 * on, and nothing escapes the thread's pass (which on its runner would end the thread and all its connections).
 */
class NetworkThreadFailureTest
{
    @Test
    void aStackOverflowOrAnAssertionInAHandlerCostsOnlyItsConnection() throws Exception
    {
        final Apis apis = new Apis()
            .register(io.ferrite.wire.message.ApiKeys.FETCH, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                throw new StackOverflowError("a request nested too deep");
            })
            .register(io.ferrite.wire.message.ApiKeys.METADATA, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                throw new AssertionError("a broken invariant");
            });
        try (SteppedNetwork network = new SteppedNetwork(apis, 1))
        {
            try (SocketChannel good = network.connect())
            {
                assertEquals(Errors.NONE.code(), apiVersions(network, good, 1));
                try (SocketChannel bad = network.connect())
                {
                    network.send(bad, NetworkLayerTest.fetchV12());
                    network.assertClosedByBroker(bad);
                }
                try (SocketChannel bad = network.connect())
                {
                    network.send(bad, metadataV12());
                    network.assertClosedByBroker(bad);
                }
                assertEquals(Errors.NONE.code(), apiVersions(network, good, 2), "the other connection is served on");
                network.awaitConnections(1);
                assertEquals(2, network.threads[0].errors().count(), "both reported as the thread's errors");
            }
        }
    }

    /**
     * The same on the deferred path: a request pipelined behind a deferred one is handled when the deferred one is
     * answered ({@code resume}), and a deferred response is polled ({@code pollOne}), both outside the read of the key.
     */
    @Test
    void aStackOverflowOrAnAssertionOnTheDeferredPathCostsOnlyItsConnection() throws Exception
    {
        final Apis apis = new Apis()
            .register(io.ferrite.wire.message.ApiKeys.FETCH, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                connection.defer(pending(() -> outOffset)); // answered with an empty body at the next poll
                return RequestHandler.DEFERRED;
            })
            .register(io.ferrite.wire.message.ApiKeys.METADATA, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                throw new AssertionError("a broken invariant in a request that waited behind a deferred one");
            })
            .register(io.ferrite.wire.message.ApiKeys.LIST_GROUPS, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                connection.defer(pending(() ->
                {
                    throw new StackOverflowError("a deferred response nested too deep");
                }));
                return RequestHandler.DEFERRED;
            });
        try (SteppedNetwork network = new SteppedNetwork(apis, 1))
        {
            try (SocketChannel good = network.connect())
            {
                assertEquals(Errors.NONE.code(), apiVersions(network, good, 1));
                try (SocketChannel bad = network.connect())
                {
                    // both frames in one write: the Metadata request waits in the buffer until the Fetch is answered
                    final ByteBuffer fetch = framed(NetworkLayerTest.fetchV12());
                    final ByteBuffer metadata = framed(metadataV12());
                    network.write(bad, ByteBuffer.allocate(fetch.remaining() + metadata.remaining()).put(fetch).put(metadata).flip());
                    network.receive(bad); // the Fetch's answer
                    network.assertClosedByBroker(bad);
                }
                try (SocketChannel bad = network.connect())
                {
                    network.send(bad, new ListGroupsRequest.Builder(new ListGroupsRequestData()).build((short)4)
                        .serializeWithHeader(new RequestHeader(ApiKeys.LIST_GROUPS, (short)4, "bad", 8)));
                    network.assertClosedByBroker(bad);
                }
                assertEquals(Errors.NONE.code(), apiVersions(network, good, 2), "the other connection is served on");
                network.awaitConnections(1);
                assertEquals(2, network.threads[0].errors().count(), "both reported as the thread's errors");
            }
        }
    }

    /** An OutOfMemoryError is not caught: the JVM is not sound, and the thread's runner ends the thread (Kafka's too). */
    @Test
    void anOutOfMemoryErrorInAHandlerLeavesThePass() throws Exception
    {
        final Apis apis = new Apis()
            .register(io.ferrite.wire.message.ApiKeys.METADATA, (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                throw new OutOfMemoryError("a handler out of memory");
            });
        try (SteppedNetwork network = new SteppedNetwork(apis, 1); SocketChannel bad = network.connect())
        {
            network.send(bad, metadataV12());
            assertThrows(OutOfMemoryError.class, () -> network.receive(bad), "the error leaves the network thread's pass");
            final List<Throwable> escaped = network.takeEscaped();
            assertEquals(1, escaped.size(), "and its runner is told: " + escaped);
            assertInstanceOf(OutOfMemoryError.class, escaped.get(0));
        }
    }

    private static PendingResponse pending(final IntSupplier poll)
    {
        return new PendingResponse()
        {
            @Override
            public int poll(final Connection connection, final int outOffset, final long nowMs)
            {
                return poll.getAsInt();
            }

            @Override
            public long deadlineMs()
            {
                return 0; // due at once
            }
        };
    }

    private static ByteBuffer metadataV12()
    {
        return new org.apache.kafka.common.requests.MetadataRequest.Builder(
            new org.apache.kafka.common.message.MetadataRequestData().setTopics(null)).build((short)12)
            .serializeWithHeader(new RequestHeader(ApiKeys.METADATA, (short)12, "bad", 7));
    }

    private static ByteBuffer framed(final ByteBuffer frame)
    {
        return ByteBuffer.allocate(4 + frame.remaining()).putInt(frame.remaining()).put(frame.duplicate()).flip();
    }

    private static short apiVersions(final SteppedNetwork network, final SocketChannel socket, final int correlationId) throws Exception
    {
        network.send(socket, new ApiVersionsRequest.Builder().build((short)3)
            .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "good", correlationId)));
        final ByteBuffer response = network.receive(socket);
        org.apache.kafka.common.requests.ResponseHeader.parse(response, (short)0);
        return new ApiVersionsResponseData(new ByteBufferAccessor(response), (short)3).errorCode();
    }
}
