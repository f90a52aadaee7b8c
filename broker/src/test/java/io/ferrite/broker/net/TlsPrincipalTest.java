package io.ferrite.broker.net;

import io.ferrite.broker.TestCertificates;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.config.ListenerSecurity;
import io.ferrite.broker.config.TlsSettings;
import io.ferrite.broker.scram.ScramCredentials;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.DataOutputStream;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The principal of a connection on an SSL listener, as Kafka 4.4's default principal builder makes it: {@code User:} and
 * the client certificate's distinguished name (RFC 2253, Kafka's DEFAULT mapping rule) when one was asked for and given,
 * else {@code User:ANONYMOUS}. Real network and acceptor threads, a JDK {@link SSLSocket} client; the handler records the
 * principal of the first request it sees.
 */
class TlsPrincipalTest
{
    @TempDir
    static Path dir;
    static TestCertificates certs;

    @BeforeAll
    static void makeCertificates() throws Exception
    {
        certs = TestCertificates.shared();
    }

    @Test
    void theClientCertificatesSubjectIsThePrincipalWhenAskedForAndGiven() throws Exception
    {
        assertEquals("User:" + TestCertificates.CLIENT_DN, principal("required", "client"));
        assertEquals("User:" + TestCertificates.CLIENT_DN, principal("requested", "client"));
        assertEquals("User:ANONYMOUS", principal("requested", null), "requested, none given");
        assertEquals("User:ANONYMOUS", principal("none", "client"), "not asked for: not sent");
    }

    private static String principal(final String clientAuth, final String clientStore) throws Exception
    {
        final BrokerConfig config = BrokerConfig.of(Map.of("listeners", "SSL://127.0.0.1:0", "log.dir", dir.resolve("logs").toString(),
            "ssl.keystore.type", "PKCS12", "ssl.keystore.location", certs.store("broker").toString(), "ssl.keystore.password", TestCertificates.PASSWORD,
            "ssl.truststore.type", "PKCS12", "ssl.truststore.location", certs.store("broker-trust").toString(),
            "ssl.truststore.password", TestCertificates.PASSWORD, "listener.name.ssl.ssl.client.auth", clientAuth));
        final TlsSettings.Server server = TlsSettings.server(config, ListenerSecurity.brokerListeners(config).get(0));
        final Listener listener = new Listener("SSL", "SSL", List.of(), Map.of(), new ScramCredentials(), 0,
            new TlsEngines(server.context(), server.protocols(), server.cipherSuites(), server.clientAuth()));
        final BlockingQueue<String> seen = new LinkedBlockingQueue<>();
        final NetworkThread thread = new NetworkThread(0, (api, version, in, offset, limit, out, outOffset, connection) ->
        {
            seen.add(connection.principal());
            return RequestHandler.CLOSE;
        }, 1 << 20);
        thread.start();
        final Acceptor acceptor = new Acceptor(new InetSocketAddress("127.0.0.1", 0), new NetworkThread[] {thread}, listener);
        acceptor.start();
        try (SSLSocket socket = (SSLSocket)certs.clientContext(clientStore).getSocketFactory().createSocket("127.0.0.1", acceptor.address().getPort()))
        {
            socket.setSoTimeout(20_000);
            socket.startHandshake();
            final ByteBuffer request = new ApiVersionsRequest.Builder().build((short)3)
                .serializeWithHeader(new RequestHeader(ApiKeys.API_VERSIONS, (short)3, "tls", 1));
            final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            out.writeInt(request.remaining());
            out.write(request.array(), request.arrayOffset() + request.position(), request.remaining());
            out.flush();
            final String principal = seen.poll(20, TimeUnit.SECONDS);
            final InputStream in = socket.getInputStream();
            while (in.read() >= 0)
            {
                // closed by the handler's answer
            }
            return principal;
        }
        finally
        {
            acceptor.close();
            thread.close();
        }
    }
}
