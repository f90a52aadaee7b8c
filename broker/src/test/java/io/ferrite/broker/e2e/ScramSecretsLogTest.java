package io.ferrite.broker.e2e;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Mac;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker in a child JVM logging at TRACE (slf4j-simple's most verbose level; a system property wins over the test
 * class path's {@code simplelogger.properties}): an AlterUserScramCredentials with a known salt and salted password,
 * answered, then the child SIGKILLed at once; a new child on the same directory (the credential is there: the answer
 * followed durability) serves a SCRAM login (raw, kafka-clients' own SCRAM client, so the proof is known), a PLAIN
 * login, a wrong SCRAM password, a wrong PLAIN password, a refused Alter. Neither child's log holds a password, the
 * salted password, the StoredKey or ServerKey, or the client's proof, in base64 or hex.
 */
class ScramSecretsLogTest
{
    private static final Pattern SASL_PORT = Pattern.compile("SASL_PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");
    private static final String SCRAM_PASSWORD = "scram-pw-Qx7";
    private static final String PLAIN_PASSWORD = "plain-pw-Zk4";

    @TempDir
    Path dir;

    private ServerCommand.Running start() throws Exception
    {
        final Path data = dir.resolve("data");
        return ServerCommand.start(dir, Map.of("JAVA_TOOL_OPTIONS", "-Dorg.slf4j.simpleLogger.defaultLogLevel=trace"),
            "--override", "log.dir=" + data,
            "--override", "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
            "--override", "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256",
            "--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                + "user_carol=\"" + PLAIN_PASSWORD + "\";",
            "--override", "connection.failed.authentication.delay.ms=100");
    }

    private static int saslPort(final ServerCommand.Running server)
    {
        final Matcher m = SASL_PORT.matcher(server.listening());
        assertTrue(m.find(), server.listening());
        return Integer.parseInt(m.group(1));
    }

    private static byte[] hmac(final byte[] key, final byte[] data) throws Exception
    {
        final Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(key, "HmacSHA256"));
        return mac.doFinal(data);
    }

    @Test
    void noSecretReachesALogLineAndAnAnsweredAlterSurvivesSigkill() throws Exception
    {
        final byte[] salt = "a-known-salt-of-alice".getBytes(StandardCharsets.US_ASCII);
        final byte[] saltedPassword = SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
            .generateSecret(new PBEKeySpec(SCRAM_PASSWORD.toCharArray(), salt, 4096, 256)).getEncoded();
        final byte[] storedKey = MessageDigest.getInstance("SHA-256").digest(hmac(saltedPassword, "Client Key".getBytes(StandardCharsets.US_ASCII)));
        final byte[] serverKey = hmac(saltedPassword, "Server Key".getBytes(StandardCharsets.US_ASCII));
        final List<String> secrets = new ArrayList<>(List.of(SCRAM_PASSWORD, PLAIN_PASSWORD, "wrong-scram-pw", "wrong-plain-pw", "refused-pw"));
        for (final byte[] secret : List.of(saltedPassword, storedKey, serverKey))
        {
            secrets.addAll(encodings(secret));
        }

        final ServerCommand.Running first = start();
        try (RawClient raw = new RawClient(first.port()))
        {
            final AlterUserScramCredentialsResponseData altered = new AlterUserScramCredentialsResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, (short)0, new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                    new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName("alice").setMechanism((byte)1).setIterations(4096)
                        .setSalt(salt).setSaltedPassword(saltedPassword.clone()))))), (short)0);
            assertEquals(Errors.NONE.code(), altered.results().get(0).errorCode());
        }
        first.process().destroyForcibly(); // SIGKILL right after the answer
        first.process().waitFor(30, TimeUnit.SECONDS);
        assertEquals(137, first.process().exitValue(), "killed");

        final ServerCommand.Running second = start();
        try
        {
            final int port = saslPort(second);
            try (RawClient raw = new RawClient(port))
            {
                raw.exchange(ApiKeys.SASL_HANDSHAKE, (short)1, new SaslHandshakeRequestData().setMechanism("SCRAM-SHA-256"));
                final KafkaScramClient client = new KafkaScramClient("SCRAM-SHA-256", "alice", SCRAM_PASSWORD);
                final SaslAuthenticateResponseData serverFirst = authenticate(raw, client.next(new byte[0]));
                assertEquals(Errors.NONE.code(), serverFirst.errorCode(), "the credential answered before the SIGKILL is there");
                final byte[] clientFinal = client.next(serverFirst.authBytes());
                final String text = new String(clientFinal, StandardCharsets.UTF_8);
                secrets.addAll(encodings(Base64.getDecoder().decode(text.substring(text.indexOf(",p=") + 3))));
                final SaslAuthenticateResponseData serverFinal = authenticate(raw, clientFinal);
                assertEquals(Errors.NONE.code(), serverFinal.errorCode(), serverFinal.errorMessage());
                client.next(serverFinal.authBytes());
                assertTrue(client.complete());
            }
            try (Admin plain = Admin.create(SaslPlainTest.withTimeouts(sasl(port, "PLAIN", jaas("plain.PlainLoginModule", "carol", PLAIN_PASSWORD)))))
            {
                assertEquals(1, plain.describeCluster().nodes().get(30, TimeUnit.SECONDS).size());
            }
            assertRefused(port, "SCRAM-SHA-256", jaas("scram.ScramLoginModule", "alice", "wrong-scram-pw"));
            assertRefused(port, "PLAIN", jaas("plain.PlainLoginModule", "carol", "wrong-plain-pw"));
            try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + second.port())))
            {
                // a user named twice: refused (Kafka's DUPLICATE_RESOURCE), the request's salted passwords not kept
                final ExecutionException refused = assertThrows(ExecutionException.class, () -> admin.alterUserScramCredentials(List.of(
                    new UserScramCredentialUpsertion("bob", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "refused-pw"),
                    new UserScramCredentialUpsertion("bob", new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), "refused-pw")))
                    .all().get(30, TimeUnit.SECONDS));
                assertInstanceOf(org.apache.kafka.common.errors.DuplicateResourceException.class, refused.getCause());
            }
        }
        finally
        {
            second.process().destroy();
            second.process().waitFor(30, TimeUnit.SECONDS);
        }
        final String log = first.stderr() + second.stderr();
        assertTrue(log.contains("DEBUG") || log.contains("TRACE"), "the children logged below INFO:\n" + log);
        for (final String secret : secrets)
        {
            assertFalse(log.contains(secret), "a secret in the log: " + secret);
        }
    }

    private static List<String> encodings(final byte[] secret)
    {
        final String hex = HexFormat.of().formatHex(secret);
        final String base64 = Base64.getEncoder().encodeToString(secret);
        return List.of(base64, base64.replace("=", ""), hex, hex.toUpperCase(java.util.Locale.ROOT), java.util.Arrays.toString(secret));
    }

    private static SaslAuthenticateResponseData authenticate(final RawClient raw, final byte[] token) throws Exception
    {
        return new SaslAuthenticateResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.SASL_AUTHENTICATE, (short)2,
            new SaslAuthenticateRequestData().setAuthBytes(token))), (short)2);
    }

    private static void assertRefused(final int port, final String mechanism, final String jaas)
    {
        try (Admin admin = Admin.create(SaslPlainTest.withTimeouts(sasl(port, mechanism, jaas))))
        {
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS));
            assertInstanceOf(SaslAuthenticationException.class, ex.getCause(), mechanism);
        }
    }

    private static Map<String, Object> sasl(final int port, final String mechanism, final String jaas)
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + port);
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, mechanism);
        c.put(SaslConfigs.SASL_JAAS_CONFIG, jaas);
        return c;
    }

    private static String jaas(final String module, final String user, final String password)
    {
        return "org.apache.kafka.common.security." + module + " required username=\"" + user + "\" password=\"" + password + "\";";
    }
}
