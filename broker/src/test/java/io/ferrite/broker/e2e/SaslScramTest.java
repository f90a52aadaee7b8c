package io.ferrite.broker.e2e;

import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.clients.admin.UserScramCredentialsDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.config.SaslConfigs;
import org.apache.kafka.common.errors.SaslAuthenticationException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static io.ferrite.broker.e2e.SaslPlainTest.concat;
import static io.ferrite.broker.e2e.SaslPlainTest.consumeAll;
import static io.ferrite.broker.e2e.SaslPlainTest.kcat;
import static io.ferrite.broker.e2e.SaslPlainTest.saslPort;
import static io.ferrite.broker.e2e.SaslPlainTest.withTimeouts;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * SASL/SCRAM-SHA-256 and -512 on a SASL_PLAINTEXT listener beside a PLAINTEXT one: users made through kafka-clients'
 * Admin (AlterUserScramCredentials), then kafka-clients 4.4's producer, consumer and Admin and librdkafka (kcat) log in
 * with them; wrong passwords, unknown users and a mechanism the user has no credential for are refused with Kafka's
 * exception and message while an authenticated client goes on; credentials survive a restart, a deleted one logs in no more.
 */
class SaslScramTest
{
    static final String INVALID = "Authentication failed during authentication due to invalid credentials with SASL mechanism ";

    /**
     * Seconds a refused kcat -L waits for metadata: librdkafka logs the authentication error at its first attempt and
     * retries until then, so a refused login costs all of it (10 s, twice, before issue 17's build work).
     */
    private static final String REFUSED_WAIT_S = "3";

    @TempDir
    Path dir;

    static Map<String, String> scramBroker()
    {
        return Map.of("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "sasl.enabled.mechanisms",
            "SCRAM-SHA-256,SCRAM-SHA-512", "connection.failed.authentication.delay.ms", "100");
    }

    /** Sets {@code user}'s credential for {@code mechanism} through the PLAINTEXT listener. */
    static void setCredential(final RunningBroker broker, final String user, final ScramMechanism mechanism, final int iterations,
        final String password) throws Exception
    {
        try (Admin admin = broker.plainAdmin())
        {
            admin.alterUserScramCredentials(List.of(new UserScramCredentialUpsertion(user, new ScramCredentialInfo(mechanism, iterations),
                password))).all().get(30, TimeUnit.SECONDS);
        }
    }

    static Map<String, Object> scram(final RunningBroker broker, final String mechanism, final String user, final String password)
        throws IOException
    {
        final Map<String, Object> c = new HashMap<>();
        c.put(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + saslPort(broker));
        c.put(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG, "SASL_PLAINTEXT");
        c.put(SaslConfigs.SASL_MECHANISM, mechanism);
        c.put(SaslConfigs.SASL_JAAS_CONFIG, "org.apache.kafka.common.security.scram.ScramLoginModule required username=\""
            + user + "\" password=\"" + password + "\";");
        return c;
    }

