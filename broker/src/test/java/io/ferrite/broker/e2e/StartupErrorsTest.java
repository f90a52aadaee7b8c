package io.ferrite.broker.e2e;

import io.ferrite.broker.topic.KafkaImport;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * What a user sees when a start fails through their own doing, with the server started as
 * {@code bin/ferrite-server} starts it: one line on standard error naming the setting or file, no
 * stack trace, and a non-zero exit (2 for a configuration that is wrong, 1 for a machine or data
 * directory that does not let the broker start). Also the other side: a Kafka property Ferrite does
 * not know only warns, as in Kafka, and the broker durability property really takes effect.
 */
class StartupErrorsTest
{
    private static final int CONFIG_ERROR = 2;
    private static final int START_ERROR = 1;

    @TempDir
    Path dir;

    private String[] args(final String... extra)
    {
        final String[] base = {"--override", "log.dir=" + dir.resolve("data"), "--override", "listeners=PLAINTEXT://127.0.0.1:0"};
        final String[] all = new String[base.length + extra.length];
        System.arraycopy(base, 0, all, 0, base.length);
        System.arraycopy(extra, 0, all, base.length, extra.length);
        return all;
    }

    /** The start was refused with one line containing every one of {@code expected}, and no stack trace. */
    private static void assertOneLine(final ServerCommand.Ended ended, final int exit, final String... expected)
    {
        final List<String> lines = ended.stderrLines();
        assertFalse(ended.stdout().stream().anyMatch(l -> l.contains("Ferrite listening")), "must not start: " + ended);
        assertEquals(exit, ended.exit(), "exit status; stderr: " + ended.stderr());
        assertEquals(1, lines.size(), "one line on stderr, got:\n" + ended.stderr());
        assertFalse(ended.stderr().contains("\tat ") || ended.stderr().contains("Exception in thread"), "no stack trace:\n" + ended.stderr());
        for (final String e : expected)
        {
            assertTrue(lines.get(0).contains(e), "the line names " + e + ": " + lines.get(0));
        }
    }

    @Test
    void topicDurabilityNameAtBrokerLevelIsRefusedPointingToTheBrokerName() throws Exception
    {
        final ServerCommand.Ended ended = ServerCommand.runToEnd(dir, args("--override", "ferrite.durability=fsync"));
        assertOneLine(ended, CONFIG_ERROR, "ferrite.durability", "ferrite.log.durability");
    }

    @Test
    void misspelledFerritePropertyIsRefusedWithTheLikelyName() throws Exception
    {
        ServerCommand.Ended ended = ServerCommand.runToEnd(dir, args("--override", "ferrite.log.thread=2"));
        assertOneLine(ended, CONFIG_ERROR, "ferrite.log.thread", "ferrite.log.threads");

        final Path config = dir.resolve("server.properties");
        Files.writeString(config, "node.id=1\nferrite.idle.stratgy=park\n");
        ended = ServerCommand.runToEnd(dir, args("--config", config.toString()));
        assertOneLine(ended, CONFIG_ERROR, "ferrite.idle.stratgy", "ferrite.idle.strategy");

        ended = ServerCommand.runToEnd(dir, args("--override", "ferrite.nothing.like.it=1"));
        assertOneLine(ended, CONFIG_ERROR, "ferrite.nothing.like.it", "docs/configuration.md");
    }

    /** The broker's test class path has replication-lite's classes but not its optional Kafka jars. */
    @Test
    void clusterSettingsWithoutKafkasJarsAreRefusedNamingWhatIsMissing() throws Exception
    {
        final ServerCommand.Ended ended = ServerCommand.runToEnd(dir, args("--override", "process.roles=broker,controller",
            "--override", "controller.quorum.voters=1@127.0.0.1:19093"));
        assertOneLine(ended, START_ERROR, "cluster mode", "kafka.server.KafkaConfig", "replication-lite/target/cluster.classpath");
    }

    @Test
    void kafkaPropertyFerriteDoesNotKnowOnlyWarns() throws Exception
    {
        final ServerCommand.Running server = ServerCommand.start(dir, args("--override", "num.io.threads=8"));
        try
        {
            assertTrue(server.stderr().contains("num.io.threads"), "a warning names the property: " + server.stderr());
        }
        finally
        {
            assertEquals(0, server.stop(), "clean exit after SIGTERM");
        }
    }

    @Test
    void theReadmesSecuredStartWarnsOfNothingAndNamesEveryListener() throws Exception
    {
        final ServerCommand.Running server = ServerCommand.start(dir, args("--override",
            "listeners=PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0", "--override", "sasl.enabled.mechanisms=PLAIN",
            "--override", "listener.name.sasl_plaintext.plain.sasl.jaas.config="
                + "org.apache.kafka.common.security.plain.PlainLoginModule required user_alice=\"alice-secret\";",
            "--override", "listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN",
            "--override", "listener.name.sasl_plaintext.ssl.keystore.location=/nowhere"));
        try
        {
            final String stderr = server.stderr();
            assertFalse(stderr.contains("jaas.config") || stderr.contains("sasl.enabled.mechanisms"),
                "the per-listener settings Ferrite reads are known names: " + stderr);
            assertTrue(stderr.contains("ignoring unknown property listener.name.sasl_plaintext.ssl.keystore.location"),
                "one it does not read still warns: " + stderr);
            assertFalse(stderr.contains("alice-secret"), stderr);
            assertTrue(server.listening().matches("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:" + server.port()
                + ",SASL_PLAINTEXT://127\\.0\\.0\\.1:[1-9][0-9]* \\(node .*"), "every listener with its bound port: " + server.listening());
        }
        finally
        {
            assertEquals(0, server.stop(), "clean exit after SIGTERM");
        }
    }

