package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
                    network.send(bad, new org.apache.kafka.common.requests.MetadataRequest.Builder(
                        new org.apache.kafka.common.message.MetadataRequestData().setTopics(null)).build((short)12)
                        .serializeWithHeader(new RequestHeader(ApiKeys.METADATA, (short)12, "bad", 7)));
                    network.assertClosedByBroker(bad);
                }
                assertEquals(Errors.NONE.code(), apiVersions(network, good, 2), "the other connection is served on");
                network.awaitConnections(1);
                assertEquals(2, network.threads[0].errors().count(), "both reported as the thread's errors");
            }
        }
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
