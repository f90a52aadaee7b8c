package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.requests.ResponseHeader;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;

/** One request over a plain socket, serialized by kafka-clients' message classes; returns the response body. */
public final class RawClient implements AutoCloseable
{
    private final Socket socket;
    private int correlationId;

    public RawClient(final int port) throws IOException
    {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(20_000);
    }

    /** Requests over a socket the caller owns (and also writes to itself). */
    RawClient(final Socket socket)
    {
        this.socket = socket;
    }

    public ByteBuffer exchange(final ApiKeys api, final short version, final ApiMessage data) throws IOException
    {
        return receive(api, version, send(api, version, data));
    }

    /** An ApiVersions (v3) exchanged: the cheapest proof that the connection's network thread answers. */
    ApiVersionsResponseData apiVersions() throws IOException
    {
        final short version = 3;
        return new ApiVersionsResponseData(new ByteBufferAccessor(exchange(ApiKeys.API_VERSIONS, version,
            new ApiVersionsRequestData().setClientSoftwareName("raw-test").setClientSoftwareVersion("1"))), version);
    }

    /** Sends a request without reading its answer; returns its correlation id, for {@link #receive}. */
    int send(final ApiKeys api, final short version, final ApiMessage data) throws IOException
    {
        final int id = ++correlationId;
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.write(frame(api, version, data, id).array());
        out.flush();
        return id;
    }

    /** Sends a frame written elsewhere (size prefix and header included). */
    void sendFrame(final ByteBuffer frame) throws IOException
    {
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.write(frame.array(), frame.arrayOffset() + frame.position(), frame.remaining());
        out.flush();
    }

    /** The broker closed the connection and sent nothing first: the first read ends (or is reset); a timeout fails. */
    void assertClosedUnanswered(final String what) throws IOException
    {
        assertClosedUnanswered(socket, what);
    }

    /** {@link #assertClosedUnanswered(String)} on a socket the caller owns. */
    static void assertClosedUnanswered(final Socket socket, final String what) throws IOException
    {
        final int first;
        try
        {
            first = socket.getInputStream().read();
        }
        catch (final java.net.SocketException ex) // a reset is a close too; a SocketTimeoutException is not one of these
        {
            org.junit.jupiter.api.Assertions.assertTrue(ex.getMessage() == null || ex.getMessage().contains("reset"), ex.toString());
            return;
        }
        org.junit.jupiter.api.Assertions.assertEquals(-1, first, what + ": no byte came back before the close");
    }

    /** Whether any byte of an answer has arrived. */
    boolean answered() throws IOException
    {
        return socket.getInputStream().available() > 0;
    }

    /** Reads the answer to request {@code id} (the next one on this connection): the response body. */
    ByteBuffer receive(final ApiKeys api, final short version, final int id) throws IOException
    {
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] bytes = new byte[in.readInt()];
        in.readFully(bytes);
        final ByteBuffer response = ByteBuffer.wrap(bytes);
        final int got = ResponseHeader.parse(response, api.responseHeaderVersion(version)).correlationId();
        if (got != id)
        {
            throw new IOException("correlation id " + got + ", expected " + id);
        }
        return response;
    }

    /** A size-prefixed request frame as kafka-clients serializes it. */
    static ByteBuffer frame(final ApiKeys api, final short version, final ApiMessage data, final int correlationId)
    {
        final RequestHeaderData header = new RequestHeaderData().setRequestApiKey(api.id).setRequestApiVersion(version)
            .setCorrelationId(correlationId).setClientId("raw-test");
        final short headerVersion = api.requestHeaderVersion(version);
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final int size = header.size(cache, headerVersion) + data.size(cache, version);
        final ByteBuffer buffer = ByteBuffer.allocate(4 + size).putInt(size);
        header.write(new ByteBufferAccessor(buffer), cache, headerVersion);
        data.write(new ByteBufferAccessor(buffer), cache, version);
        return buffer.flip();
    }

    @Override
    public void close() throws IOException
    {
        socket.close();
    }
}
