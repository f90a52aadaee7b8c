package io.ferrite.broker.net;

import io.ferrite.broker.api.Apis;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.ResponseHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The acceptor, network threads and ApiVersions, driven over real sockets with kafka-clients' own request classes. */
class NetworkLayerTest
{
    private NetworkThread[] threads;
    private Acceptor acceptor;
    private InetSocketAddress address;

    @BeforeEach
    void start() throws IOException
    {
        final Apis apis = new Apis();
        threads = new NetworkThread[] {new NetworkThread(0, apis, 1 << 20), new NetworkThread(1, apis, 1 << 20)};
        for (final NetworkThread t : threads)
        {
            t.start();
        }
        acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), threads);
        acceptor.start();
        address = acceptor.address();
    }

    @AfterEach
    void stop() throws IOException
    {
        acceptor.close();
        for (final NetworkThread t : threads)
        {
            t.close();
        }
    }

    private Socket connect() throws IOException
    {
        final Socket socket = new Socket(address.getAddress(), address.getPort());
        socket.setSoTimeout(10_000);
        return socket;
    }

    private static void send(final Socket socket, final ByteBuffer frame) throws IOException
    {
        final OutputStream out = socket.getOutputStream();
        final byte[] bytes = new byte[frame.remaining()];
        frame.duplicate().get(bytes);
        out.write(ByteBuffer.allocate(4).putInt(bytes.length).array());
        out.write(bytes);
        out.flush();
    }

    private static ByteBuffer receive(final Socket socket) throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        return ByteBuffer.wrap(bytes);
    }

    private static ApiVersionsResponseData apiVersions(final Socket socket, final ApiVersionsRequest request, final int correlationId)
        throws IOException
    {
        final short version = request.version();
        send(socket, request.serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, version, "test-client", correlationId)));
        final ByteBuffer response = receive(socket);
        assertEquals(correlationId, ResponseHeader.parse(response, (short)0).correlationId());
        final ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), version);
        assertEquals(0, response.remaining(), "the whole response is read");
        return data;
    }

    private static void assertClosedByBroker(final Socket socket)
    {
        try
        {
            final int read = socket.getInputStream().read();
            assertEquals(-1, read, "the broker closes the connection");
        }
        catch (final SocketTimeoutException ex)
        {
            fail("the broker kept the connection open");
        }
        catch (final IOException ex)
        {
            // a reset: closed too
        }
    }

    @Test
    void everyApiVersionsVersionIsAnsweredAsKafkaClientsReadIt() throws IOException
    {
        try (Socket socket = connect())
        {
            for (short v = ApiKeys.API_VERSIONS.oldestVersion(); v <= ApiKeys.API_VERSIONS.latestVersion(); v++)
            {
                final ApiVersionsResponseData data = apiVersions(socket, new ApiVersionsRequest.Builder().build(v), 100 + v);
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
        try (Socket socket = connect())
        {
            final ByteBuffer request = ByteBuffer.allocate(64);
            request.putShort(ApiKeys.API_VERSIONS.id).putShort((short)99).putInt(42).putShort((short)6).put("future".getBytes())
                .put((byte)0).put(new byte[] {1, 2, 3}).flip(); // a v99 body the broker cannot know
            send(socket, request);
            final ByteBuffer response = receive(socket);
            assertEquals(42, ResponseHeader.parse(response, (short)0).correlationId());
            final ApiVersionsResponseData data = new ApiVersionsResponseData(new ByteBufferAccessor(response), (short)0);
            assertEquals(Errors.UNSUPPORTED_VERSION.code(), data.errorCode());
            assertEquals(1, data.apiKeys().size());
            assertEquals(ApiKeys.API_VERSIONS.latestVersion(), data.apiKeys().find(ApiKeys.API_VERSIONS.id).maxVersion());
            // and the connection goes on
            assertEquals(Errors.NONE.code(), apiVersions(socket, new ApiVersionsRequest.Builder().build((short)3), 43).errorCode());
        }
    }

    @Test
    void aClientSoftwareNameOutsideKafkasPatternIsAnInvalidRequest() throws IOException
    {
        try (Socket socket = connect())
        {
            final ApiVersionsRequest request = new ApiVersionsRequest(new ApiVersionsRequestData()
                .setClientSoftwareName("bad name!").setClientSoftwareVersion("1.0"), (short)3);
            final ApiVersionsResponseData data = apiVersions(socket, request, 1);
            assertEquals(Errors.INVALID_REQUEST.code(), data.errorCode());
            assertTrue(new ApiVersionsRequest(new ApiVersionsRequestData().setClientSoftwareName("bad name!")
                .setClientSoftwareVersion("1.0"), (short)3).isValid() == false, "kafka-clients agrees it is invalid");
        }
    }

    @Test
    void badFramesCostOnlyTheirConnection() throws Exception
    {
        final Random random = new Random(7);
        try (Socket good = connect())
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
                try (Socket socket = connect())
                {
                    socket.getOutputStream().write(frame);
                    assertClosedByBroker(socket);
                }
            }
            for (int i = 0; i < 200; i++)
            {
                try (Socket socket = connect())
                {
                    final byte[] garbage = new byte[8 + random.nextInt(64)];
                    random.nextBytes(garbage);
                    ByteBuffer.wrap(garbage).putInt(garbage.length - 4).putShort((short)18); // ApiVersions with garbage after
                    socket.getOutputStream().write(garbage);
                    // either answered (the garbage happened to parse) or closed: never a hang or a crash
                    try
                    {
                        receive(socket);
                    }
                    catch (final EOFException | java.net.SocketException closed)
                    {
                        // closed by the broker
                    }
                }
            }
            assertEquals(Errors.NONE.code(), apiVersions(good, new ApiVersionsRequest.Builder().build((short)4), 9).errorCode(),
                "the other client is still served");
        }
    }

    @Test
    void aWaitingRequestWhosePollFailsIsCancelledAndCostsOnlyItsConnection() throws Exception
    {
        final java.util.concurrent.atomic.AtomicBoolean cancelled = new java.util.concurrent.atomic.AtomicBoolean();
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
        final NetworkThread thread = new NetworkThread(0, apis, 1 << 20);
        thread.start();
        final Acceptor own = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {thread});
        own.start();
        try
        {
            final org.apache.kafka.common.message.RequestHeaderData header = new org.apache.kafka.common.message.RequestHeaderData()
                .setRequestApiKey(ApiKeys.FETCH.id).setRequestApiVersion((short)12).setCorrelationId(7).setClientId("test-client");
            final org.apache.kafka.common.message.FetchRequestData body = new org.apache.kafka.common.message.FetchRequestData();
            final org.apache.kafka.common.protocol.ObjectSerializationCache cache = new org.apache.kafka.common.protocol.ObjectSerializationCache();
            final short headerVersion = ApiKeys.FETCH.requestHeaderVersion((short)12);
            final ByteBuffer frame = ByteBuffer.allocate(header.size(cache, headerVersion) + body.size(cache, (short)12));
            header.write(new ByteBufferAccessor(frame), cache, headerVersion);
            body.write(new ByteBufferAccessor(frame), cache, (short)12);
            frame.flip();
            try (Socket socket = new Socket(own.address().getAddress(), own.address().getPort()))
            {
                socket.setSoTimeout(10_000);
                send(socket, frame);
                assertClosedByBroker(socket);
            }
            final long deadline = System.nanoTime() + 10_000_000_000L;
            while (!cancelled.get() && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            assertTrue(cancelled.get(), "the waiting request was cancelled when its connection closed");
            try (Socket socket = new Socket(own.address().getAddress(), own.address().getPort()))
            {
                socket.setSoTimeout(10_000);
                assertEquals(Errors.NONE.code(), apiVersions(socket, new ApiVersionsRequest.Builder().build((short)3), 1).errorCode(),
                    "the network thread serves on");
            }
        }
        finally
        {
            own.close();
            thread.close();
        }
    }

    @Test
    void pipelinedRequestsAreAnsweredInOrder() throws IOException
    {
        try (Socket socket = connect())
        {
            for (int i = 0; i < 50; i++)
            {
                send(socket, new ApiVersionsRequest.Builder().build((short)3)
                    .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "test-client", i)));
            }
            for (int i = 0; i < 50; i++)
            {
                final ByteBuffer response = receive(socket);
                assertEquals(i, ResponseHeader.parse(response, (short)0).correlationId());
            }
        }
    }
}
