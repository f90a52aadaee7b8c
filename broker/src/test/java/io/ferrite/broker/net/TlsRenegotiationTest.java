package io.ferrite.broker.net;

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
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A TLS 1.2 client that asks for a second handshake (a renegotiation) after the first is refused: its connection closes,
 * as Kafka 4.4's SslTransportLayer refuses it ("Renegotiation is not supported"), and the network thread serves on. Real
 * network and acceptor threads, a JDK {@link SSLSocket} client limited to TLSv1.2.
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
            try (SSLSocket socket = tls12(certs, acceptor))
            {
                assertEquals(1, apiVersions(socket, 1), "served after the first handshake");
                // the JDK client sends a ClientHello on the established session; the broker closes the connection, so
                // either the handshake or the request after it meets the end of the stream
                assertThrows(IOException.class, () ->
                {
                    socket.startHandshake();
                    apiVersions(socket, 2);
                }, "a renegotiation costs the connection");
            }
            try (SSLSocket other = tls12(certs, acceptor))
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

    private static SSLSocket tls12(final TestCertificates certs, final Acceptor acceptor) throws Exception
    {
        final SSLSocket socket = (SSLSocket)certs.clientContext(null).getSocketFactory().createSocket("127.0.0.1", acceptor.address().getPort());
        socket.setSoTimeout(20_000);
        socket.setEnabledProtocols(new String[] {"TLSv1.2"});
        socket.startHandshake();
        return socket;
    }

    /** Sends an ApiVersions request and returns its answer's correlation id (EOFException if the broker closed). */
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
