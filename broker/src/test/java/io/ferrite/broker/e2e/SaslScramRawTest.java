package io.ferrite.broker.e2e;

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
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Base64;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.ferrite.broker.e2e.SaslPlainTest.saslPort;
import static io.ferrite.broker.e2e.SaslScramTest.INVALID;
import static io.ferrite.broker.e2e.SaslScramTest.scramBroker;
import static io.ferrite.broker.e2e.SaslScramTest.setCredential;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SCRAM over raw connections, kafka-clients 4.4's own {@code ScramSaslClient} making the client's messages: the
 * exchange in SaslAuthenticate v0-v2 and in bare tokens (SaslHandshake v0), with the server's signature checked by the
 * client; a client-first message that is garbage, a client-final one with a nonce not the server's, a proof of a wrong
 * password or of a wrong length, an authorization id of another user — each SASL_AUTHENTICATION_FAILED with Kafka's
 * message, then the close; none of them echoes a secret back.
 */
class SaslScramRawTest
{
    @TempDir
    Path dir;

    private static SaslAuthenticateResponseData authenticate(final RawClient raw, final short version, final byte[] token) throws IOException
    {
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_AUTHENTICATE, version,
            new SaslAuthenticateRequestData().setAuthBytes(token))), version);
    }

    private static RawClient handshake(final int port, final String mechanism) throws IOException
    {
        final RawClient raw = new RawClient(port);
        final SaslHandshakeResponseData answer = new SaslHandshakeResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_HANDSHAKE,
            (short)1, new SaslHandshakeRequestData().setMechanism(mechanism))), (short)1);
        assertEquals(Errors.NONE.code(), answer.errorCode());
        assertEquals(List.of("SCRAM-SHA-256", "SCRAM-SHA-512"), answer.mechanisms());
        return raw;
    }

    private static void assertFailed(final RawClient raw, final SaslAuthenticateResponseData answer, final String message) throws IOException
    {
        assertEquals(Errors.SASL_AUTHENTICATION_FAILED.code(), answer.errorCode());
        assertEquals(message, answer.errorMessage());
        assertEquals(0, answer.authBytes().length);
        raw.assertClosedUnanswered("after the failure");
    }

    @Test
    void kafkaClientsScramClientAuthenticatesOverEachSaslAuthenticateVersionAndBareTokens() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "al=i,ce", ScramMechanism.SCRAM_SHA_512, 4096, "secret"); // '=' and ',' are escaped in SCRAM names
            final int port = saslPort(broker);
            for (final short version : new short[] {0, 1, 2})
            {
                try (RawClient raw = handshake(port, "SCRAM-SHA-512"))
                {
                    final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-512", "al=i,ce", "secret");
                    final SaslAuthenticateResponseData first = authenticate(raw, version, client.next(new byte[0]));
                    assertEquals(Errors.NONE.code(), first.errorCode(), first.errorMessage());
                    final SaslAuthenticateResponseData last = authenticate(raw, version, client.next(first.authBytes()));
                    assertEquals(Errors.NONE.code(), last.errorCode(), last.errorMessage());
                    client.next(last.authBytes()); // checks the server's signature: it throws if the broker signed wrongly
                    assertTrue(client.complete());
                    assertEquals(port, new MetadataResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.METADATA, (short)12,
                        new MetadataRequestData().setTopics(null))), (short)12).brokers().iterator().next().port());
                }
            }
            try (Socket socket = new Socket("127.0.0.1", port))
            {
                socket.setSoTimeout(20_000);
                final RawClient raw = new RawClient(socket);
                raw.exchange(ApiKeys.SASL_HANDSHAKE, (short)0, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-512"));
                final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-512", "al=i,ce", "secret");
                final byte[] serverFirst = bareExchange(socket, client.next(new byte[0]));
                client.next(bareExchange(socket, client.next(serverFirst)));
                assertTrue(client.complete());
                raw.exchange(ApiKeys.METADATA, (short)12, new MetadataRequestData().setTopics(null));
            }
        }
    }

    /** A bare SASL token (after a SaslHandshake v0): its size, then its bytes. */
    private static void sendBare(final Socket socket, final byte[] token) throws IOException
    {
        final DataOutputStream out = new DataOutputStream(socket.getOutputStream());
        out.writeInt(token.length);
        out.write(token);
        out.flush();
    }

    private static byte[] bareExchange(final Socket socket, final byte[] token) throws IOException
    {
        sendBare(socket, token);
        final DataInputStream in = new DataInputStream(socket.getInputStream());
        final byte[] answer = new byte[in.readInt()];
        in.readFully(answer);
        return answer;
    }

    @Test
    void garbageWrongNoncesWrongProofsAndAnotherAuthorizationIdFailAsKafkaFailsThem() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            final int port = saslPort(broker);
            final String invalid = INVALID + "SCRAM-SHA-256";
            for (final String garbage : List.of("garbage", "", "y,,n=alice,r=abc", "n,,n=alice", "n,,n=al=ice,r=abc", "n,,n=alice,r=a b"))
            {
                try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
                {
                    assertFailed(raw, authenticate(raw, (short)2, garbage.getBytes(StandardCharsets.UTF_8)), invalid);
                }
            }
            try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
            {
                assertFailed(raw, authenticate(raw, (short)2, "n,a=bob,n=alice,r=abc".getBytes(StandardCharsets.UTF_8)),
                    "Authentication failed: Client requested an authorization id that is different from username");
            }
            try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
            {
                final String serverFirst = new String(authenticate(raw, (short)2, "n,,n=alice,r=client-nonce".getBytes(StandardCharsets.UTF_8))
                    .authBytes(), StandardCharsets.UTF_8);
                assertTrue(serverFirst.matches("r=client-nonce[0-9a-z]+,s=[A-Za-z0-9+/=]+,i=4096"), serverFirst);
                // the client's nonce alone, not the one the server extended
                final String proof = Base64.getEncoder().encodeToString(new byte[32]);
                assertFailed(raw, authenticate(raw, (short)2, ("c=biws,r=client-nonce,p=" + proof).getBytes(StandardCharsets.UTF_8)), invalid);
            }
            for (final int proofLength : new int[] {32, 31, 64})
            {
                try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
                {
                    final String serverFirst = new String(authenticate(raw, (short)2, "n,,n=alice,r=abc".getBytes(StandardCharsets.UTF_8))
                        .authBytes(), StandardCharsets.UTF_8);
                    final String nonce = serverFirst.substring(2, serverFirst.indexOf(','));
                    final String proof = Base64.getEncoder().encodeToString(new byte[proofLength]); // not alice's password's
                    final SaslAuthenticateResponseData answer = authenticate(raw, (short)2,
                        ("c=biws,r=" + nonce + ",p=" + proof).getBytes(StandardCharsets.UTF_8));
                    assertFailed(raw, answer, invalid);
                }
            }
            // a wrong password through kafka-clients' own client: the proof is well formed, and wrong
            try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
            {
                final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-256", "alice", "wrong");
                final SaslAuthenticateResponseData first = authenticate(raw, (short)1, client.next(new byte[0]));
                assertFailed(raw, authenticate(raw, (short)1, client.next(first.authBytes())), invalid);
            }
            // the broker still serves a good login
            try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
            {
                final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-256", "alice", "alice-secret");
                final SaslAuthenticateResponseData first = authenticate(raw, (short)2, client.next(new byte[0]));
                client.next(authenticate(raw, (short)2, client.next(first.authBytes())).authBytes());
                assertTrue(client.complete());
                // after authentication SaslAuthenticate is ILLEGAL_SASL_STATE, as on any authenticated connection
                assertEquals(Errors.ILLEGAL_SASL_STATE.code(), authenticate(raw, (short)2, new byte[0]).errorCode());
            }
            // a bare client-first that fails: no answer, the close
            try (Socket socket = new Socket("127.0.0.1", port))
            {
                socket.setSoTimeout(20_000);
                new RawClient(socket).exchange(ApiKeys.SASL_HANDSHAKE, (short)0, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256"));
                sendBare(socket, "n,,n=nobody,r=abc".getBytes(StandardCharsets.UTF_8));
                RawClient.assertClosedUnanswered(socket, "a bare client-first that fails"); // a timeout is no close
            }
        }
    }

    @Test
    void longNamesAuthorizationIdsAndExtensionListsCostOnlyTheirConnection() throws Exception
    {
        final Map<String, String> config = new HashMap<>(scramBroker());
        config.put("num.network.threads", "1"); // every connection below on the same network thread
        try (RunningBroker broker = new RunningBroker(dir, config))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            final int port = saslPort(broker);
            final String invalid = INVALID + "SCRAM-SHA-256";
            try (RawClient served = handshake(port, "SCRAM-SHA-256"))
            {
                final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-256", "alice", "alice-secret");
                final SaslAuthenticateResponseData first = authenticate(served, (short)2, client.next(new byte[0]));
                client.next(authenticate(served, (short)2, client.next(first.authBytes())).authBytes());
                assertTrue(client.complete());
                final StringBuilder extensions = new StringBuilder("n,,n=alice,r=abc");
                for (int i = 0; i < 2_000; i++)
                {
                    extensions.append(",ext=").append(i);
                }
                final Map<String, String> hostile = new LinkedHashMap<>();
                hostile.put("n,,n=" + "a".repeat(20_000) + ",r=abc", invalid); // no such user
                hostile.put("n,,n=" + "=2C".repeat(20_000) + ",r=abc", invalid);
                hostile.put("n,a=" + "b".repeat(20_000) + ",n=alice,r=abc",
                    "Authentication failed: Client requested an authorization id that is different from username");
                hostile.put(extensions.toString(), null); // alice, with extensions Ferrite ignores: the server-first answer
                for (final Map.Entry<String, String> message : hostile.entrySet())
                {
                    try (RawClient raw = handshake(port, "SCRAM-SHA-256"))
                    {
                        final SaslAuthenticateResponseData answer = authenticate(raw, (short)2, message.getKey().getBytes(StandardCharsets.UTF_8));
                        if (message.getValue() == null)
                        {
                            assertEquals(Errors.NONE.code(), answer.errorCode(), answer.errorMessage());
                            assertTrue(new String(answer.authBytes(), StandardCharsets.UTF_8).startsWith("r=abc"));
                            continue;
                        }
                        assertFailed(raw, answer, message.getValue());
                    }
                    // the connection authenticated before is still served, on the same network thread
                    assertEquals(port, new MetadataResponseData(new ByteBufferAccessor(served.exchange(ApiKeys.METADATA, (short)12,
                        new MetadataRequestData().setTopics(null))), (short)12).brokers().iterator().next().port());
                }
            }
            SaslScramTest.assertLogsIn(broker, "SCRAM-SHA-256", "alice", "alice-secret"); // and a new client logs in
        }
    }
}
