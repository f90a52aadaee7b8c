package io.ferrite.perf.sidebyside;

import org.apache.kafka.common.Uuid;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A broker in a child JVM on loopback: Apache Kafka (single-node KRaft, combined broker and
 * controller, storage formatted with {@code kafka.tools.StorageTool} first) or Ferrite
 * ({@code io.ferrite.broker.FerriteServer}). Both run with the same JVM options (heap, GC), each
 * from what it ships as: Kafka on the runner's class path (kafka_2.13 and its dependencies, as its
 * {@code libs/} directory), Ferrite from its runnable jar ({@link #ferriteJar}, as
 * {@code bin/ferrite-server} starts it; the runner's class path when the jar is not built), with
 * their data in a fresh temporary directory.
 */
public final class BrokerProcess implements AutoCloseable
{
    public enum Kind
    {
        KAFKA("Kafka"), FERRITE("Ferrite");

        public final String label;

        Kind(final String label)
        {
            this.label = label;
        }
    }

    /** The JVM options of Kafka's start scripts (KAFKA_JVM_PERFORMANCE_OPTS), for both brokers. */
    public static List<String> jvmOptions(final String heap)
    {
        return List.of("-Xms" + heap, "-Xmx" + heap, "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
            "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent", "-Djava.awt.headless=true",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
            "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
    }

    public final Kind kind;
    public final Path dir;
    final int port;
    /** The port of each broker listener by name: PLAINTEXT ({@link #port}), and SSL and SASL_SSL with {@code --security}. */
    private final Map<String, Integer> listenerPorts;
    public final Process process;
    final long spawnedNanos;
    /** How this broker was started, so that {@link #restart} starts it again on the same files and port. */
    private final List<String> command;

    private BrokerProcess(final Kind kind, final Path dir, final Map<String, Integer> listenerPorts, final Process process,
        final long spawnedNanos, final List<String> command)
    {
        this.kind = kind;
        this.dir = dir;
        this.port = listenerPorts.get(BrokerSecurity.PLAINTEXT);
        this.listenerPorts = Map.copyOf(listenerPorts);
        this.process = process;
        this.spawnedNanos = spawnedNanos;
        this.command = command;
    }

    public String bootstrap()
    {
        return "127.0.0.1:" + port;
    }

    /** The bootstrap address of the listener named {@code listener} (PLAINTEXT, SSL, SASL_SSL). */
    public String bootstrap(final String listener)
    {
        return "127.0.0.1:" + listenerPort(listener);
    }

    int listenerPort(final String listener)
    {
        final Integer p = listenerPorts.get(listener);
        if (p == null)
        {
            throw new IllegalArgumentException(kind.label + " has no " + listener + " listener: " + listenerPorts.keySet());
        }
        return p;
    }

    /** The directory of the broker's log directory (Kafka's {@code log.dirs}) inside {@link #dir}. */
    public Path logDir()
    {
        return dir.resolve(kind == Kind.KAFKA ? "kafka-logs" : "ferrite-data");
    }

    /**
     * Starts this broker again, after it stopped, with the same command: the same data directory,
     * ports and configuration (Kafka's storage is not formatted again); its output goes to
     * {@code logName} in {@link #dir}, replaced.
     */
    public BrokerProcess restart(final String logName) throws IOException
    {
        if (process.isAlive())
        {
            throw new IllegalStateException(kind.label + " is still running");
        }
        final long spawned = System.nanoTime();
        final Process again = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve(logName).toFile()).start();
        Runtime.getRuntime().addShutdownHook(new Thread(again::destroyForcibly, "stop-" + kind.name().toLowerCase()));
        return new BrokerProcess(kind, dir, listenerPorts, again, spawned, command);
    }

    /** SIGTERM and waits for the exit (both brokers shut down cleanly on it); the files stay. */
    public void stopCleanly(final long timeoutSeconds) throws InterruptedException
    {
        process.destroy();
        if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** SIGKILL (what {@code destroyForcibly} sends on Linux) and waits for the exit; the files stay as the kill left them. */
    public void kill() throws InterruptedException
    {
        process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }

    public static BrokerProcess start(final Kind kind, final String heap, final String classPath, final List<String> extraOverrides,
        final List<String> extraJvmOptions)
        throws IOException, InterruptedException
    {
        return start(kind, heap, classPath, extraOverrides, extraJvmOptions, null);
    }

    /**
     * Starts a broker with a PLAINTEXT listener and, when {@code security} is given, an SSL and a SASL_SSL listener
     * configured by its lines (the same for both brokers, before {@code extraOverrides}).
     */
    static BrokerProcess start(final Kind kind, final String heap, final String classPath, final List<String> extraOverrides,
        final List<String> extraJvmOptions, final BrokerSecurity security)
        throws IOException, InterruptedException
    {
        final Path dir = Files.createTempDirectory("side-by-side-" + kind.name().toLowerCase());
        final int port = ChildPorts.take();
        final Map<String, Integer> ports = new LinkedHashMap<>();
        ports.put(BrokerSecurity.PLAINTEXT, port);
        if (security != null)
        {
            ports.put(BrokerSecurity.SSL, ChildPorts.take());
            ports.put(BrokerSecurity.SASL_SSL, ChildPorts.take());
        }
        final String listeners = listeners(ports);
        final String protocolMap = security == null ? "PLAINTEXT:PLAINTEXT" : BrokerSecurity.protocolMap();
        final List<String> command = new ArrayList<>();
        command.add(javaBinary());
        command.addAll(jvmOptions(heap));
        command.add("-Xlog:gc:file=" + dir.resolve("gc.log") + ":uptime:filecount=0"); // the pauses, for the report
        command.addAll(extraJvmOptions);
        final Path jar = ferriteJar();
        if (kind == Kind.FERRITE && jar != null)
        {
            command.addAll(classDataOptions(jar));
        }
        command.add("-cp");
        command.add(kind == Kind.FERRITE && jar != null ? jar.toString() : classPath);
        if (kind == Kind.KAFKA)
        {
            final int controllerPort = ChildPorts.take();
            final Path config = dir.resolve("server.properties");
            final List<String> lines = new ArrayList<>(List.of(
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=" + listeners + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=" + listeners,
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=" + protocolMap + ",CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("kafka-logs"),
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0"));
            if (security != null)
            {
                lines.addAll(security.brokerLines());
            }
            lines.addAll(extraOverrides);
            Files.write(config, lines, StandardCharsets.UTF_8);
            formatKafkaStorage(classPath, config, Uuid.randomUuid().toString()).await();
            command.add("-Dkafka.logs.dir=" + dir.resolve("logs"));
            command.add("kafka.Kafka");
            command.add(config.toString());
        }
        else
        {
            command.add("io.ferrite.broker.FerriteServer");
            final List<String> overrides = new ArrayList<>(List.of(
                "listeners=" + listeners,
                "log.dirs=" + dir.resolve("ferrite-data"),
                "num.partitions=1"));
            if (security != null)
            {
                overrides.add("listener.security.protocol.map=" + protocolMap);
                overrides.addAll(security.brokerLines());
            }
            overrides.addAll(extraOverrides);
            for (final String o : overrides)
            {
                command.add("--override");
                command.add(o);
            }
        }
        return spawn(kind, dir, ports, command);
    }

    /** {@code listeners}' value: NAME://127.0.0.1:PORT for each, the name being the security protocol. */
    private static String listeners(final Map<String, Integer> ports)
    {
        final List<String> out = new ArrayList<>();
        ports.forEach((name, p) -> out.add(name + "://127.0.0.1:" + p));
        return String.join(",", out);
    }

    /**
     * Starts {@code command} (a broker listening on {@code port}, its files in {@code dir}) with its
     * output in {@code dir/broker.log}; a node of a cluster ({@link ThreeNodes}) starts this way too.
     */
    public static BrokerProcess spawn(final Kind kind, final Path dir, final int port, final List<String> command) throws IOException
    {
        return spawn(kind, dir, Map.of(BrokerSecurity.PLAINTEXT, port), command);
    }

    private static BrokerProcess spawn(final Kind kind, final Path dir, final Map<String, Integer> ports, final List<String> command)
        throws IOException
    {
        final long spawned = System.nanoTime();
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve("broker.log").toFile()).start();
        // a runner stopped half-way (Ctrl-C, a failed test JVM) leaves no broker behind
        Runtime.getRuntime().addShutdownHook(new Thread(process::destroyForcibly, "stop-" + kind.name().toLowerCase()));
        return new BrokerProcess(kind, dir, ports, process, spawned, List.copyOf(command));
    }

    /** A {@code kafka-storage format} running in a child JVM (its output in format.log beside the config). */
    public record Formatting(Process process, Path log)
    {
        public void await() throws IOException, InterruptedException
        {
            if (!process.waitFor(120, TimeUnit.SECONDS) || process.exitValue() != 0)
            {
                throw new IOException("kafka-storage format failed: " + Files.readString(log));
            }
        }
    }

    /** Starts Kafka's {@code kafka.tools.StorageTool format} of the node configured by {@code config}, for cluster {@code clusterId}. */
    public static Formatting formatKafkaStorage(final String classPath, final Path config, final String clusterId) throws IOException
    {
        final List<String> format = new ArrayList<>(List.of(javaBinary(), "-Xmx256m", "-cp", classPath,
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "kafka.tools.StorageTool", "format",
            "-t", clusterId, "-c", config.toString()));
        final Path log = config.resolveSibling("format.log");
        return new Formatting(new ProcessBuilder(format).redirectErrorStream(true).redirectOutput(log.toFile()).start(), log);
    }

    /** GC pauses from the broker's GC log: how many, their sum and the longest, in ms. */
    record GcPauses(int count, double totalMs, double maxMs)
    {
    }

    private static final Pattern PAUSE = Pattern.compile("\\bPause\\b.* ([0-9.]+)ms$");

    /** The length of the broker's GC log now (where {@link #gcPausesSince} starts reading). */
    long gcLogLength()
    {
        try
        {
            return Files.size(dir.resolve("gc.log"));
        }
        catch (final IOException ex)
        {
            return 0;
        }
    }

    /** The pauses the broker's GC log reports after {@code offset} (a {@link #gcLogLength} taken before). */
    GcPauses gcPausesSince(final long offset)
    {
        int count = 0;
        double total = 0;
        double max = 0;
        try (var channel = java.nio.channels.FileChannel.open(dir.resolve("gc.log")))
        {
            final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate((int) Math.max(0, channel.size() - offset));
            channel.read(bytes, offset);
            for (final String line : new String(bytes.array(), 0, bytes.position(), StandardCharsets.UTF_8).split("\n"))
            {
                final Matcher m = PAUSE.matcher(line.strip());
                if (m.find())
                {
                    final double ms = Double.parseDouble(m.group(1));
                    count++;
                    total += ms;
                    max = Math.max(max, ms);
                }
            }
        }
        catch (final IOException | NumberFormatException ex)
        {
            return new GcPauses(-1, -1, -1);
        }
        return new GcPauses(count, total, max);
    }

    /** User plus system CPU time of the broker JVM so far (all its threads), from /proc/<pid>/stat; -1 without /proc. */
    long cpuNanos()
    {
        return cpuNanos(process.pid());
    }

    /** {@link #cpuNanos()} of any process. */
    static long cpuNanos(final long pid)
    {
        try
        {
            final String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            final String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // after the command: state is field 3, utime field 14 and stime field 15 (clock ticks, 100 per second)
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 10_000_000L;
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    /** VmRSS of the child JVM from /proc, in bytes, or -1 where there is no /proc. */
    long residentBytes()
    {
        return status("VmRSS:");
    }

    /** A size field of /proc/<pid>/status (VmRSS:, RssAnon:, RssFile:), in bytes, or -1. */
    long status(final String field)
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc", Long.toString(process.pid()), "status")))
            {
                if (line.startsWith(field))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
                }
            }
        }
        catch (final IOException | NumberFormatException ex)
        {
            return -1;
        }
        return -1;
    }

    String logTail(final int lines)
    {
        return logTail("broker.log", lines);
    }

    /** The last lines of one of the broker's output files in {@link #dir}. */
    public String logTail(final String logName, final int lines)
    {
        try
        {
            final List<String> all = Files.readAllLines(dir.resolve(logName));
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
        }
        catch (final IOException ex)
        {
            return "(no log: " + ex + ")";
        }
    }

    /** Log lines that say something went wrong (WARN and above), for the report. */
    List<String> problems(final int max)
    {
        return problems("broker.log", max);
    }

    /** The WARN-and-above lines of one of the broker's output files in {@link #dir}. */
    public List<String> problems(final String logName, final int max)
    {
        final List<String> out = new ArrayList<>();
        try
        {
            for (final String line : Files.readAllLines(dir.resolve(logName)))
            {
                if ((line.contains("ERROR") || line.contains("WARN") || line.contains("Exception")) && out.size() < max)
                {
                    out.add(line);
                }
            }
        }
        catch (final IOException ex)
        {
            out.add("(no log: " + ex + ")");
        }
        return out;
    }

    /** Stops the broker if it still runs (SIGTERM) and deletes its directory unless {@code -Dsidebyside.keep=true}. */
    @Override
    public void close() throws IOException, InterruptedException
    {
        if (process.isAlive())
        {
            process.destroy(); // SIGTERM: both shut down cleanly
            if (!process.waitFor(60, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
        if (!Boolean.getBoolean("sidebyside.keep"))
        {
            try (var files = Files.walk(dir))
            {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /**
     * Ferrite's runnable jar ({@code broker/target/ferrite-broker.jar}, which the build makes before
     * perf): the system property {@code sidebyside.ferrite.jar}, else looked for from the working
     * directory (the repository's or the perf module's); null when there is none.
     */
    public static Path ferriteJar()
    {
        final String configured = System.getProperty("sidebyside.ferrite.jar");
        if (configured != null)
        {
            return Files.isRegularFile(Path.of(configured)) ? Path.of(configured).toAbsolutePath() : null;
        }
        for (final String candidate : new String[] {"broker/target/ferrite-broker.jar", "../broker/target/ferrite-broker.jar"})
        {
            final Path jar = Path.of(candidate);
            if (Files.isRegularFile(jar))
            {
                return jar.toAbsolutePath().normalize();
            }
        }
        return null;
    }

    /**
     * The class-data archive the broker's build writes beside its jar for the JDK that built it, as
     * {@code bin/ferrite-server} uses it: when this runner's JDK is that one (the child JVMs run it);
     * none otherwise.
     */
    static List<String> classDataOptions(final Path jar)
    {
        final Path archive = jar.resolveSibling("ferrite-broker-" + System.getProperty("java.version") + ".jsa");
        return Files.isRegularFile(archive) ? List.of("-XX:SharedArchiveFile=" + archive, "-Xlog:cds=off", "-Xlog:cds+dynamic=off")
            : List.of();
    }

    public static String javaBinary()
    {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }
}
