package io.ferrite.broker.net;

import io.ferrite.broker.ClosedByBroker;
import io.ferrite.broker.TestCertificates;
import io.ferrite.broker.api.Apis;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ListenerSecurity;
import io.ferrite.broker.config.TlsSettings;
import io.ferrite.broker.scram.ScramCredentials;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static io.ferrite.broker.ClosedByBroker.assertClosedByBroker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A TLS 1.2 client that asks for a second handshake (a renegotiation) after the first: it is refused and the connection
 * closes, as Kafka 4.4's SslTransportLayer refuses it ("Renegotiation is not supported"), and the network thread serves
 * on. Real network and acceptor threads, a JDK {@link SSLSocket} client limited to TLSv1.2.
 *
 * <p>The client's TLS layer sits on a plain socket the test reads itself once that layer gave up. The JDK client meets
 * the broker's close in one of two ways, by timing (190 tries on a machine at load 25 to 60 saw both, within 3 s): the
 * close_notify in the middle of its renegotiation ({@code SSLProtocolException} "Received close_notify during
 * handshake"), or its request written to the closed socket and reset ("Broken pipe"). A read that waits past its
 * {@code SO_TIMEOUT} is an IOException as well: the TLS layer's exception alone does not tell a close from a broker that
 * never answered, and this test passed on both until it read the socket under that layer to its end (-1 or a reset;
 * {@link ClosedByBroker}), which a broker that kept the connection open fails within the 10 s bound.
 */
class TlsRenegotiationTest
{
    @TempDir
    static Path dir;

    @Test
    void aRenegotiationAfterTheHandshakeClosesTheConnection() throws Exception
    {
        final TestCertificates certs = TestCertificates.shared();
        final BrokerConfig config = BrokerConfig.of(Map.of("listeners", "SSL://127.0.0.1:0", "log.dir", dir.resolve("logs").toString(),
            "ssl.keystore.type", "PKCS12", "ssl.keystore.location", certs.store("broker").toString(), "ssl.keystore.password", TestCertificates.PASSWORD));
        final TlsSettings.Server server = TlsSettings.server(config, ListenerSecurity.brokerListeners(config).get(0));
        final Listener listener = new Listener("SSL", "SSL", List.of(), Map.of(), new ScramCredentials(), 0,
            new TlsEngines(server.context(), server.protocols(), server.cipherSuites(), server.clientAuth()));
        final NetworkThread thread = new NetworkThread(0, new Apis(), 1 << 20);
        thread.start();
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {thread}, listener);
        acceptor.start();
        try
        {
            try (Socket raw = connect(acceptor); SSLSocket socket = tls12(certs, raw))
            {
                assertEquals(1, apiVersions(socket, 1), "served after the first handshake");
                // the JDK client sends a ClientHello on the established session; the broker closes the connection, so
                // either the request after it or its answer's read meets the close
                final IOException refused = assertThrows(IOException.class, () ->
                {
                    socket.startHandshake();
                    apiVersions(socket, 2);
                }, "a renegotiation costs the connection");
                assertFalse(refused instanceof SocketTimeoutException, "not answered, but not closed either: " + refused);
                assertClosedByBroker(raw, 64); // at most the close_notify the TLS layer left unread
            }
            try (Socket raw = connect(acceptor); SSLSocket other = tls12(certs, raw))
            {
                assertEquals(3, apiVersions(other, 3), "the network thread serves on");
            }
        }
        finally
        {
            acceptor.close();
            thread.close();
        }
    }

    /** A plain socket to the acceptor, its reads bounded: what the TLS layer runs on, and what the test reads under it. */
    private static Socket connect(final Acceptor acceptor) throws IOException
    {
        final Socket raw = new Socket("127.0.0.1", acceptor.address().getPort());
        raw.setSoTimeout(10_000);
        return raw;
    }

    /** A TLS 1.2 client over {@code raw}, its handshake done; its failures leave {@code raw} open (no auto-close). */
    private static SSLSocket tls12(final TestCertificates certs, final Socket raw) throws Exception
    {
        final SSLSocket socket = (SSLSocket)certs.clientContext(null).getSocketFactory().createSocket(raw, "127.0.0.1", raw.getPort(), false);
        socket.setEnabledProtocols(new String[] {"TLSv1.2"});
        socket.startHandshake();
        return socket;
    }

    /** Sends an ApiVersions request and returns its answer's correlation id. */
    private static int apiVersions(final SSLSocket socket, final int correlationId) throws IOException
    {
        final ByteBuffer request = new ApiVersionsRequest.Builder().build((short)3)
            .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "tls", correlationId));
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(request.remaining());
        out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
        out.flush();
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] answer = new byte[in.readInt()];
        in.readFully(answer);
        return ByteBuffer.wrap(answer).getInt();
    }
}
