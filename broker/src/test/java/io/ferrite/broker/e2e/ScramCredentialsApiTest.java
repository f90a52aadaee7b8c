package io.ferrite.broker.e2e;

import io.ferrite.broker.StartupException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeUserScramCredentialsResult;
import org.apache.kafka.clients.admin.ScramCredentialInfo;
import org.apache.kafka.clients.admin.ScramMechanism;
import org.apache.kafka.clients.admin.UserScramCredentialAlteration;
import org.apache.kafka.clients.admin.UserScramCredentialDeletion;
import org.apache.kafka.clients.admin.UserScramCredentialUpsertion;
import org.apache.kafka.common.errors.DuplicateResourceException;
import org.apache.kafka.common.errors.ResourceNotFoundException;
import org.apache.kafka.common.errors.UnacceptableCredentialException;
import org.apache.kafka.common.message.AlterUserScramCredentialsRequestData;
import org.apache.kafka.common.message.AlterUserScramCredentialsResponseData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsRequestData;
import org.apache.kafka.common.message.DescribeUserScramCredentialsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DescribeUserScramCredentials and AlterUserScramCredentials as Kafka 4.4 answers them (its controller's and broker's
 * checks and messages, read from the 4.4 jars with javap): through kafka-clients' Admin, raw with its message classes
 * for what Admin does not send, and kafka-configs.sh {@code --entity-type users}; a damaged credentials file stops the start.
 */
class ScramCredentialsApiTest
{
    @TempDir
    Path dir;

    private static UserScramCredentialUpsertion upsert(final String user, final ScramMechanism mechanism, final int iterations)
    {
        return new UserScramCredentialUpsertion(user, new ScramCredentialInfo(mechanism, iterations), user + "-secret");
    }

    private static Throwable cause(final org.apache.kafka.common.KafkaFuture<?> future)
    {
        return assertThrows(ExecutionException.class, () -> future.get(30, TimeUnit.SECONDS)).getCause();
    }

