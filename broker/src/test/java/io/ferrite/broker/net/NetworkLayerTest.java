package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The acceptor, network threads and ApiVersions, driven over real sockets with kafka-clients' own
 * request classes; the network threads are stepped by the test thread ({@link SteppedNetwork}).
 */
class NetworkLayerTest
{
    private SteppedNetwork network;

    @BeforeEach
    void start() throws IOException
    {
        network = new SteppedNetwork(new Apis(), 2);
    }

    @AfterEach
    void stop() throws IOException
    {
        network.close();
    }

    private static ApiVersionsResponseData apiVersions(final SteppedNetwork network, final SocketChannel socket,
        final ApiVersionsRequest request, final int correlationId) throws IOException
    {
        final short version = request.version();
        network.send(socket, request.serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, version, "test-client", correlationId)));
        final ByteBuffer response = network.receive(socket);
        assertEquals(correlationId, ResponseHeader.parse(response, (short)0).correlationId());
        final ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), version);
        assertEquals(0, response.remaining(), "the whole response is read");
        return data;
    }

    @Test
    void everyApiVersionsVersionIsAnsweredAsKafkaClientsReadIt() throws IOException
    {
        try (SocketChannel socket = network.connect())
        {
            for (short v = ApiKeys.API_VERSIONS.oldestVersion(); v <= ApiKeys.API_VERSIONS.latestVersion(); v++)
            {
                final ApiVersionsResponseData data = apiVersions(network, socket, new ApiVersionsRequest.Builder().build(v), 100 + v);
                assertEquals(Errors.NONE.code(), data.errorCode(), "v" + v);
                final ApiVersionsResponseData.ApiVersion own = data.apiKeys().find(ApiKeys.API_VERSIONS.id);
                assertNotNull(own, "v" + v + " lists ApiVersions");
                assertEquals(io.ferrite.wire.message.ApiKeys.API_VERSIONS.lowestVersion, own.minVersion());
                assertEquals(ApiKeys.API_VERSIONS.latestVersion(), own.maxVersion());
            }
        }
    }

    @Test
    void anUnknownApiVersionsVersionGetsAV0AnswerWithUnsupportedVersion() throws IOException
    {
        try (SocketChannel socket = network.connect())
        {
            final ByteBuffer request = ByteBuffer.allocate(64);
            request.putShort(ApiKeys.API_VERSIONS.id).putShort((short)99).putInt(42).putShort((short)6).put("future".getBytes())
                .put((byte)0).put(new byte[] {1, 2, 3}).flip(); // a v99 body the broker cannot know
            network.send(socket, request);
            final ByteBuffer response = network.receive(socket);
            assertEquals(42, ResponseHeader.parse(response, (short)0).correlationId());
            final ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), (short)0);
            assertEquals(Errors.UNSUPPORTED_VERSION.code(), data.errorCode());
            assertEquals(1, data.apiKeys().size());
            assertEquals(ApiKeys.API_VERSIONS.latestVersion(), data.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion());
            // and the connection goes on
            assertEquals(Errors.NONE.code(), apiVersions(network, socket, new ApiVersionsRequest.Builder().build((short)3), 43).errorCode());
        }
    }

    @Test
    void aClientSoftwareNameOutsideKafkasPatternIsAnInvalidRequest() throws IOException
    {
        try (SocketChannel socket = network.connect())
        {
            final ApiVersionsRequest request = new ApiVersionsRequest(new ApiVersionsRequestData()
                .setClientSoftwareName("bad name!").setClientSoftwareVersion("1.0"), (short)3);
            final ApiVersionsResponseData data = apiVersions(network, socket, request, 1);
            assertEquals(Errors.INVALID_REQUEST.code(), data.errorCode());
            assertTrue(new ApiVersionsRequest(new ApiVersionsRequestData().setClientSoftwareName("bad name!")
                .setClientSoftwareVersion("1.0"), (short)3).isValid() == false, "kafka-clients agrees it is invalid");
        }
    }

    @Test
    void badFramesCostOnlyTheirConnection() throws Exception
    {
        final Random random = new Random(7);
        try (SocketChannel good = network.connect())
        {
            final byte[][] bad = {
                ByteBuffer.allocate(4).putInt(Integer.MAX_VALUE).array(),                     // a huge declared size
                ByteBuffer.allocate(4).putInt(-5).array(),                                    // a negative size
                ByteBuffer.allocate(7).putInt(3).put(new byte[] {0, 18, 0}).array(),          // a frame too short for a header
                ByteBuffer.allocate(14).putInt(10).putShort((short)999).putShort((short)0).putInt(1).putShort((short)-1).array(), // unknown API key
                ByteBuffer.allocate(14).putInt(10).putShort((short)0).putShort((short)300).putInt(1).putShort((short)-1).array(), // unknown Produce version
                ByteBuffer.allocate(12).putInt(8).putShort((short)18).putShort((short)3).putInt(1).array(), // header cut short
            };
            for (final byte[] frame : bad)
            {
                try (SocketChannel socket = network.connect())
                {
                    network.write(socket, ByteBuffer.wrap(frame));
                    network.assertClosedByBroker(socket);
                }
            }
            for (int i = 0; i < 200; i++)
            {
                try (SocketChannel socket = network.connect())
                {
                    final byte[] garbage = new byte[8 + random.nextInt(64)];
                    random.nextBytes(garbage);
                    ByteBuffer.wrap(garbage).putInt(garbage.length - 4).putShort((short)18); // ApiVersions with garbage after
                    network.write(socket, ByteBuffer.wrap(garbage));
                    // either answered (the garbage happened to parse) or closed: never a hang or a crash
                    try
                    {
                        network.receive(socket);
                    }
                    catch (final IOException closed)
                    {
                        // closed by the broker (EOF or a reset)
                    }
                }
            }
            assertEquals(Errors.NONE.code(), apiVersions(network, good, new ApiVersionsRequest.Builder().build((short)4), 9).errorCode(),
                "the other client is still served");
            network.awaitConnections(1); // every other connection is closed on the broker's side too
        }
    }

    @Test
    void aWaitingRequestWhosePollFailsIsCancelledAndCostsOnlyItsConnection() throws Exception
    {
        final AtomicBoolean cancelled = new AtomicBoolean();
        final Apis apis = new Apis().register(io.ferrite.wire.message.ApiKeys.FETCH,
            (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                connection.defer(new PendingResponse()
                {
                    @Override
                    public int poll(final Connection c, final int o, final long nowMs)
                    {
                        throw new IllegalStateException("a waiting request that fails when polled");
                    }

                    @Override
                    public long deadlineMs()
                    {
                        return 0; // due at once
                    }

                    @Override
                    public void cancel()
                    {
                        cancelled.set(true); // a fetch gives back its partitions' registrations here
                    }
                });
                return RequestHandler.DEFERRED;
            });
        try (SteppedNetwork own = new SteppedNetwork(apis, 1))
        {
            try (SocketChannel socket = own.connect())
            {
                own.send(socket, fetchV12());
                own.assertClosedByBroker(socket);
            }
            // the pass that closed the connection cancelled its request first: no waiting for it
            assertTrue(cancelled.get(), "the waiting request was cancelled when its connection closed");
            assertEquals(1, own.threads[0].errors().count(), "the failed poll is reported as an error");
            try (SocketChannel socket = own.connect())
            {
                assertEquals(Errors.NONE.code(), apiVersions(own, socket, new ApiVersionsRequest.Builder().build((short)3), 1).errorCode(),
                    "the network thread serves on");
            }
        }
    }

    @Test
    void aHandlerThatThrowsCostsOnlyItsConnectionAndIsLoggedOnceForAllConnections() throws Exception
    {
        final Apis apis = new Apis().register(io.ferrite.wire.message.ApiKeys.FETCH,
            (api, version, in, offset, limit, out, outOffset, connection) ->
            {
                throw new IllegalStateException("a handler defect, request of " + (limit - offset) + " bytes");
            });
        try (SteppedNetwork own = new SteppedNetwork(apis, 1); SocketChannel good = own.connect())
        {
            for (int i = 0; i < 3; i++)
            {
                try (SocketChannel socket = own.connect())
                {
                    own.send(socket, fetchV12());
                    own.assertClosedByBroker(socket);
                }
            }
            assertEquals(3, own.threads[0].errors().count(), "each failed request is counted");
            assertEquals(1, own.threads[0].errors().distinct(), "and the one defect is logged once");
            assertEquals(Errors.NONE.code(), apiVersions(own, good, new ApiVersionsRequest.Builder().build((short)3), 2).errorCode(),
                "the other connection is still served");
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws IOException
    {
        try (SocketChannel socket = network.connect())
        {
            for (int i = 0; i < 50; i++)
            {
                network.send(socket, new ApiVersionsRequest.Builder().build((short)3)
                    .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "test-client", i)));
            }
            for (int i = 0; i < 50; i++)
            {
                final ByteBuffer response = network.receive(socket);
                assertEquals(i, ResponseHeader.parse(response, (short)0).correlationId());
            }
        }
    }

    /** An empty Fetch v12 request with its header, as kafka-clients writes it. */
    static ByteBuffer fetchV12()
    {
        final RequestHeaderData header = new RequestHeaderData()
            .setRequestApiKey(ApiKeys.FETCH.id).setRequestApiVersion((short)12).setCorrelationId(7).setClientId("test-client");
        final FetchRequestData body = new FetchRequestData();
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final short headerVersion = ApiKeys.FETCH.requestHeaderVersion((short)12);
        final ByteBuffer frame = ByteBuffer.allocate(header.size(cache, headerVersion) + body.size(cache, (short)12));
        header.write(new ByteBufferAccessor(frame), cache, headerVersion);
        body.write(new ByteBufferAccessor(frame), cache, (short)12);
        return frame.flip();
    }
}
