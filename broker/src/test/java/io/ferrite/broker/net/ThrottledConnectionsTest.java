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
import java.util.concurrent.atomic.AtomicBoolean;
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
    /** How the handler answers a throttled request: in line, with no response (acks=0), or later (a produce with acks=-1). */
    private enum Path
    {
        ANSWERED, SILENT, DEFERRED
    }

    /** The throttle time the handler gives the next request, then 0. */
    private final AtomicInteger nextThrottleMs = new AtomicInteger();
    /** How the next throttled request is answered. */
    private Path throttledPath = Path.ANSWERED;
    /** A deferred answer is given once this is set. */
    private final AtomicBoolean released = new AtomicBoolean();
    /** Requests the handler was given. */
    private final AtomicInteger handled = new AtomicInteger();
    private final Apis apis = new Apis();
    private final SteppedNetwork network;

    ThrottledConnectionsTest() throws IOException
    {
        network = new SteppedNetwork((api, version, in, offset, limit, out, outOffset, connection) ->
        {
            handled.incrementAndGet();
            final int throttleMs = nextThrottleMs.getAndSet(0);
            connection.throttle(throttleMs);
            final Path path = throttleMs > 0 ? throttledPath : Path.ANSWERED;
            if (path == Path.SILENT)
            {
                return PendingResponse.NO_RESPONSE;
            }
            final int end = apis.handle(api, version, in, offset, limit, out, outOffset, connection);
            if (path == Path.DEFERRED)
            {
                connection.defer(new PendingResponse()
                {
                    @Override
                    public int poll(final Connection c, final int at, final long nowMs)
                    {
                        return released.get() ? end : NOT_READY;
                    }

                    @Override
                    public long deadlineMs()
                    {
                        return Long.MAX_VALUE;
                    }
                });
                return RequestHandler.DEFERRED;
            }
            return end;
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
            network.write(throttled, twoRequests());
            assertEquals(1, correlationId(network.receive(throttled)), "the throttled request itself is answered at once");
            assertMutedWhileOthersServed(throttled, other);
        }
    }

    /** 200 stepped passes in which {@code other} is served five times and {@code throttled} answers nothing more. */
    private void assertMutedWhileOthersServed(final SocketChannel throttled, final SocketChannel other) throws IOException
    {
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

    private static ByteBuffer twoRequests()
    {
        return ByteBuffer.allocate(1024).put(apiVersions(1)).put(apiVersions(2)).flip();
    }

    /** Sends requests 1 and 2 in one write, the first throttled for {@code throttleMs} and answered by {@code path}. */
    private void sendTwoThrottled(final SocketChannel throttled, final Path path, final int throttleMs) throws IOException
    {
        throttledPath = path;
        nextThrottleMs.set(throttleMs);
        network.write(throttled, twoRequests());
    }

    /**
     * A throttled request that gets no response (a produce with acks=0, over its quota) mutes its connection all the same:
     * the mute is then the quota's only enforcement, as no throttle_time_ms reaches the client (review quota47 M3).
     */
    @Test
    void aThrottledRequestWithoutAResponseMutesItsConnection() throws IOException
    {
        try (SocketChannel throttled = network.connect(); SocketChannel other = network.connect())
        {
            sendTwoThrottled(throttled, Path.SILENT, 600_000);
            assertMutedWhileOthersServed(throttled, other);
            assertEquals(1 + 5, handled.get(), "the silent request was handled, the one behind it never read (the other's five)");
        }
    }

    @Test
    void aConnectionMutedWithoutAResponseAnswersOnceItsThrottleTimeIsOver() throws IOException
    {
        try (SocketChannel throttled = network.connect())
        {
            sendTwoThrottled(throttled, Path.SILENT, 200);
            assertEquals(2, correlationId(network.receive(throttled)), "the request behind the silent one, after the mute");
        }
    }

    /**
     * A throttled request answered later (a produce with acks=-1 waiting for its log threads, a parked fetch) mutes its
     * connection once that answer is written: the request sent behind it is not read until the throttle time is over.
     */
    @Test
    void aThrottledRequestAnsweredLaterMutesItsConnectionAfterTheAnswer() throws IOException
    {
        try (SocketChannel throttled = network.connect(); SocketChannel other = network.connect())
        {
            sendTwoThrottled(throttled, Path.DEFERRED, 600_000);
            for (int pass = 0; pass < 50 && handled.get() == 0; pass++)
            {
                network.step();
            }
            assertEquals(1, handled.get(), "the first request is handled and waits");
            assertEquals(0, throttled.read(ByteBuffer.allocate(1)), "no answer while it waits");
            released.set(true);
            assertEquals(1, correlationId(network.receive(throttled)), "the deferred, throttled request is answered");
            assertMutedWhileOthersServed(throttled, other);
            assertEquals(1 + 5, handled.get(), "the request behind the deferred one never read (the other's five)");
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