    @Test
    void describeAndAlterThroughAdminWithKafkasErrors() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            assertEquals(Map.of(), admin.describeUserScramCredentials().all().get(30, TimeUnit.SECONDS));
            admin.alterUserScramCredentials(List.<UserScramCredentialAlteration>of(upsert("alice", ScramMechanism.SCRAM_SHA_256, 4096),
                upsert("bob", ScramMechanism.SCRAM_SHA_512, 16384))).all().get(30, TimeUnit.SECONDS);
            admin.alterUserScramCredentials(List.of(upsert("alice", ScramMechanism.SCRAM_SHA_512, 8192))).all().get(30, TimeUnit.SECONDS);
            final DescribeUserScramCredentialsResult all = admin.describeUserScramCredentials();
            assertEquals(Set.of("alice", "bob"), all.users().get(30, TimeUnit.SECONDS).stream().collect(Collectors.toSet()));
            assertEquals(Set.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)),
                Set.copyOf(all.description("alice").get(30, TimeUnit.SECONDS).credentialInfos()));
            assertEquals(List.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 16384)),
                admin.describeUserScramCredentials(List.of("bob")).description("bob").get(30, TimeUnit.SECONDS).credentialInfos());
            final Throwable missing = cause(admin.describeUserScramCredentials(List.of("nobody")).description("nobody"));
            assertInstanceOf(ResourceNotFoundException.class, missing);
            assertEquals("Attempt to describe a user credential that does not exist: nobody", missing.getMessage());

            final Map<String, org.apache.kafka.common.KafkaFuture<Void>> refused = admin.alterUserScramCredentials(List.of(
                upsert("few", ScramMechanism.SCRAM_SHA_256, 4095), upsert("many", ScramMechanism.SCRAM_SHA_512, 16385),
                new UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_256),
                upsert("twice", ScramMechanism.SCRAM_SHA_256, 4096), upsert("twice", ScramMechanism.SCRAM_SHA_512, 4096),
                new UserScramCredentialDeletion("gone", ScramMechanism.SCRAM_SHA_512), upsert("gone", ScramMechanism.SCRAM_SHA_256, 4096),
                upsert("carol", ScramMechanism.SCRAM_SHA_256, 4096))).values();
            assertEquals("Too few iterations", assertInstanceOf(UnacceptableCredentialException.class, cause(refused.get("few"))).getMessage());
            assertEquals("Too many iterations", assertInstanceOf(UnacceptableCredentialException.class, cause(refused.get("many"))).getMessage());
            assertEquals("Attempt to delete a user credential that does not exist",
                assertInstanceOf(ResourceNotFoundException.class, cause(refused.get("bob"))).getMessage());
            assertEquals("A user credential cannot be altered twice in the same request",
                assertInstanceOf(DuplicateResourceException.class, cause(refused.get("twice"))).getMessage());
            // deletions are checked first (Kafka's controller): the deletion that finds nothing answers for the user
            assertInstanceOf(ResourceNotFoundException.class, cause(refused.get("gone")));
            refused.get("carol").get(30, TimeUnit.SECONDS); // the others' errors cost only their users
            assertEquals(Set.of("alice", "bob", "carol"), Set.copyOf(admin.describeUserScramCredentials().users().get(30, TimeUnit.SECONDS)));

            admin.alterUserScramCredentials(List.of(new UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_512)))
                .all().get(30, TimeUnit.SECONDS);
            assertInstanceOf(ResourceNotFoundException.class, cause(admin.describeUserScramCredentials(List.of("bob")).description("bob")));
        }
    }

    /** What Admin checks or never sends, raw: an unknown mechanism, an empty name, an empty salted password, a user named twice. */
    @Test
    void rawRequestsAdminDoesNotSend() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final ApiVersionsResponseData versions = raw.apiVersions();
            for (final ApiKeys api : List.of(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, ApiKeys.ALTER_USER_SCRAM_CREDENTIALS))
            {
                assertEquals(0, versions.apiKeys().find(api.id).minVersion(), api.name());
                assertEquals(0, versions.apiKeys().find(api.id).maxVersion(), api.name());
            }
            final AlterUserScramCredentialsRequestData alter = new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                upsertion("odd", (byte)7, new byte[32]), upsertion("", (byte)1, new byte[32]), upsertion("empty", (byte)1, new byte[0]),
                upsertion("dave", (byte)2, new byte[64])));
            final AlterUserScramCredentialsResponseData altered = new AlterUserScramCredentialsResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, (short)0, alter)), (short)0);
            final Map<String, AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult> byUser = altered.results().stream()
                .collect(Collectors.toMap(AlterUserScramCredentialsResponseData.AlterUserScramCredentialsResult::user, r -> r));
            assertEquals(4, altered.results().size());
            assertEquals("dave", altered.results().get(0).user(), "what was done first, then the errors (Kafka's order)");
            assertEquals(Errors.UNSUPPORTED_SASL_MECHANISM.code(), byUser.get("odd").errorCode());
            assertEquals("Unknown SCRAM mechanism", byUser.get("odd").errorMessage());
            assertEquals(Errors.UNACCEPTABLE_CREDENTIAL.code(), byUser.get("").errorCode());
            assertEquals("Username must not be empty", byUser.get("").errorMessage());
            assertEquals(Errors.UNKNOWN_SERVER_ERROR.code(), byUser.get("empty").errorCode(), "the JDK refuses an empty HMAC key, as Kafka's controller");
            assertNull(byUser.get("empty").errorMessage());
            assertEquals(Errors.NONE.code(), byUser.get("dave").errorCode());

            final DescribeUserScramCredentialsResponseData described = new DescribeUserScramCredentialsResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.DESCRIBE_USER_SCRAM_CREDENTIALS, (short)0, new DescribeUserScramCredentialsRequestData().setUsers(List.of(
                    new DescribeUserScramCredentialsRequestData.UserName().setName("dave"),
                    new DescribeUserScramCredentialsRequestData.UserName().setName("eve"),
                    new DescribeUserScramCredentialsRequestData.UserName().setName("eve"))))), (short)0);
            assertEquals(Errors.NONE.code(), described.errorCode());
            assertEquals(2, described.results().size());
            for (final DescribeUserScramCredentialsResponseData.DescribeUserScramCredentialsResult r : described.results())
            {
                if (r.user().equals("dave"))
                {
                    assertEquals(Errors.NONE.code(), r.errorCode());
                    assertEquals(List.of(new DescribeUserScramCredentialsResponseData.CredentialInfo().setMechanism((byte)2).setIterations(4096)),
                        r.credentialInfos());
                }
                else
                {
                    assertEquals(Errors.DUPLICATE_RESOURCE.code(), r.errorCode());
                    assertEquals("Cannot describe SCRAM credentials for the same user twice in a single request: eve", r.errorMessage());
                }
            }
        }
    }

    private static AlterUserScramCredentialsRequestData.ScramCredentialUpsertion upsertion(final String name, final byte mechanism,
        final byte[] saltedPassword)
    {
        return new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName(name).setMechanism(mechanism)
            .setIterations(4096).setSalt(new byte[] {1, 2, 3}).setSaltedPassword(saltedPassword);
    }

    /** kafka-configs.sh --entity-type users --alter: --add-config of both mechanisms, then --delete-config of one. */
    @Test
    void kafkaConfigsAddsAndDeletesUserScramCredentials() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, SaslScramTest.scramBroker()); KafkaToolSession tools = new KafkaToolSession())
        {
            // Kafka's documented two-mechanism form sends one user twice in one request, which Kafka 4.4's controller
            // refuses (checked against a real Kafka 4.4 node: the same DuplicateResourceException, nothing changed)
            KafkaTool.Run run = configs(tools, broker, "--add-config", "SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=alice-secret]");
            assertEquals(1, run.status(), run.toString());
            assertTrue(run.err().contains("DuplicateResourceException: A user credential cannot be altered twice in the same request"), run.err());
            for (final String config : List.of("SCRAM-SHA-256=[iterations=8192,password=alice-secret]", "SCRAM-SHA-512=[password=alice-secret]"))
            {
                run = configs(tools, broker, "--add-config", config);
                assertEquals(List.of("Completed updating config for user alice."), run.lines(), run.toString());
            }
            try (Admin admin = broker.plainAdmin())
            {
                assertEquals(Set.of(new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), new ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096)),
                    Set.copyOf(admin.describeUserScramCredentials(List.of("alice")).description("alice").get(30, TimeUnit.SECONDS).credentialInfos()));
            }
            SaslScramTest.assertLogsIn(broker, "SCRAM-SHA-256", "alice", "alice-secret");
            run = configs(tools, broker, "--delete-config", "SCRAM-SHA-512");
            assertEquals(List.of("Completed updating config for user alice."), run.lines(), run.toString());
            SaslScramTest.assertRefused(broker, "SCRAM-SHA-512", "alice", "alice-secret");
            SaslScramTest.assertLogsIn(broker, "SCRAM-SHA-256", "alice", "alice-secret");
        }
    }

    /** kafka-configs.sh --alter {@code args} --entity-type users --entity-name alice, in the test's child JVM of Kafka's tools. */
    private static KafkaTool.Run configs(final KafkaToolSession tools, final RunningBroker broker, final String... args) throws Exception
    {
        final List<String> command = new java.util.ArrayList<>(List.of("--bootstrap-server", broker.bootstrap(), "--alter"));
        command.addAll(List.of(args));
        command.addAll(List.of("--entity-type", "users", "--entity-name", "alice"));
        return tools.run("org.apache.kafka.tools.ConfigCommand", command.toArray(new String[0]));
    }

    @Test
    void aDamagedCredentialsFileStopsTheStartNamingTheFile() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            admin.alterUserScramCredentials(List.of(upsert("alice", ScramMechanism.SCRAM_SHA_256, 4096))).all().get(30, TimeUnit.SECONDS);
        }
        final Path file = dir.resolve("ferrite-scram-credentials");
        final byte[] bytes = Files.readAllBytes(file);
        bytes[20] ^= 1;
        Files.write(file, bytes);
        final StartupException refused = assertThrows(StartupException.class, () -> new RunningBroker(dir, Map.of()));
        assertEquals(file + ": damaged: checksum mismatch", refused.getMessage());
        Files.delete(file); // the operator's way out: the start goes on without SCRAM users
        new RunningBroker(dir, Map.of()).close();
    }

    /** Kafka 4.4 bounds no salt (javap of ScramControlManager: the request's salt goes to the record as is); the file reader takes what the writer wrote. */
    @Test
    void aLargeSaltAcceptedByAlterIsReadBackAtTheNextStart() throws Exception
    {
        final byte[] salt = new byte[2 << 20];
        new java.util.Random(7).nextBytes(salt);
        final byte[] saltedPassword = javax.crypto.SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
            .generateSecret(new javax.crypto.spec.PBEKeySpec("big-secret".toCharArray(), salt, 4096, 256)).getEncoded(); // Hi of RFC 5802
        try (RunningBroker broker = new RunningBroker(dir, SaslScramTest.scramBroker()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final AlterUserScramCredentialsRequestData alter = new AlterUserScramCredentialsRequestData().setUpsertions(List.of(
                new AlterUserScramCredentialsRequestData.ScramCredentialUpsertion().setName("big").setMechanism((byte)1).setIterations(4096)
                    .setSalt(salt).setSaltedPassword(saltedPassword)));
            final AlterUserScramCredentialsResponseData altered = new AlterUserScramCredentialsResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.ALTER_USER_SCRAM_CREDENTIALS, (short)0, alter)), (short)0);
            assertEquals(Errors.NONE.code(), altered.results().get(0).errorCode(), altered.results().get(0).errorMessage());
            broker.restart();
            SaslScramTest.assertLogsIn(broker, "SCRAM-SHA-256", "big", "big-secret");
        }
    }
}
