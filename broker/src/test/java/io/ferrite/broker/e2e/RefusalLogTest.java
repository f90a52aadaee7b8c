package io.ferrite.broker.e2e;

import io.ferrite.broker.ClosedByBroker;
import io.ferrite.broker.TestCertificates;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the broker logs when it refuses a connection on a secured listener (tls review M5): a child broker logging at
 * TRACE (everything it would ever log) with SSL and SASL_SSL listeners refuses a wrong PLAIN password, an unknown user, a
 * wrong SCRAM-SHA-256 password (raw, so its proof is known), TLS garbage and a Kafka request in plaintext on the SSL
 * port. Each refused connection is one INFO line naming it, Kafka 4.4's "Failed authentication with <client> (<why>)"
 * (tls review 1, M3: not a WARN, as Kafka's Selector), and a few lines of any level at most (never one per byte: the
 * garbage is one TLS record header declaring 2 995 bytes); no WARN line after the start. No line, at any level, holds a
 * password (right or wrong), the key store's password, the SCRAM user's salted password, StoredKey or ServerKey, the
 * wrong password's salted password, or the client's proof, as text, base64 or hex.
 */
class RefusalLogTest
{
    private static final String PLAIN_PASSWORD = "plain-pw-Lm3";
    private static final String SCRAM_PASSWORD = "scram-pw-Rt8";
    private static final Pattern LINE = Pattern.compile("(?m)^.*$");

    @TempDir
    Path dir;

    @Test
    void oneKafkaInfoLinePerRefusedConnectionAndNoSecretInAnyLine() throws Exception
    {
        final TestCertificates certs = TestCertificates.shared();
        final ServerCommand.Running server = ServerCommand.start(dir, Map.of("JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.defaultLogLevel=trace"),
            "--override", "log.dir=" + dir.resolve("data"),
            "--override", "listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
            "--override", "ssl.keystore.type=PKCS12",
            "--override", "ssl.keystore.location=" + certs.store("broker"),
            "--override", "ssl.keystore.password=" + TestCertificates.PASSWORD,
            "--override", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
            "--override", "listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "user_carol=\"" + PLAIN_PASSWORD + "\";",
            "--override", "connection.failed.authentication.delay.ms=100",
            "--override", "num.network.threads=1");
        final List<String> secrets = new ArrayList<>(List.of(PLAIN_PASSWORD, SCRAM_PASSWORD, TestCertificates.PASSWORD, "wrong-plain-pw",
            "unknown-user-pw", "wrong-scram-pw"));
        final Map<String, Integer> refused = new LinkedHashMap<>(); // what, the client's port
        String startLog;
        try
        {
            final int ssl = port(server, "SSL");
            final int saslSsl = port(server, "SASL_SSL");
            final byte[] salt = "a-salt-for-alice".getBytes(StandardCharsets.US_ASCII);
            final byte[] salted = saltedPassword(SCRAM_PASSWORD, salt);
            try (RawClient raw = new RawClient(server.port()))
            {
                final AlterUserScramCredentialsResponseData altered = new AlterUserScramCredentialsResponseData(new ByteBufferAccessor(
                    raw.exchange(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, (short)0, new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                        new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName("alice").setMechanism((byte)1)
                            .setIterations(4096).setSalt(salt).setSaltedPassword(salted.clone()))))), (short)0);
                assertEquals(0, altered.results().get(0).errorCode());
            }
            secrets.addAll(encodings(salted));
            secrets.addAll(encodings(MessageDigest.getInstance("SHA-256").digest(hmac(salted, "Client Key"))));
            secrets.addAll(encodings(hmac(salted, "Server Key")));
            secrets.addAll(encodings(saltedPassword("wrong-scram-pw", salt)));
            startLog = server.stderr();

