package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A connection a quota throttles (Kafka's KIP-219 mute): once its throttled response is written it reads nothing until
 * the throttle time is over, then answers what it was sent meanwhile; its thread's other connections are served all the
 * while. The network thread is stepped by the test ({@link SteppedNetwork}), so "not read" is a fact of the passes taken,
 * not of a wait.
 */
class ThrottledConnectionsTest
{
    /** The throttle time the handler gives the next request, then 0. */
    private final AtomicInteger nextThrottleMs = new AtomicInteger();
    private final Apis apis = new Apis();
    private final SteppedNetwork network;

    ThrottledConnectionsTest() throws IOException
    {
        network = new SteppedNetwork((api, version, in, offset, limit, out, outOffset, connection) ->
        {
            connection.throttle(nextThrottleMs.getAndSet(0));
            return apis.handle(api, version, in, offset, limit, out, outOffset, connection);
        }, 1);
    }

    @AfterEach
    void stop() throws IOException
    {
        network.close();
    }

    private static ByteBuffer apiVersions(final int correlationId)
    {
        final ByteBuffer body = new ApiVersionsRequest.Builder().build((short)3)
            .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "throttled", correlationId));
        return ByteBuffer.allocate(4 + body.remaining()).putInt(body.remaining()).put(body).flip();
    }

    private static int correlationId(final ByteBuffer response)
    {
        return ResponseHeader.parse(response, (short)0).correlationId();
    }

    @Test
    void aThrottledConnectionReadsNothingMoreWhileItsThreadServesOthers() throws IOException
    {
        try (SocketChannel throttled = network.connect(); SocketChannel other = network.connect())
        {
            nextThrottleMs.set(600_000);
            // both requests in one write: the second is in the broker's socket or input before the first is answered
            final ByteBuffer two = ByteBuffer.allocate(1024).put(apiVersions(1)).put(apiVersions(2)).flip();
            network.write(throttled, two);
            assertEquals(1, correlationId(network.receive(throttled)), "the throttled request itself is answered at once");
            for (int round = 0; round < 5; round++)
            {
                network.write(other, apiVersions(10 + round));
                assertEquals(10 + round, correlationId(network.receive(other)), "another connection of the thread is served");
            }
            for (int pass = 0; pass < 200; pass++)
            {
                network.step();
            }
            assertEquals(0, throttled.read(ByteBuffer.allocate(1)), "nothing more read from the muted connection in 200 passes");
        }
    }

    @Test
    void aThrottledConnectionAnswersWhatItWasSentOnceItsThrottleTimeIsOver() throws IOException
    {
        try (SocketChannel throttled = network.connect())
        {
            nextThrottleMs.set(200);
            final ByteBuffer three = ByteBuffer.allocate(1024).put(apiVersions(1)).put(apiVersions(2)).put(apiVersions(3)).flip();
            network.write(throttled, three);
            for (int id = 1; id <= 3; id++)
            {
                assertEquals(id, correlationId(network.receive(throttled)), "answered in order, the later ones after the mute");
            }
            nextThrottleMs.set(200); // a second throttle on the same connection: muted and unmuted again
            network.write(throttled, apiVersions(4));
            assertEquals(4, correlationId(network.receive(throttled)));
            network.write(throttled, apiVersions(5));
            assertEquals(5, correlationId(network.receive(throttled)));
        }
    }
}