    @Test
    void producerConsumerAndAdminLogInWithEitherMechanism() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            setCredential(broker, "bob", ScramMechanism.SCRAM_SHA_512, 8192, "bob-secret");
            try (Admin admin = Admin.create(withTimeouts(scram(broker, "SCRAM-SHA-512", "bob", "bob-secret"))))
            {
                admin.createTopics(List.of(new NewTopic("scram", 1, (short)1))).all().get(30, TimeUnit.SECONDS);
                final Map<String, UserScramCredentialsDescription> users = admin.describeUserScramCredentials().all().get(30, TimeUnit.SECONDS);
                assertEquals(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096)), users.get("alice").credentialInfos());
                assertEquals(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)), users.get("bob").credentialInfos());
            }
            io.ferrite.testing.Await.await(() -> broker.broker.topics().topic("scram") != null, java.time.Duration.ofSeconds(30), "published");
            for (final String[] login : List.of(new String[] {"SCRAM-SHA-256", "alice", "alice-secret"},
                new String[] {"SCRAM-SHA-512", "bob", "bob-secret"}))
            {
                final Map<String, Object> producer = scram(broker, login[0], login[1], login[2]);
                producer.put(ProducerConfig.ACKS_CONFIG, "all");
                try (KafkaProducer<byte[], byte[]> p = broker.producer(producer))
                {
                    for (int i = 0; i < 5; i++)
                    {
                        p.send(new ProducerRecord<>("scram", (login[1] + i).getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                    }
                }
            }
            final List<String> read = consumeAll(broker.consumer(scram(broker, "SCRAM-SHA-256", "alice", "alice-secret")));
            assertEquals(List.of("alice0", "alice1", "alice2", "alice3", "alice4", "bob0", "bob1", "bob2", "bob3", "bob4"), read);
        }
    }

    @Test
    void wrongPasswordsUnknownUsersAndAMissingMechanismAreRefusedWithKafkasMessage() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            try (KafkaProducer<byte[], byte[]> healthy = broker.producer(scram(broker, "SCRAM-SHA-256", "alice", "alice-secret")))
            {
                healthy.send(new ProducerRecord<>("shared", "before".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
                // a wrong password fails at the proof, an unknown user (or one without a credential of that mechanism) at the first message
                for (final String[] login : List.of(new String[] {"SCRAM-SHA-256", "alice", "wrong"}, new String[] {"SCRAM-SHA-256", "mallory", "x"},
                    new String[] {"SCRAM-SHA-512", "alice", "alice-secret"}))
                {
                    assertRefused(broker, login[0], login[1], login[2]);
                }
                healthy.send(new ProducerRecord<>("shared", "after".getBytes(StandardCharsets.UTF_8))).get(30, TimeUnit.SECONDS);
            }
        }
    }

    static void assertRefused(final RunningBroker broker, final String mechanism, final String user, final String password) throws Exception
    {
        try (Admin admin = Admin.create(withTimeouts(scram(broker, mechanism, user, password))))
        {
            final ExecutionException ex = assertThrows(ExecutionException.class, () -> admin.describeCluster().nodes().get(30, TimeUnit.SECONDS));
            assertInstanceOf(SaslAuthenticationException.class, ex.getCause(), user);
            assertEquals(INVALID + mechanism, ex.getCause().getMessage());
        }
    }

    static void assertLogsIn(final RunningBroker broker, final String mechanism, final String user, final String password) throws Exception
    {
        try (Admin admin = Admin.create(withTimeouts(scram(broker, mechanism, user, password))))
        {
            assertEquals(saslPort(broker), admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).iterator().next().port());
        }
    }

    @Test
    void credentialsSurviveARestartAndADeletedOneLogsInNoMore() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_512, 4096, "alice-secret");
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            setCredential(broker, "carol", ScramMechanism.SCRAM_SHA_256, 4096, "first");
            setCredential(broker, "carol", ScramMechanism.SCRAM_SHA_256, 4096, "second"); // replaced
            broker.restart();
            assertLogsIn(broker, "SCRAM-SHA-512", "alice", "alice-secret");
            assertLogsIn(broker, "SCRAM-SHA-256", "carol", "second");
            assertRefused(broker, "SCRAM-SHA-256", "carol", "first");
            final byte[] file = Files.readAllBytes(dir.resolve("ferrite-scram-credentials"));
            for (final String password : List.of("alice-secret", "second"))
            {
                assertFalse(new String(file, StandardCharsets.ISO_8859_1).contains(password), "no password in the file");
            }
            try (Admin admin = broker.plainAdmin())
            {
                admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_512)))
                    .all().get(30, TimeUnit.SECONDS);
            }
            assertRefused(broker, "SCRAM-SHA-512", "alice", "alice-secret");
            assertLogsIn(broker, "SCRAM-SHA-256", "alice", "alice-secret");
            broker.restart();
            assertRefused(broker, "SCRAM-SHA-512", "alice", "alice-secret");
            assertLogsIn(broker, "SCRAM-SHA-256", "alice", "alice-secret");
        }
    }

    /**
     * librdkafka (kcat) with SCRAM-SHA-512 and -256. librdkafka before 2.6.1 puts the client's nonce twice in its
     * client-final message (confluentinc/librdkafka#4895); Kafka 4.4's ScramSaslServer compares the nonce with equals
     * (javap: 3.8.1 to 3.9 took a suffix), so Kafka 4.4 refuses those clients — and so does Ferrite, with Kafka's
     * message. A librdkafka from 2.6.1 on produces and consumes. Which one runs here decides what is expected.
     */
    @Test
    void kcatOverScramAsKafka44AnswersItsLibrdkafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, scramBroker()))
        {
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_512, 4096, "alice-secret");
            setCredential(broker, "alice", ScramMechanism.SCRAM_SHA_256, 4096, "alice-secret");
            final String b = "127.0.0.1:" + saslPort(broker);
            final java.util.regex.Matcher version = java.util.regex.Pattern.compile("librdkafka (\\d+)\\.(\\d+)\\.(\\d+)")
                .matcher(kcat(null, "kcat", "-V"));
            assertTrue(version.find(), "kcat -V names its librdkafka");
            final int v = Integer.parseInt(version.group(1)) * 10_000 + Integer.parseInt(version.group(2)) * 100 + Integer.parseInt(version.group(3));
            final String[] sha512 = auth("SCRAM-SHA-512", "alice-secret");
            if (v < 20601)
            {
                for (final String[] login : List.of(sha512, auth("SCRAM-SHA-256", "alice-secret")))
                {
                    final AssertionError refused = assertThrows(AssertionError.class,
                        () -> kcat(null, concat(new String[] {"kcat", "-b", b, "-L", "-m", REFUSED_WAIT_S}, login)));
                    assertTrue(refused.getMessage().contains("SASL authentication error: " + INVALID + login[3].substring("sasl.mechanisms=".length())),
                        refused.getMessage());
                }
                assertLogsIn(broker, "SCRAM-SHA-512", "alice", "alice-secret"); // the broker serves on
                return;
            }
            kcat("k0:v0\nk1:v1\n", concat(new String[] {"kcat", "-b", b, "-P", "-t", "cat", "-K:"}, sha512));
            kcat("k2:v2\n", concat(new String[] {"kcat", "-b", b, "-P", "-t", "cat", "-K:"}, auth("SCRAM-SHA-256", "alice-secret")));
            final String consumed = kcat(null, concat(new String[] {"kcat", "-b", b, "-C", "-t", "cat", "-e", "-f", "%k=%s\\n"}, sha512));
            final List<String> lines = new ArrayList<>();
            consumed.strip().lines().filter(l -> !l.startsWith("% ")).forEach(lines::add);
            assertEquals(List.of("k0=v0", "k1=v1", "k2=v2"), lines, consumed);
            final AssertionError refused = assertThrows(AssertionError.class,
                () -> kcat(null, concat(new String[] {"kcat", "-b", b, "-L", "-m", REFUSED_WAIT_S}, auth("SCRAM-SHA-512", "wrong"))));
            assertTrue(refused.getMessage().contains(INVALID + "SCRAM-SHA-512"), refused.getMessage());
        }
    }

    private static String[] auth(final String mechanism, final String password)
    {
        return new String[] {"-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=" + mechanism, "-X", "sasl.username=alice",
            "-X", "sasl.password=" + password};
    }
}