            refused.put("wrong PLAIN password", plainRefused(saslSsl, "carol", "wrong-plain-pw"));
            refused.put("unknown user", plainRefused(saslSsl, "nobody", "unknown-user-pw"));
            try (Socket socket = UnauthenticatedTlsCostTest.tlsSocket(saslSsl))
            {
                final RawClient client = new RawClient(socket);
                client.exchange(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256"));
                final KafkaScramClient scram = new KafkaScramClient("SCRAM-SHA-256", "alice", "wrong-scram-pw");
                final SaslAuthenticateResponseData first = authenticate(client, scram.next(new byte[0]));
                assertEquals(0, first.errorCode(), first.errorMessage());
                final byte[] clientFinal = scram.next(first.authBytes());
                final String text = new String(clientFinal, StandardCharsets.UTF_8);
                secrets.addAll(encodings(Base64.getDecoder().decode(text.substring(text.indexOf(",p=") + 3))));
                assertEquals(58, authenticate(client, clientFinal).errorCode(), "SASL_AUTHENTICATION_FAILED");
                ClosedByBroker.assertClosedByBroker(socket);
                refused.put("wrong SCRAM password", socket.getLocalPort());
            }
            try (Socket socket = new Socket("127.0.0.1", ssl))
            {
                socket.setSoTimeout(30_000);
                final byte[] garbage = new byte[3_000];
                new Random(46).nextBytes(garbage);
                garbage[0] = 0x16; // a handshake record's header, declaring the rest
                garbage[1] = 3;
                garbage[2] = 3;
                garbage[3] = (byte)((garbage.length - 5) >> 8);
                garbage[4] = (byte)(garbage.length - 5);
                socket.getOutputStream().write(garbage);
                ClosedByBroker.assertClosedByBroker(socket);
                refused.put("TLS garbage", socket.getLocalPort());
            }
            try (Socket socket = new Socket("127.0.0.1", ssl))
            {
                socket.setSoTimeout(30_000);
                final ByteBuffer request = RawClient.frame(ApiKeys.API_VERSIONS, (short)3, new ApiVersionsRequestData(), 1);
                socket.getOutputStream().write(request.array(), 0, request.limit());
                ClosedByBroker.assertClosedByBroker(socket);
                refused.put("plaintext on the TLS port", socket.getLocalPort());
            }
        }
        finally
        {
            server.stop();
        }
        final String log = server.stderr();
        assertTrue(log.contains(" DEBUG ") || log.contains(" TRACE "), "the child logged below INFO");
        final String afterStart = log.substring(startLog.length());
        final List<String> warnings = lines(afterStart, " WARN ");
        final List<String> failed = lines(afterStart, " INFO ").stream().filter(l -> l.contains("Failed authentication with /127.0.0.1:")).toList();
        for (final Map.Entry<String, Integer> r : refused.entrySet())
        {
            final List<String> about = lines(afterStart, "127.0.0.1:" + r.getValue());
            System.out.println(r.getKey() + ": " + about);
            assertEquals(1, about.stream().filter(l -> l.contains(" INFO ") && l.contains("Failed authentication with /127.0.0.1:")).count(),
                r.getKey() + ": one INFO line, Kafka's: " + about);
            assertTrue(about.size() <= 3, r.getKey() + ": a few lines at most: " + about);
        }
        assertEquals(refused.size(), failed.size(), "the failed-authentication lines are the refusals':\n" + String.join("\n", failed));
        assertEquals(List.of(), warnings, "no WARN line after the start");
        for (final String secret : secrets)
        {
            assertFalse(log.contains(secret), "a secret in the log: " + secret);
        }
    }

    /** A PLAIN login of {@code user} with {@code password} over TLS, refused and closed: its client's port. */
    private static int plainRefused(final int port, final String user, final String password) throws Exception
    {
        try (Socket socket = UnauthenticatedTlsCostTest.tlsSocket(port))
        {
            final SaslAuthenticateResponseData answer = UnauthenticatedTlsCostTest.plain(new RawClient(socket), user, password);
            assertEquals(58, answer.errorCode(), "SASL_AUTHENTICATION_FAILED");
            assertEquals("Authentication failed: Invalid username or password", answer.errorMessage());
            ClosedByBroker.assertClosedByBroker(socket);
            return socket.getLocalPort();
        }
    }

    private static SaslAuthenticateResponseData authenticate(final RawClient client, final byte[] token) throws Exception
    {
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(client.exchange(ApiKeys.SASL_AUTHENTICATE, (short)2,
            new SaslAuthenticateRequestData().setAuthBytes(token))), (short)2);
    }

    private static int port(final ServerCommand.Running server, final String listener)
    {
        final Matcher m = Pattern.compile("(?<![A-Z_])" + listener + "://127\\.0\\.0\\.1:(\\d+)").matcher(server.listening());
        assertTrue(m.find(), server.listening());
        return Integer.parseInt(m.group(1));
    }

    /** The lines of {@code log} that hold {@code containing} (not followed by a digit: a port is not a longer one's start). */
    private static List<String> lines(final String log, final String containing)
    {
        final Pattern wanted = Pattern.compile(Pattern.quote(containing) + "(?!\\d)");
        final List<String> found = new ArrayList<>();
        final Matcher m = LINE.matcher(log);
        while (m.find())
        {
            if (wanted.matcher(m.group()).find())
            {
                found.add(m.group());
            }
        }
        return found;
    }

    private static byte[] saltedPassword(final String password, final byte[] salt) throws Exception
    {
        return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256").generateSecret(new PBEKeySpec(password.toCharArray(), salt, 4096, 256))
            .getEncoded();
    }

    private static byte[] hmac(final byte[] key, final String data) throws Exception
    {
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(data.getBytes(StandardCharsets.US_ASCII));
    }

    private static List<String> encodings(final byte[] secret)
    {
        final String hex = HexFormat.of().formatHex(secret);
        final String base64 = Base64.getEncoder().encodeToString(secret);
        return List.of(base64, base64.replace("=", ""), hex, hex.toUpperCase(Locale.ROOT), java.util.Arrays.toString(secret));
    }
}
