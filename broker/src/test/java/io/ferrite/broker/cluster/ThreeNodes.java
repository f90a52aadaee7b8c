package io.ferrite.broker.cluster;

import io.ferrite.testing.Await;
import io.ferrite.testing.LoopbackPorts;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Three Ferrite brokers in cluster mode for a test: child JVMs of {@code ferrite-server} ({@code -Xmx256m}) on loopback,
 * every node a broker and a voter, their ports chosen up front (a node restarted comes back on the same ones), each
 * node's output in {@code dir/node<i>.out|err} and its data in {@code dir/data<i>}. Node ids are 1 to 3.
 *
 * <p>A test class's field {@code @RegisterExtension final ThreeNodes cluster = new ThreeNodes();} gives each test its own
 * directory and ports before it runs (started by the test, {@link #start()}), kills its nodes after it, and deletes the
 * directory then — kept, and named on the standard error, when the test failed, so that the nodes' output can be read.
 */
final class ThreeNodes implements AutoCloseable, BeforeEachCallback, AfterEachCallback
{
    static final Duration START = Duration.ofSeconds(120);
    private static final Pattern LISTENING = Pattern.compile("Ferrite listening on PLAINTEXT://127\\.0\\.0\\.1:(\\d+)");

    private Path dir;
    private final Process[] nodes = new Process[4];
    private final int[] controllerPorts = new int[4];
    private final int[] listenerPorts = new int[4];
    private String voters;
    /** JVM options of every node after the harness's own ({@link #jvmOptions}). */
    private List<String> jvmOptions = List.of();
    /** Made by {@link #beforeEach}: deleted by {@link #afterEach}. */
    private boolean ownDir;

    /** For a {@code @RegisterExtension} field: its directory and ports are chosen before each test. */
    ThreeNodes()
    {
    }

    /** In {@code dir}; chooses the ports. */
    ThreeNodes(final Path dir) throws IOException
    {
        choose(dir);
    }

    @Override
    public void beforeEach(final ExtensionContext context) throws IOException
    {
        choose(Files.createTempDirectory("three-nodes-"));
        ownDir = true;
    }

    @Override
    public void afterEach(final ExtensionContext context) throws IOException, InterruptedException
    {
        close();
        if (!ownDir)
        {
            return;
        }
        if (context.getExecutionException().isPresent())
        {
            System.err.println(context.getDisplayName() + " failed: its nodes' output and data kept in " + dir);
            return;
        }
        try (Stream<Path> all = Files.walk(dir))
        {
            for (final Path p : all.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(p);
            }
        }
    }

    /** Chooses the ports (all distinct: a broker listener on port 0 could take another node's controller port). */
    private void choose(final Path dir) throws IOException
    {
        this.dir = dir;
        final int[] free = LoopbackPorts.take(6);
        for (int id = 1; id <= 3; id++)
        {
            controllerPorts[id] = free[id - 1];
            listenerPorts[id] = free[id + 2];
        }
        voters = "1@127.0.0.1:" + controllerPorts[1] + ",2@127.0.0.1:" + controllerPorts[2] + ",3@127.0.0.1:" +
            controllerPorts[3];
    }

    /** {@code options} for every node's JVM from its next launch on (system properties: log levels, ...). */
    ThreeNodes jvmOptions(final String... options)
    {
        this.jvmOptions = List.of(options);
        return this;
    }

    /** Starts the three and waits until each joined the cluster and listens; if one does not, kills them all. */
    ThreeNodes start() throws IOException, InterruptedException
    {
        return start(Map.of());
    }

    /** As {@link #start()}, with {@code settings} over each node's own ({@code --override}s). */
    ThreeNodes start(final Map<String, String> settings) throws IOException, InterruptedException
    {
        try
        {
            for (int id = 1; id <= 3; id++)
            {
                nodes[id] = launch(id, settings);
            }
            for (int id = 1; id <= 3; id++)
            {
                awaitListening(id);
            }
            return this;
        }
        catch (final IOException | RuntimeException | Error ex)
        {
            close();
            throw ex;
        }
    }

    /** SIGKILLs node {@code id} and waits until it is gone. */
    void kill(final int id) throws InterruptedException
    {
        nodes[id].toHandle().destroyForcibly();
        nodes[id].waitFor(30, TimeUnit.SECONDS);
    }

    /**
     * SIGSTOPs node {@code id}: its process stops where it is, its sockets stay open and its listeners still complete
     * connections into their backlogs (the kernel's, not the process's) — a GC pause that never ends.
     */
    void pause(final int id) throws IOException, InterruptedException
    {
        signal(id, "-STOP");
    }

    /** SIGCONTs node {@code id} after {@link #pause}. */
    void resume(final int id) throws IOException, InterruptedException
    {
        signal(id, "-CONT");
    }

    private void signal(final int id, final String signal) throws IOException, InterruptedException
    {
        final Process kill = new ProcessBuilder("kill", signal, Long.toString(nodes[id].pid())).inheritIO().start();
        if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0)
        {
            throw new IOException("kill " + signal + " " + nodes[id].pid() + " failed");
        }
    }

    /** Starts node {@code id} again (after {@link #kill}) on its ports and data, and waits until it listens. */
    void restart(final int id) throws IOException
    {
        restart(id, Map.of());
    }

    /** As {@link #restart(int)}, with {@code settings} over the node's own ({@code --override}s). */
    void restart(final int id, final Map<String, String> settings) throws IOException
    {
        nodes[id] = launch(id, settings);
        awaitListening(id);
    }

    /** Node {@code id}'s controller listener (KRaft's and the controller's APIs). */
    int controllerPort(final int id)
    {
        return controllerPorts[id];
    }

    int brokerPort(final int id)
    {
        return listenerPorts[id];
    }

    Path data(final int id)
    {
        return dir.resolve("data" + id);
    }

    String bootstrap()
    {
        return "127.0.0.1:" + listenerPorts[1] + ",127.0.0.1:" + listenerPorts[2] + ",127.0.0.1:" + listenerPorts[3];
    }

    Admin admin(final int id)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + listenerPorts[id],
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "30000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000"));
    }

    /**
     * A kafka-clients transactional producer of {@code transactionalId} on {@code bootstrap}, acks=all, its transactions
     * timed out after 20 s, initialised ({@code initTransactions}); closed again if that fails.
     */
    static KafkaProducer<String, String> transactionalProducer(final String bootstrap, final String transactionalId)
    {
        return transactionalProducer(bootstrap, transactionalId, Map.of());
    }

    /** As {@link #transactionalProducer(String, String)}, with {@code settings} over those. */
    static KafkaProducer<String, String> transactionalProducer(final String bootstrap, final String transactionalId,
        final Map<String, String> settings)
    {
        final Properties props = new Properties();
        props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
        props.put(ProducerConfig.ACKS_CONFIG, "all");
        props.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "20000");
        props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
        props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, "60000");
        props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000");
        props.putAll(settings);
        final KafkaProducer<String, String> producer = new KafkaProducer<>(props, new StringSerializer(), new StringSerializer());
        try
        {
            producer.initTransactions();
            return producer;
        }
        catch (final RuntimeException ex)
        {
            producer.close(Duration.ofSeconds(5));
            throw ex;
        }
    }

    /** The last lines node {@code id} logged, without stack frames. */
    String tail(final int id)
    {
        try
        {
            final List<String> lines = Files.readAllLines(dir.resolve("node" + id + ".err"), StandardCharsets.UTF_8);
            final List<String> said = lines.stream().filter(l -> !l.startsWith("\tat ")).toList();
            return String.join("\n", said.subList(Math.max(0, said.size() - 40), said.size()));
        }
        catch (final IOException ex)
        {
            return "(no output: " + ex + ")";
        }
    }

    /** The last lines of every node, and every line of theirs that mentions {@code mentioning} (null: none). */
    String tails(final String mentioning)
    {
        final StringBuilder said = new StringBuilder();
        for (int id = 1; id <= 3; id++)
        {
            said.append("node ").append(id).append(":\n").append(tail(id)).append('\n');
            if (mentioning == null)
            {
                continue;
            }
            try
            {
                Files.readAllLines(dir.resolve("node" + id + ".err"), StandardCharsets.UTF_8).stream()
                    .filter(l -> l.contains(mentioning) && !l.contains("\tat ")).forEach(l -> said.append(l).append('\n'));
            }
            catch (final IOException ex)
            {
                said.append(ex).append('\n');
            }
        }
        return said.toString();
    }

    /** Every line the three nodes logged that contains {@code containing}, node 1's first. */
    List<String> logLines(final String containing) throws IOException
    {
        final List<String> lines = new ArrayList<>();
        for (int id = 1; id <= 3; id++)
        {
            Files.readAllLines(dir.resolve("node" + id + ".err"), StandardCharsets.UTF_8).stream().filter(l -> l.contains(containing))
                .forEach(lines::add);
        }
        return lines;
    }

    /** The first {@code count} records of {@code topic}-0 from its beginning, read from its leader. */
    List<String> readAll(final String topic, final int count)
    {
        final Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap());
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "none"); // out of range is an error here, not a reset to the end
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer()))
        {
            final TopicPartition tp = new TopicPartition(topic, 0);
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            final List<String> read = new ArrayList<>();
            Await.await(() ->
            {
                for (final ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(200)))
                {
                    read.add(r.value());
                }
                return read.size() >= count;
            }, Duration.ofSeconds(60), () -> count + " records of " + topic + "-0 read back, read " + read + "\n" + tails(topic));
            return read;
        }
    }

    @Override
    public void close() throws InterruptedException
    {
        for (int id = 1; id <= 3; id++)
        {
            if (nodes[id] != null)
            {
                kill(id); // a SIGSTOPped node too: SIGKILL ends a stopped process
                nodes[id] = null;
            }
        }
    }

    private void awaitListening(final int id)
    {
        final Path out = dir.resolve("node" + id + ".out");
        Await.awaitValue(() -> listeningPort(out), port -> port == listenerPorts[id], START,
            () -> "node " + id + " to join the cluster and listen: " + tail(id));
    }

    private Process launch(final int id, final Map<String, String> settings) throws IOException
    {
        final String clusterClasspath = Files.readString(Path.of("..", "replication-lite", "target", "cluster.classpath"),
            StandardCharsets.UTF_8).trim();
        final List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            // the markers' retries at INFO: MarkerBatchesClusterTest counts them ("written after N failed tries")
            "-Xmx256m", "-Dorg.slf4j.simpleLogger.log.io.ferrite.broker.cluster=info",
            "-Dorg.slf4j.simpleLogger.log.io.ferrite.broker.txn.TxnMarkerRuns=info", "--add-opens",
            "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path") + java.io.File.pathSeparator + clusterClasspath,
            ClusterBrokerMain.class.getName()));
        command.addAll(command.size() - 1, jvmOptions);
        for (final String setting : List.of("node.id=" + id, "process.roles=broker,controller",
            "controller.quorum.voters=" + voters, "controller.listener.names=CONTROLLER",
            "listeners=PLAINTEXT://127.0.0.1:" + listenerPorts[id] + ",CONTROLLER://127.0.0.1:" + controllerPorts[id],
            "ferrite.cluster.id=RmVycml0ZVRlc3QwMDAwMQ", "log.dir=" + data(id), "min.insync.replicas=2"))
        {
            command.add("--override");
            command.add(setting);
        }
        settings.forEach((name, value) ->
        {
            command.add("--override");
            command.add(name + "=" + value);
        });
        return new ProcessBuilder(command).redirectOutput(dir.resolve("node" + id + ".out").toFile())
            .redirectError(dir.resolve("node" + id + ".err").toFile()).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    }

    private static int listeningPort(final Path out) throws IOException
    {
        if (!Files.exists(out))
        {
            return 0;
        }
        final Matcher m = LISTENING.matcher(Files.readString(out, StandardCharsets.UTF_8));
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

}