    @Test
    void brokerDurabilityPropertyStartsInFsyncMode() throws Exception
    {
        final ServerCommand.Running server = ServerCommand.start(dir, args("--override", "ferrite.log.durability=fsync"));
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + server.port())))
        {
            admin.createTopics(List.of(new NewTopic("durable", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            TopicsPublished.await(admin, "durable"); // answered once journaled, published once its files are made
            final ConfigResource topic = new ConfigResource(ConfigResource.Type.TOPIC, "durable");
            final ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER, "1");
            final Map<ConfigResource, Config> configs = admin.describeConfigs(List.of(topic, broker)).all().get(20, TimeUnit.SECONDS);
            final ConfigEntry topicDurability = configs.get(topic).get("ferrite.durability");
            assertEquals("fsync", topicDurability.value(), "the topic's effective durability");
            assertEquals(ConfigEntry.ConfigSource.STATIC_BROKER_CONFIG, topicDurability.source());
            assertEquals("fsync", configs.get(broker).get("ferrite.log.durability").value());
        }
        finally
        {
            assertEquals(0, server.stop(), "clean exit after SIGTERM");
        }
    }

    @Test
    void invalidValuesNameTheProperty() throws Exception
    {
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "num.network.threads=many")), CONFIG_ERROR,
            "num.network.threads", "many");
        // a broker default of a topic config is named as the user wrote it, not as the topic config
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "ferrite.log.durability=sometimes")), CONFIG_ERROR,
            "ferrite.log.durability", "sometimes", "flush, fsync");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "listeners=PLAINTEXT://no such host:9092")), CONFIG_ERROR,
            "listeners", "no such host");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "advertised.listeners=PLAINTEXT://somewhere")), CONFIG_ERROR,
            "advertised.listeners", "PLAINTEXT://somewhere");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "nothing-to-override")), CONFIG_ERROR,
            "--override", "nothing-to-override");
    }

    /**
     * {@code --help} and {@code --version} (and {@code -h}, {@code -V}) still reach picocli through main, which reads
     * the plain options itself (FerriteServer.plainOptions): printed on standard output, exit 0, nothing started.
     */
    @Test
    void helpAndVersionArePrintedThroughMain() throws Exception
    {
        for (final String help : List.of("--help", "-h"))
        {
            final ServerCommand.Ended ended = ServerCommand.runToEnd(dir, args(help));
            assertEquals(0, ended.exit(), help + ": exit status; stderr: " + ended.stderr());
            assertFalse(ended.stdout().stream().anyMatch(l -> l.contains("Ferrite listening")), help + " must not start: " + ended);
            assertTrue(ended.stdout().get(0).startsWith("Usage: ferrite-server"), help + ": " + ended.stdout());
            assertTrue(ended.stdout().stream().anyMatch(l -> l.contains("--override=KEY=VALUE")), help + ": " + ended.stdout());
            assertEquals(List.of(), ended.stderrLines(), help + ": nothing on stderr");
        }
        for (final String version : List.of("--version", "-V"))
        {
            final ServerCommand.Ended ended = ServerCommand.runToEnd(dir, args(version));
            assertEquals(0, ended.exit(), version + ": exit status; stderr: " + ended.stderr());
            assertEquals(List.of("Ferrite 0.1.0"), ended.stdout(), version);
            assertEquals(List.of(), ended.stderrLines(), version + ": nothing on stderr");
        }
    }

    @Test
    void aReplicaSocketTimeoutBelowTheFetchWaitIsRefusedAsKafkaDoes() throws Exception
    {
        // every long poll on a quiet partition would time out and reconnect: Kafka 4.4's KafkaConfig refuses it
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "replica.socket.timeout.ms=300")), CONFIG_ERROR,
            "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms", "300 < 500");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "replica.fetch.wait.max.ms=40000")), CONFIG_ERROR,
            "replica.socket.timeout.ms should always be at least replica.fetch.wait.max.ms", "30000 < 40000");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "replica.lag.time.max.ms=400")), CONFIG_ERROR,
            "replica.fetch.wait.max.ms should always be less than or equal to replica.lag.time.max.ms");
    }

    @Test
    void mistypedOption() throws Exception
    {
        // picocli's own answer is the message, then its suggestions on a line of their own
        assertOneLine(ServerCommand.runToEnd(dir, args("--confg", "server.properties")), CONFIG_ERROR, "--confg", "--help");
    }

    @Test
    void missingConfigFile() throws Exception
    {
        final Path missing = dir.resolve("nowhere.properties");
        assertOneLine(ServerCommand.runToEnd(dir, args("--config", missing.toString())), CONFIG_ERROR, missing.toString());
    }

    @Test
    void portInUse() throws Exception
    {
        try (ServerSocket taken = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()))
        {
            final String listener = "PLAINTEXT://127.0.0.1:" + taken.getLocalPort();
            assertOneLine(ServerCommand.runToEnd(dir, args("--override", "listeners=" + listener)), START_ERROR,
                "listeners", listener, "in use");
        }
    }

    @Test
    void dataDirectoryInUseByAnotherBroker() throws Exception
    {
        final ServerCommand.Running first = ServerCommand.start(dir, args());
        try
        {
            assertOneLine(ServerCommand.runToEnd(dir, args()), START_ERROR, "log.dir", dir.resolve("data").toString(), "in use");
        }
        finally
        {
            assertEquals(0, first.stop(), "the first broker is unharmed and stops cleanly");
        }
    }

    @Test
    void dataDirectoryThatIsAFile() throws Exception
    {
        final Path file = Files.writeString(dir.resolve("a-file"), "not a directory");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "log.dir=" + file)), START_ERROR,
            "log.dir", file.toString(), "not a directory");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "log.dirs=" + file.resolve("below"))), START_ERROR,
            "log.dirs", file.resolve("below").toString());
    }

    @Test
    void dataDirectoryThatIsNotWritable() throws Exception
    {
        // root writes through permission bits, so as root the directory is one of sysfs, where no one
        // may create a file; the test checks its premise before it relies on it
        final boolean root = "root".equals(System.getProperty("user.name"));
        final Path readOnly = root ? Path.of("/sys/kernel") : Files.createDirectory(dir.resolve("read-only"));
        if (!root)
        {
            assertTrue(readOnly.toFile().setWritable(false, false));
        }
        boolean refused;
        try
        {
            Files.delete(Files.createTempFile(readOnly, "probe", null));
            refused = false;
        }
        catch (final java.io.IOException ex)
        {
            refused = true;
        }
        assumeTrue(refused, readOnly + " is writable here, so it cannot stand for a directory that is not");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "log.dir=" + readOnly)), START_ERROR,
            "log.dir", readOnly.toString(), "not writable");
    }

    @Test
    void nodeIdThatDoesNotMatchMetaProperties() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data"));
        Files.writeString(data.resolve("meta.properties"), "version=1\nnode.id=5\ncluster.id=AAAAAAAAAAAAAAAAAAAAAA\n");
        assertOneLine(ServerCommand.runToEnd(dir, args("--override", "node.id=1")), START_ERROR,
            data.resolve("meta.properties").toString(), "node.id", "5", "1");
    }

    @Test
    void garbageMetaProperties() throws Exception
    {
        final Path data = Files.createDirectories(dir.resolve("data"));
        final Path meta = data.resolve("meta.properties");
        Files.writeString(meta, "version=1\nnode.id=one\n");
        assertOneLine(ServerCommand.runToEnd(dir, args()), START_ERROR, meta.toString(), "node.id", "one");

        Files.write(meta, new byte[] {(byte)0xC3, 0x28, (byte)0xFF, 0x00, (byte)0xFE, 0x0A});
        assertOneLine(ServerCommand.runToEnd(dir, args()), START_ERROR, meta.toString());

        Files.writeString(meta, "node.id=\\u12G4\n"); // Properties.load refuses a malformed escape
        assertOneLine(ServerCommand.runToEnd(dir, args()), START_ERROR, meta.toString());
    }

    /**
     * A partition directory's {@code partition.metadata} that is not one (damage at rest): Kafka 4.4 refuses to start
     * ("Error while reading partition metadata file ..."), and so does Ferrite, with one line naming the file.
     */
    @Test
    void garbagePartitionMetadata() throws Exception
    {
        final Path partition = Files.createDirectories(dir.resolve("data").resolve("t-0"));
        final Path metadata = partition.resolve("partition.metadata");
        // a data directory Ferrite started on before: a partition and no Ferrite state would be a first start on Kafka's data
        Files.createFile(dir.resolve("data").resolve(KafkaImport.MARKER));
        final String[] args = args();
        Files.write(metadata, new byte[] {(byte)0xC3, 0x28, (byte)0xFF, 0x00, (byte)0xFE, 0x0A});
        assertOneLine(ServerCommand.runToEnd(dir, args), START_ERROR, metadata.toString(), "partition.metadata", "UTF-8");

        Files.writeString(metadata, "version: 0\ntopic_id: not*base64\n");
        assertOneLine(ServerCommand.runToEnd(dir, args), START_ERROR, metadata.toString(), "topic_id", "not*base64");

        Files.writeString(metadata, "version: 0\ntopic_id: AAAAAAAAAAAA\n"); // 9 bytes, not a UUID's 16
        assertOneLine(ServerCommand.runToEnd(dir, args), START_ERROR, metadata.toString(), "topic_id", "AAAAAAAAAAAA");
    }
}
