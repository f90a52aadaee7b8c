package io.ferrite.testing;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A broker in a child JVM on loopback, as a user runs it: Apache Kafka 4.4 (single-node KRaft,
 * storage formatted with {@code kafka.tools.StorageTool} first, from {@code target/kafka.classpath},
 * which this module's build writes) or Ferrite (its runnable jar, {@code broker/target/ferrite-broker.jar}).
 * Its output goes to {@code broker.log} in its directory. {@link #restart} stops it cleanly and starts it again on the
 * same directory, configuration and port (no new format).
 */
public final class BrokerNode implements AutoCloseable
{
    public enum Kind
    {
        KAFKA, FERRITE
    }

    private static final Duration START_DEADLINE = Duration.ofSeconds(120);

    public final Kind kind;
    public final String name;
    private final Path dir;
    private final int port;
    private final int proxiedPort;
    private final List<String> command;
    private final Process process;

    private BrokerNode(final Kind kind, final String name, final Path dir, final int port, final int proxiedPort,
        final List<String> command, final Process process)
    {
        this.kind = kind;
        this.name = name;
        this.dir = dir;
        this.port = port;
        this.proxiedPort = proxiedPort;
        this.command = List.copyOf(command);
        this.process = process;
    }

    public String bootstrap()
    {
        return "127.0.0.1:" + port;
    }

    /** The port of the listener a proxy in front of the broker targets ({@link #spawnWithProxiedListener}), or -1. */
    public int proxiedPort()
    {
        return proxiedPort;
    }

    /** Client properties that reach this broker. */
    public Map<String, Object> clientConfig()
    {
        return Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
    }

    /** Spawns the broker in {@code dir}; {@link #awaitReady} waits until it answers. */
    public static BrokerNode spawn(final Kind kind, final String name, final Path dir) throws IOException, InterruptedException
    {
        return spawn(kind, name, dir, Map.of());
    }

    /**
     * Spawns the broker in {@code dir} with broker configs of Kafka's names added to the defaults (both
     * brokers take the same: {@code server.properties} lines for Kafka, {@code --override}s for Ferrite).
     */
    public static BrokerNode spawn(final Kind kind, final String name, final Path dir, final Map<String, String> brokerConfig)
        throws IOException, InterruptedException
    {
        return spawn(kind, name, dir, brokerConfig, -1, List.of());
    }

    /**
     * {@link #spawn(Kind, String, Path, Map)} with JVM options of its own for the broker's JVM (after the defaults and
     * {@code -Dferrite.broker.jvmArgs}): a logger's level, a diagnostic switch.
     */
    public static BrokerNode spawn(final Kind kind, final String name, final Path dir, final Map<String, String> brokerConfig,
        final List<String> jvmArgs) throws IOException, InterruptedException
    {
        return spawn(kind, name, dir, brokerConfig, -1, jvmArgs);
    }

    /**
     * {@link #spawn(Kind, String, Path, Map)} of a Kafka with a second PLAINTEXT listener, {@code PROXIED}, on a loopback
     * port of its own ({@link #proxiedPort}) that advertises {@code advertisedPort}, the port of a proxy in front of it:
     * clients that bootstrap through the proxy are told the proxy's address, those on {@link #bootstrap} the broker's
     * own (a broker answers Metadata with the addresses of the listener the request came in on).
     */
    public static BrokerNode spawnWithProxiedListener(final String name, final Path dir, final Map<String, String> brokerConfig,
        final int advertisedPort) throws IOException, InterruptedException
    {
        return spawn(Kind.KAFKA, name, dir, brokerConfig, advertisedPort, List.of());
    }

    private static BrokerNode spawn(final Kind kind, final String name, final Path dir, final Map<String, String> brokerConfig,
        final int proxyPort, final List<String> extraJvmArgs) throws IOException, InterruptedException
    {
        Files.createDirectories(dir);
        final int port = LoopbackPorts.take();
        final int proxiedPort = proxyPort < 0 ? -1 : LoopbackPorts.take();
        final List<String> command = new ArrayList<>(List.of(javaBinary(), "-Xms256m", "-Xmx512m", "-XX:+UseG1GC",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"));
        // for a profile of the child (a JFR recording, say): -Dferrite.broker.jvmArgs="-XX:StartFlightRecording=..."; {name}
        // in it is the broker's name
        final String jvmArgs = System.getProperty("ferrite.broker.jvmArgs", "").strip();
        if (!jvmArgs.isEmpty())
        {
            command.addAll(List.of(jvmArgs.replace("{name}", name).split("\\s+")));
        }
        command.addAll(extraJvmArgs);
        if (kind == Kind.KAFKA)
        {
            final String classPath = Files.readString(Path.of(requiredProperty("ferrite.kafka.classpath")), StandardCharsets.UTF_8).strip();
            final int controllerPort = LoopbackPorts.take();
            final Path config = dir.resolve("server.properties");
            final boolean proxied = proxiedPort >= 0;
            Files.write(config, List.of(
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort +
                    (proxied ? ",PROXIED://127.0.0.1:" + proxiedPort : ""),
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port + (proxied ? ",PROXIED://127.0.0.1:" + proxyPort : ""),
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT" + (proxied ? ",PROXIED:PLAINTEXT" : ""),
                "log.dirs=" + dir.resolve("kafka-logs"),
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0"), StandardCharsets.UTF_8);
            for (final Map.Entry<String, String> e : brokerConfig.entrySet())
            {
                Files.writeString(config, e.getKey() + "=" + e.getValue() + "\n", StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
            }
            final Process format = new ProcessBuilder(javaBinary(), "-Xmx256m", "-cp", classPath, "kafka.tools.StorageTool", "format",
                "-t", Uuid.randomUuid().toString(), "-c", config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("format.log").toFile()).start();
            if (!format.waitFor(120, TimeUnit.SECONDS) || format.exitValue() != 0)
            {
                format.destroyForcibly();
                throw new IOException("kafka-storage format failed: " + Files.readString(dir.resolve("format.log")));
            }
            command.addAll(List.of("-Dkafka.logs.dir=" + dir.resolve("logs"), "-cp", classPath, "kafka.Kafka", config.toString()));
        }
        else
        {
            command.addAll(List.of("-cp", requiredProperty("ferrite.broker.jar"), "io.ferrite.broker.FerriteServer",
                "--override", "listeners=PLAINTEXT://127.0.0.1:" + port,
                "--override", "log.dirs=" + dir.resolve("ferrite-data"),
                "--override", "num.partitions=1"));
            for (final Map.Entry<String, String> e : brokerConfig.entrySet())
            {
                command.addAll(List.of("--override", e.getKey() + "=" + e.getValue()));
            }
        }
        return new BrokerNode(kind, name, dir, port, proxiedPort, command, launch(command, dir, name, false));
    }

    /**
     * Stops this broker cleanly ({@link #close}: SIGTERM) and starts it again on the same directory, configuration and
     * port, without formatting anything: a restart as an operator makes one (a Kafka's controller then leads its
     * partitions in a new leader epoch). The returned node stands for the new process; {@link #awaitReady} waits for it.
     */
    public BrokerNode restart() throws IOException, InterruptedException
    {
        close();
        return new BrokerNode(kind, name, dir, port, proxiedPort, command, launch(command, dir, name, true));
    }

    private static Process launch(final List<String> command, final Path dir, final String name, final boolean again)
        throws IOException
    {
        final java.io.File log = dir.resolve("broker.log").toFile();
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(again ? ProcessBuilder.Redirect.appendTo(log) : ProcessBuilder.Redirect.to(log)).start();
        // a test JVM that ends half-way leaves no broker behind
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "stop-" + name));
        return process;
    }

    /** Waits until the broker answers a DescribeCluster. */
    public BrokerNode awaitReady()
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap(),
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 2_000, AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 2_000)))
        {
            Await.await(() ->
            {
                if (!process.isAlive())
                {
                    throw new IllegalStateException(name + " ended: " + logTail());
                }
                try
                {
                    return !admin.describeCluster().nodes().get().isEmpty();
                }
                catch (final java.util.concurrent.ExecutionException notYet)
                {
                    return false;
                }
            }, START_DEADLINE, () -> name + " answering on " + bootstrap() + "; its log ends: " + logTail());
        }
        return this;
    }

    /** The broker JVM's process id. */
    public long pid()
    {
        return process.pid();
    }

    /** The broker's output (its log): {@code broker.log} in its directory. */
    public Path logFile()
    {
        return dir.resolve("broker.log");
    }

    /** The directory of a partition's files: {@code <log.dirs>/<topic>-<partition>}. */
    public Path partitionDir(final String topic, final int partition)
    {
        return dir.resolve(kind == Kind.KAFKA ? "kafka-logs" : "ferrite-data").resolve(topic + "-" + partition);
    }

    public String logTail()
    {
        try
        {
            final List<String> lines = Files.readAllLines(dir.resolve("broker.log"), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
        }
        catch (final IOException ex)
        {
            return "(no log: " + ex + ")";
        }
    }

    /** SIGKILL, and waits until the process is gone. */
    public void kill() throws InterruptedException
    {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    /** SIGTERM (both brokers shut down cleanly on it), then SIGKILL if it is still running after 30 s. */
    @Override
    public void close() throws InterruptedException
    {
        process.destroy();
        if (!process.waitFor(30, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String requiredProperty(final String name)
    {
        final String value = System.getProperty(name);
        if (value == null)
        {
            throw new IllegalStateException("-D" + name + " is not set (the module's surefire configuration sets it)");
        }
        return value;
    }

    private static String javaBinary()
    {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
