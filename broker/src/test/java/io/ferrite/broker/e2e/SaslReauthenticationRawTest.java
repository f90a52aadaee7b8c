package io.ferrite.broker.e2e;

import io.ferrite.broker.net.NetworkStats;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.ferrite.broker.e2e.SaslScramTest.setCredential;
import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Re-authentication (KIP-368) over raw connections, one network thread, each answer as Kafka 4.4's
 * {@code SaslServerAuthenticator} / {@code KafkaChannel} / {@code Processor} give it: a session lifetime answered and a
 * re-authentication on the same connection; a SaslHandshake within a second of the last re-authentication, or where
 * sessions have no end, answered ILLEGAL_SASL_STATE on a connection that stays; and the races and refusals — requests
 * pipelined behind a re-authentication's SaslHandshake, a SaslHandshake flood, another principal, a wrong password, another
 * mechanism, a SCRAM password changed through Admin, a session that ended — each costing only its connection while an
 * authenticated connection on the same thread is served.
 *
 * <p>One broker: SASL_PLAINTEXT with PLAIN and SCRAM-SHA-256, {@code connections.max.reauth.ms=60000} but 1 500 ms for
 * SCRAM-SHA-256 ({@code listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms}), and a second SASL
 * listener, NOREAUTH, whose sessions never end ({@code listener.name.noreauth.connections.max.reauth.ms=0}).
 */
class SaslReauthenticationRawTest
{
    private static final String JAAS = "org.apache.kafka.common.security.plain.PlainLoginModule required "
        + "user_alice=\"alice-secret\" user_bob=\"bob-secret\";";
    private static final long PLAIN_LIFETIME_MS = 60_000;
    private static final long SCRAM_LIFETIME_MS = 1_500;

    @TempDir
    Path dir;

    static Map<String, String> reauthBroker()
    {
        final Map<String, String> config = new HashMap<>();
        config.put("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0,NOREAUTH://127.0.0.1:0");
        config.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,NOREAUTH:SASL_PLAINTEXT");
        config.put("sasl.enabled.mechanisms", "PLAIN,SCRAM-SHA-256");
        config.put("listener.name.sasl_plaintext.plain.sasl.jaas.config", JAAS);
        config.put("listener.name.noreauth.plain.sasl.jaas.config", JAAS);
        config.put("connections.max.reauth.ms", Long.toString(PLAIN_LIFETIME_MS));
        config.put("listener.name.sasl_plaintext.scram-sha-256.connections.max.reauth.ms", Long.toString(SCRAM_LIFETIME_MS));
        config.put("listener.name.noreauth.connections.max.reauth.ms", "0");
        config.put("connection.failed.authentication.delay.ms", "100");
        config.put("num.network.threads", "1"); // every connection below shares the thread of the refused ones
        return config;
    }

