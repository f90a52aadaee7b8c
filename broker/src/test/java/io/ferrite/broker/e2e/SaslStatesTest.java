package io.ferrite.broker.e2e;

import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The SASL connection states at their edges, as Kafka 4.4's SaslServerAuthenticator has them: ApiVersions only as the
 * first request, FindCoordinator answering the endpoint of the listener it came in on, and a
 * {@code connection.failed.authentication.delay.ms} of 0 (the failure answered at once, then the close).
 */
class SaslStatesTest
{
    @TempDir
    Path dir;

    private static Map<String, String> noDelay()
    {
        final Map<String, String> config = new HashMap<>(SaslPlainTest.saslBroker());
        config.put("connection.failed.authentication.delay.ms", "0");
        return config;
    }

    private static SaslAuthenticateResponseData authenticate(final RawClient raw, final String token) throws IOException
    {
        final SaslHandshakeResponseData handshake = new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"))), (short)1);
        assertEquals(Errors.NONE.code(), handshake.errorCode());
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_AUTHENTICATE, (short)2,
            new SaslAuthenticateRequestData().setAuthBytes(token.getBytes(StandardCharsets.UTF_8)))), (short)2);
    }

    @Test
    void apiVersionsIsTakenOnceAndOnlyAsTheFirstRequest() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, noDelay()))
        {
            final int port = SaslPlainTest.saslPort(broker);
            try (RawClient raw = new RawClient(port))
            {
                raw.apiVersions();
                assertEquals(Errors.NONE.code(), authenticate(raw, "\0alice\0alice-secret").errorCode(), "ApiVersions then the handshake");
            }
            try (RawClient raw = new RawClient(port))
            {
                raw.apiVersions();
                raw.send(ApiKeys.API_VERSIONS, (short)3, new org.apache.kafka.common.message.ApiVersionsRequestData()
                    .setClientSoftwareName("raw").setClientSoftwareVersion("1"));
                raw.assertClosedUnanswered("a second ApiVersions (Kafka: IllegalStateException, the connection closed)");
            }
        }
    }

    @Test
    void findCoordinatorAnswersTheEndpointOfTheListenerItCameInOn() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, noDelay()))
        {
            final int saslPort = SaslPlainTest.saslPort(broker);
            final int plainPort = broker.broker.address().getPort();
            try (RawClient sasl = new RawClient(saslPort); RawClient plain = new RawClient(plainPort))
            {
                assertEquals(Errors.NONE.code(), authenticate(sasl, "\0alice\0alice-secret").errorCode());
                assertEquals(saslPort, coordinatorPort(sasl));
                assertEquals(plainPort, coordinatorPort(plain));
            }
        }
    }

    /** The coordinator's port of group "g" (asked until the coordinator is available: the offsets topic is made on demand). */
    private static int coordinatorPort(final RawClient raw) throws IOException
    {
        final int[] port = new int[1];
        await(() ->
        {
            final FindCoordinatorResponseData answer = new FindCoordinatorResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.FIND_COORDINATOR, (short)4, new FindCoordinatorRequestData().setKeyType((byte)0).setCoordinatorKeys(List.of("g")))),
                (short)4);
            final FindCoordinatorResponseData.Coordinator c = answer.coordinators().get(0);
            port[0] = c.port();
            return c.errorCode() == Errors.NONE.code();
        }, Duration.ofSeconds(30), "the group coordinator found");
        return port[0];
    }

    @Test
    void aDelayOfZeroAnswersTheFailureThenCloses() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, noDelay()))
        {
            final int port = SaslPlainTest.saslPort(broker);
            try (RawClient raw = new RawClient(port))
            {
                final SaslAuthenticateResponseData answer = authenticate(raw, "\0alice\0wrong");
                assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.errorCode());
                assertEquals("Authentication failed: Invalid username or password", answer.errorMessage());
                raw.assertClosedUnanswered("after the failure");
            }
            try (Socket socket = new Socket("127.0.0.1", port))
            {
                socket.setSoTimeout(20_000);
                socket.getOutputStream().write(new byte[] {0x06, 0x40, 0, 0}); // 100 MB declared before authentication
                RawClient.assertClosedUnanswered(socket, "an oversized frame");
            }
            try (RawClient raw = new RawClient(port))
            {
                assertEquals(Errors.NONE.code(), authenticate(raw, "\0alice\0alice-secret").errorCode(), "others unaffected");
            }
        }
    }
}
