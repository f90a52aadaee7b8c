package io.ferrite.perf.sidebyside;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.apache.kafka.common.Uuid;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A three-node cluster on loopback, each node a child JVM ({@link BrokerProcess}) that is broker and
 * controller (Kafka's combined mode, both systems): Apache Kafka 4.4 (KRaft; each node's storage
 * formatted with one cluster id) or Ferrite in cluster mode (FerriteServer with its runnable jar,
 * replication-lite's jar and {@code replication-lite/target/cluster.classpath}, as
 * {@code bin/ferrite-server} starts a cluster node). Both get the same JVM options
 * ({@link BrokerProcess#jvmOptions}), a fresh temporary directory, {@code min.insync.replicas=2},
 * {@code default.replication.factor=3}, Kafka's session and heartbeat defaults, and {@code overrides}.
 * Node ids are 1, 2, 3.
 */
public final class ThreeNodes implements AutoCloseable
{
    static final int NODES = 3;

    final Kind kind;
    final Path dir;
    private final BrokerProcess[] nodes = new BrokerProcess[NODES + 1];
    private final int[] ports = new int[NODES + 1];
    private final int[] restarts = new int[NODES + 1];

    private ThreeNodes(final Kind kind, final Path dir)
    {
        this.kind = kind;
        this.dir = dir;
    }

    /** The settings both systems get besides the listeners, ids and directories. */
    public static List<String> commonSettings()
    {
        return List.of("min.insync.replicas=2", "default.replication.factor=3", "num.partitions=1",
            "group.initial.rebalance.delay.ms=0");
    }

    static ThreeNodes start(final Kind kind, final String heap, final String classPath, final List<String> overrides)
        throws IOException, InterruptedException
    {
        final ThreeNodes cluster = new ThreeNodes(kind, Files.createTempDirectory("kill-the-leader-" + kind.name().toLowerCase()));
        final List<BrokerProcess.Formatting> formats = new ArrayList<>();
        try
        {
            cluster.spawn(heap, classPath, overrides, formats);
            return cluster;
        }
        catch (final IOException | InterruptedException | RuntimeException ex)
        {
            // nothing is left behind: formats still running, nodes spawned, the directory
            for (final BrokerProcess.Formatting f : formats)
            {
                f.process().destroyForcibly();
            }
            try
            {
                cluster.close();
            }
            catch (final IOException | RuntimeException cleanup)
            {
                ex.addSuppressed(cleanup);
            }
            throw ex;
        }
    }

    /** Formats (Kafka) and spawns the three nodes; {@code formats} gets every format started. */
    private void spawn(final String heap, final String classPath, final List<String> overrides,
        final List<BrokerProcess.Formatting> formats) throws IOException, InterruptedException
    {
        final int[] controllerPorts = new int[NODES + 1];
        final StringBuilder voters = new StringBuilder();
        for (int id = 1; id <= NODES; id++)
        {
            ports[id] = ChildPorts.take();
            controllerPorts[id] = ChildPorts.take();
            voters.append(id == 1 ? "" : ",").append(id).append("@127.0.0.1:").append(controllerPorts[id]);
        }
        final String clusterId = Uuid.randomUuid().toString();
        final List<List<String>> commands = new ArrayList<>();
        for (int id = 1; id <= NODES; id++)
        {
            final List<String> settings = new ArrayList<>(List.of("node.id=" + id, "process.roles=broker,controller",
                "controller.quorum.voters=" + voters, "controller.listener.names=CONTROLLER",
                "listeners=PLAINTEXT://127.0.0.1:" + ports[id] + ",CONTROLLER://127.0.0.1:" + controllerPorts[id]));
            if (kind == Kind.KAFKA)
            {
                settings.add("advertised.listeners=PLAINTEXT://127.0.0.1:" + ports[id]);
            }
            commands.add(nodeCommand(kind, heap, classPath, Files.createDirectories(dir.resolve("node-" + id)), settings,
                overrides, clusterId, formats));
        }
        for (final BrokerProcess.Formatting f : formats)
        {
            f.await();
        }
        for (int id = 1; id <= NODES; id++)
        {
            nodes[id] = BrokerProcess.spawn(kind, dir.resolve("node-" + id), ports[id],
                commands.get(id - 1));
        }
    }

    /**
     * The command that starts one node of a three-node cluster of {@code kind} in {@code nodeDir}: {@code settings}
     * (its id, roles, voters, listeners; not changed) with {@link #commonSettings}, each system's own (Kafka: listener names, log
     * directory, internal topics' replication; Ferrite: the cluster id, log directory) and {@code overrides} last;
     * Kafka's configuration goes into {@code nodeDir/server.properties} and its storage format is started into
     * {@code formats} (await them before the spawn).
     */
    public static List<String> nodeCommand(final Kind kind, final String heap, final String classPath, final Path nodeDir,
        final List<String> settings, final List<String> overrides, final String clusterId,
        final List<BrokerProcess.Formatting> formats) throws IOException
    {
        final List<String> all = new ArrayList<>(settings);
        all.addAll(commonSettings());
        final List<String> command = new ArrayList<>();
        command.add(BrokerProcess.javaBinary());
        command.addAll(BrokerProcess.jvmOptions(heap));
        command.add("-Xlog:gc:file=" + nodeDir.resolve("gc.log") + ":uptime:filecount=0");
        if (kind == Kind.KAFKA)
        {
            all.addAll(List.of("inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + nodeDir.resolve("kafka-logs"), "offsets.topic.replication.factor=3",
                "transaction.state.log.replication.factor=3", "transaction.state.log.min.isr=2"));
            all.addAll(overrides);
            final Path config = nodeDir.resolve("server.properties");
            Files.write(config, all, StandardCharsets.UTF_8);
            formats.add(BrokerProcess.formatKafkaStorage(classPath, config, clusterId));
            command.addAll(List.of("-cp", classPath, "-Dkafka.logs.dir=" + nodeDir.resolve("logs"), "kafka.Kafka",
                config.toString()));
        }
        else
        {
            all.addAll(List.of("ferrite.cluster.id=" + clusterId, "log.dir=" + nodeDir.resolve("ferrite-data")));
            all.addAll(overrides);
            command.addAll(List.of("-cp", ferriteClusterClassPath(), "io.ferrite.broker.FerriteServer"));
            for (final String s : all)
            {
                command.add("--override");
                command.add(s);
            }
        }
        return command;
    }

    /**
     * Ferrite's cluster class path as {@code bin/ferrite-server} makes it: the runnable jar, replication-lite's jar
     * and the jars its build lists in {@code cluster.classpath}, looked for from the working directory.
     */
    public static String ferriteClusterClassPath() throws IOException
    {
        final Path jar = BrokerProcess.ferriteJar();
        if (jar == null)
        {
            throw new IOException("no broker/target/ferrite-broker.jar: build it (mvn -o package -pl perf,replication-lite -am)");
        }
        final Path lite = jar.getParent().getParent().getParent().resolve("replication-lite").resolve("target");
        final Path list = lite.resolve("cluster.classpath");
        try (Stream<Path> files = Files.exists(lite) ? Files.list(lite) : Stream.empty())
        {
            final Path liteJar = files.filter(p -> p.getFileName().toString().matches("ferrite-replication-lite-.*\\.jar"))
                .findFirst().orElse(null);
            if (liteJar == null || !Files.isRegularFile(list))
            {
                throw new IOException("no replication-lite jar or " + list + ": build it (mvn -o package -pl perf,replication-lite -am)");
            }
            return jar + File.pathSeparator + liteJar + File.pathSeparator + Files.readString(list, StandardCharsets.UTF_8).strip();
        }
    }

    BrokerProcess node(final int id)
    {
        return nodes[id];
    }

    boolean alive(final int id)
    {
        return nodes[id].process.isAlive();
    }

    /** Every node's broker listener, dead ones too (a client's bootstrap list as it was configured). */
    String bootstrap()
    {
        return bootstrapOf(1, 2, 3);
    }

    String bootstrapOf(final int... ids)
    {
        final StringBuilder b = new StringBuilder();
        for (final int id : ids)
        {
            b.append(b.length() == 0 ? "" : ",").append("127.0.0.1:").append(ports[id]);
        }
        return b.toString();
    }

    /** SIGKILL to node {@code id}; answers System.nanoTime() at the signal (the exit is waited for after). */
    long kill(final int id) throws InterruptedException
    {
        final long at = System.nanoTime();
        nodes[id].kill();
        return at;
    }

    /** Starts node {@code id} again on its files and ports (output in restart-N.log); answers the spawn's System.nanoTime(). */
    long restart(final int id) throws IOException
    {
        nodes[id] = nodes[id].restart("restart-" + (++restarts[id]) + ".log");
        return nodes[id].spawnedNanos;
    }

    /** WARN-and-above lines of every node's logs, at most {@code max} per file. */
    List<String> problems(final int max)
    {
        final List<String> out = new ArrayList<>();
        for (int id = 1; id <= NODES; id++)
        {
            for (final String log : logs(id))
            {
                for (final String line : nodes[id].problems(log, max))
                {
                    out.add("node " + id + " " + log + ": " + line);
                }
            }
        }
        return out;
    }

    private List<String> logs(final int id)
    {
        final List<String> logs = new ArrayList<>(List.of("broker.log"));
        for (int r = 1; r <= restarts[id]; r++)
        {
            logs.add("restart-" + r + ".log");
        }
        return logs;
    }

    /**
     * SIGKILL to every live node, then the directory goes unless {@code -Dsidebyside.keep=true}: nothing is measured
     * after the run, and a clean stop of all three at once waits on controlled shutdowns that lose their quorum.
     */
    @Override
    public void close() throws IOException, InterruptedException
    {
        for (int id = 1; id <= NODES; id++)
        {
            if (nodes[id] != null)
            {
                nodes[id].kill();
            }
        }
        if (!Boolean.getBoolean("sidebyside.keep"))
        {
            try (Stream<Path> files = Files.walk(dir))
            {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }
}