    static SaslHandshakeResponseData handshake(final RawClient raw, final short version, final String mechanism) throws IOException
    {
        return new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_HANDSHAKE, version,
            new SaslHandshakeRequestData().setMechanism(mechanism))), version);
    }

    static SaslAuthenticateResponseData authenticate(final RawClient raw, final short version, final byte[] token) throws IOException
    {
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_AUTHENTICATE, version,
            new SaslAuthenticateRequestData().setAuthBytes(token))), version);
    }

    /** A PLAIN exchange (SaslHandshake v1, SaslAuthenticate v2) on {@code raw}: the SaslAuthenticate answer. */
    static SaslAuthenticateResponseData plain(final RawClient raw, final String user, final String password) throws IOException
    {
        assertEquals(Errors.NONE.code(), handshake(raw, (short)1, "PLAIN").errorCode());
        return authenticate(raw, (short)2, ("\0" + user + "\0" + password).getBytes(StandardCharsets.UTF_8));
    }

    /** A SCRAM-SHA-256 exchange by kafka-clients' own client: the last SaslAuthenticate answer (the first's when it failed). */
    static SaslAuthenticateResponseData scram(final RawClient raw, final String user, final String password) throws IOException
    {
        assertEquals(Errors.NONE.code(), handshake(raw, (short)1, "SCRAM-SHA-256").errorCode());
        final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-256", user, password);
        final SaslAuthenticateResponseData first = authenticate(raw, (short)2, client.next(new byte[0]));
        if (first.errorCode() != Errors.NONE.code())
        {
            return first;
        }
        final SaslAuthenticateResponseData last = authenticate(raw, (short)2, client.next(first.authBytes()));
        if (last.errorCode() == Errors.NONE.code())
        {
            client.next(last.authBytes()); // the server's signature checked
            assertTrue(client.complete());
        }
        return last;
    }

    static void assertAuthenticated(final SaslAuthenticateResponseData answer, final long lifetimeMs)
    {
        assertEquals(Errors.NONE.code(), answer.errorCode(), answer.errorMessage());
        assertEquals(lifetimeMs, answer.sessionLifetimeMs(), "session_lifetime_ms");
    }

    /** A Metadata request answered on {@code raw}: the connection is served. */
    static void assertServed(final RawClient raw) throws IOException
    {
        final MetadataResponseData answer = new MetadataResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.METADATA, (short)12,
            new MetadataRequestData().setTopics(null))), (short)12);
        assertEquals(1, answer.brokers().size());
    }

    private static void assertFailedThenClosed(final RawClient raw, final SaslAuthenticateResponseData answer, final String message)
        throws IOException
    {
        assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.errorCode());
        assertEquals(message, answer.errorMessage());
        raw.assertClosedUnanswered("after the failed re-authentication");
    }

    private static NetworkStats stats(final RunningBroker broker)
    {
        return broker.broker.networkThread(0).stats();
    }

    @Test
    void aSessionLifetimeIsAnsweredAndTheConnectionReauthenticatesOnItself() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, reauthBroker()))
        {
            final int port = broker.broker.address("SASL_PLAINTEXT").getPort();
            try (RawClient raw = new RawClient(port))
            {
                raw.apiVersions();
                assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                assertServed(raw);
                final long before = stats(broker).saslReauthentications();
                // kafka-clients re-authenticates with SaslHandshake + SaslAuthenticate, no ApiVersions first
                assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                assertEquals(before + 1, stats(broker).saslReauthentications());
                assertServed(raw);
                // within a second of the last re-authentication: an ordinary request (Kafka's KafkaApis answer), the connection kept
                final SaslHandshakeResponseData tooSoon = handshake(raw, (short)1, "PLAIN");
                assertEquals(Errors.ILLEGAL_SASL_STATE.code(), tooSoon.errorCode());
                assertEquals(List.of(), tooSoon.mechanisms());
                assertEquals(Errors.ILLEGAL_SASL_STATE.code(), authenticate(raw, (short)2, new byte[0]).errorCode());
                assertServed(raw);
            }
            // SaslAuthenticate v0 has no session_lifetime_ms; the session still has its end (Kafka computes it on every path)
            try (RawClient raw = new RawClient(port))
            {
                assertEquals(Errors.NONE.code(), handshake(raw, (short)1, "PLAIN").errorCode());
                assertEquals(Errors.NONE.code(), authenticate(raw, (short)0, "\0bob\0bob-secret".getBytes(StandardCharsets.UTF_8)).errorCode());
                assertServed(raw);
            }
            // where sessions never end: lifetime 0, and a SaslHandshake is refused as Kafka refuses it, the connection kept
            try (RawClient raw = new RawClient(broker.broker.address("NOREAUTH").getPort()))
            {
                assertAuthenticated(plain(raw, "alice", "alice-secret"), 0);
                for (int i = 0; i < 3; i++)
                {
                    assertEquals(Errors.ILLEGAL_SASL_STATE.code(), handshake(raw, (short)1, "PLAIN").errorCode());
                }
                assertServed(raw);
            }
        }
    }

    @Test
    void racesAndRefusedReauthenticationsCostOnlyTheirConnection() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, reauthBroker()))
        {
            final int port = broker.broker.address("SASL_PLAINTEXT").getPort();
            try (RawClient served = new RawClient(port))
            {
                assertAuthenticated(plain(served, "bob", "bob-secret"), PLAIN_LIFETIME_MS);
                // requests pipelined behind a re-authentication's SaslHandshake: taken as part of the exchange, the connection closed
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    final int id = raw.send(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"));
                    raw.send(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null));
                    raw.send(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null));
                    assertEquals(Errors.NONE.code(), new SaslHandshakeResponseData(new ByteBufferAccessor(raw.receive(ApiKeys.SASL_HANDSHAKE,
                        (short)1, id)), (short)1).errorCode());
                    raw.assertClosedUnanswered("a Metadata request inside the re-authentication");
                }
                assertServed(served);
                // a SaslHandshake flood in one write: the first begins the re-authentication, the second ends the connection
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    raw.sendFrame(handshakes(200, 100)); // small enough to be read whole: the close is a FIN, not a reset
                    final SaslHandshakeResponseData first = new SaslHandshakeResponseData(new ByteBufferAccessor(
                        raw.receive(ApiKeys.SASL_HANDSHAKE, (short)1, 100)), (short)1);
                    assertEquals(Errors.NONE.code(), first.errorCode());
                    raw.assertClosedUnanswered("the second SaslHandshake of a flood");
                }
                assertServed(served);
                // another principal
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    assertFailedThenClosed(raw, plain(raw, "bob", "bob-secret"),
                        "Cannot change principals during re-authentication from User.alice: User.bob");
                }
                // a wrong password
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    assertFailedThenClosed(raw, plain(raw, "alice", "wrong"), "Authentication failed: Invalid username or password");
                }
                // another mechanism: the handshake answered NONE, whatever comes next fails, unanswered (REAUTH_BAD_MECHANISM)
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    assertEquals(Errors.NONE.code(), handshake(raw, (short)1, "SCRAM-SHA-256").errorCode());
                    raw.send(ApiKeys.SASL_AUTHENTICATE, (short)2, new SaslAuthenticateRequestData().setAuthBytes(new byte[0]));
                    raw.assertClosedUnanswered("a re-authentication with another mechanism");
                }
                // a mechanism the listener does not offer
                try (RawClient raw = new RawClient(port))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), PLAIN_LIFETIME_MS);
                    assertEquals(Errors.UNSUPPORTED_SASL_MECHANISM.code(), handshake(raw, (short)1, "SCRAM-SHA-512").errorCode());
                    raw.assertClosedUnanswered("after UNSUPPORTED_SASL_MECHANISM");
                }
                assertServed(served);
                // where sessions never end a flood of SaslHandshakes is answered, each ILLEGAL_SASL_STATE, and the connection kept
                try (RawClient raw = new RawClient(broker.broker.address("NOREAUTH").getPort()))
                {
                    assertAuthenticated(plain(raw, "alice", "alice-secret"), 0);
                    raw.sendFrame(handshakes(500, 100));
                    for (int i = 0; i < 500; i++)
                    {
                        assertEquals(Errors.ILLEGAL_SASL_STATE.code(), new SaslHandshakeResponseData(new ByteBufferAccessor(
                            raw.receive(ApiKeys.SASL_HANDSHAKE, (short)1, 100 + i)), (short)1).errorCode());
                    }
                    assertServed(raw);
                }
                // the connection authenticated first, never re-authenticated, is served throughout; it re-authenticates still
                assertServed(served);
                assertAuthenticated(plain(served, "bob", "bob-secret"), PLAIN_LIFETIME_MS);
                assertServed(served);
            }
        }
    }

    /**
     * A session begun through SaslAuthenticate v0 (no session_lifetime_ms in its answer) or through SaslHandshake v0 and a
     * bare token (no answer to carry one) still ends: Kafka computes the end on both paths, and a client that cannot
     * re-authenticate has its connection closed at its first request after it (reauth review 1, M3). PLAIN's lifetime is
     * 1 500 ms on this broker; each connection is served before its end and closed, unanswered, after it.
     */
    @Test
    void sessionsBegunThroughVersionZeroEndToo() throws Exception
    {
        final Map<String, String> config = reauthBroker();
        config.put("listener.name.sasl_plaintext.plain.connections.max.reauth.ms", "1500");
        try (RunningBroker broker = new RunningBroker(dir, config))
        {
            final int port = broker.broker.address("SASL_PLAINTEXT").getPort();
            final long ended = stats(broker).saslSessionsEnded();
            try (RawClient v0Authenticate = new RawClient(port); Socket socket = new Socket("127.0.0.1", port))
            {
                final long endsAfterMs = System.currentTimeMillis() + 1500;
                assertEquals(Errors.NONE.code(), handshake(v0Authenticate, (short)1, "PLAIN").errorCode());
                assertEquals(Errors.NONE.code(), authenticate(v0Authenticate, (short)0,
                    "\0alice\0alice-secret".getBytes(StandardCharsets.UTF_8)).errorCode());
                assertServed(v0Authenticate);

                socket.setSoTimeout(20_000);
                final RawClient v0Handshake = new RawClient(socket);
                assertEquals(Errors.NONE.code(), handshake(v0Handshake, (short)0, "PLAIN").errorCode());
                final byte[] token = "\0bob\0bob-secret".getBytes(StandardCharsets.UTF_8);
                final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
                out.writeInt(token.length);
                out.write(token);
                out.flush();
                assertEquals(0, new DataInputStream(socket.getInputStream()).readInt(), "an empty bare token back");
                assertServed(v0Handshake);

                awaitClosedBySessionEnd(v0Authenticate, "the session begun with SaslAuthenticate v0");
                awaitClosedBySessionEnd(v0Handshake, "the session begun with SaslHandshake v0");
                assertTrue(System.currentTimeMillis() >= endsAfterMs, "closed only after the sessions' end");
            }
            assertEquals(ended + 2, stats(broker).saslSessionsEnded(), "both closes were the sessions' ends");
        }
    }

    /** Metadata requests on {@code raw} until one meets the close (bounded: 30 s): its session ended. */
    private static void awaitClosedBySessionEnd(final RawClient raw, final String what)
    {
        await(() ->
        {
            try
            {
                assertServed(raw);
                return false;
            }
            catch (final IOException ex)
            {
                return true;
            }
        }, Duration.ofSeconds(30), what + ": its connection closed once the session ended");
    }

    /** {@code count} SaslHandshake v1 (PLAIN) frames in one buffer, correlation ids from {@code firstId}. */
    private static ByteBuffer handshakes(final int count, final int firstId)
    {
        final List<ByteBuffer> frames = new java.util.ArrayList<>();
        int size = 0;
        for (int i = 0; i < count; i++)
        {
            final ByteBuffer frame = RawClient.frame(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("PLAIN"),
                firstId + i);
            frames.add(frame);
            size += frame.remaining();
        }
        final ByteBuffer all = ByteBuffer.allocate(size);
        frames.forEach(all::put);
        return all.flip();
    }

    @Test
    void aScramPasswordChangedFailsTheNextReauthenticationAndAnEndedSessionIsClosed() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, reauthBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            setCredential(broker, "bob", ScramMechanism.SCRAM_SHA_256, 4096, "bob-secret");
            final int port = broker.broker.address("SASL_PLAINTEXT").getPort();
            try (RawClient alice = new RawClient(port); RawClient bob = new RawClient(port))
            {
                assertAuthenticated(scram(alice, "alice", "alice-secret"), SCRAM_LIFETIME_MS);
                assertAuthenticated(scram(bob, "bob", "bob-secret"), SCRAM_LIFETIME_MS);
                setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "changed-secret"); // through Admin
                assertFailedThenClosed(alice, scram(alice, "alice", "alice-secret"),
                    "Authentication failed during re-authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256");
                assertServed(bob);
                // the earliest end of the session below: its start is after this
                final long endsAfterMs = System.currentTimeMillis() + SCRAM_LIFETIME_MS;
                assertAuthenticated(scram(bob, "bob", "bob-secret"), SCRAM_LIFETIME_MS); // bob re-authenticates, his password unchanged
                assertServed(bob);
                // bob does not re-authenticate again: once his session ended, his next request closes the connection, unanswered
                final long ended = stats(broker).saslSessionsEnded();
                final boolean[] closed = new boolean[1];
                await(() ->
                {
                    try
                    {
                        assertServed(bob);
                        return false;
                    }
                    catch (final IOException ex)
                    {
                        closed[0] = true;
                        return true;
                    }
                }, Duration.ofSeconds(30), "bob's connection closed once his session ended");
                assertTrue(closed[0]);
                assertTrue(System.currentTimeMillis() >= endsAfterMs, "closed only after the session's end");
                assertEquals(ended + 1, stats(broker).saslSessionsEnded());
            }
            try (RawClient alice = new RawClient(port))
            {
                assertAuthenticated(scram(alice, "alice", "changed-secret"), SCRAM_LIFETIME_MS); // the new password logs in
                assertServed(alice);
            }
        }
    }
}
