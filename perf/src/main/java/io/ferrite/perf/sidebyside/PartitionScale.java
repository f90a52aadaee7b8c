package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What each partition costs a broker, Apache Kafka 4.4 and Ferrite side by side (issue 11): each
 * broker in a child JVM as it ships ({@link BrokerProcess}), N partitions created through the Admin
 * client in batches, a few records produced to every partition and consumed back, then a clean stop
 * (SIGTERM) and start, and a SIGKILL and start, each timed to the first acknowledged produce. After
 * each step: open files, mappings, RSS (anonymous / file), disk of the data directory (allocated
 * blocks). A step that fails (out of file descriptors, a broker that cannot start again) is recorded
 * with how far it got and why; the run goes on to the next step and the next broker.
 *
 * <pre>
 * PartitionScale [--partitions 2000] [--topics N/10] [--records 3] [--batch 100] [--heap 1g]
 *                [--step-timeout 180] [--restart-timeout 240] [--skip-kafka] [--skip-ferrite]
 *                [--ferrite-override k=v]... [--kafka-override k=v]... [--out FILE.json] [--markdown FILE.md]
 * </pre>
 * With {@code --out}, a {@code .meta.json} goes beside the JSON, and {@code --markdown} is
 * regenerated from every run in the JSON's directory ({@link PartitionScaleReport}).
 */
public final class PartitionScale
{
    static final class Options
    {
        int partitions = 2000;
        int topics = -1;
        int records = 3;
        int batch = 100;
        String heap = "1g";
        int stepTimeoutSeconds = 180;
        int restartTimeoutSeconds = 240;
        boolean skipKafka;
        boolean skipFerrite;
        final List<String> ferriteOverrides = new ArrayList<>();
        final List<String> kafkaOverrides = new ArrayList<>();
        Path out;
        Path markdown;
        String classPath = System.getProperty("java.class.path");
        String command = "";

        static Options parse(final String... args)
        {
            final Options o = new Options();
            o.command = "partition-scale " + String.join(" ", args);
            for (int i = 0; i < args.length; i++)
            {
                switch (args[i])
                {
                    case "--partitions" -> o.partitions = Integer.parseInt(args[++i]);
                    case "--topics" -> o.topics = Integer.parseInt(args[++i]);
                    case "--records" -> o.records = Integer.parseInt(args[++i]);
                    case "--batch" -> o.batch = Integer.parseInt(args[++i]);
                    case "--heap" -> o.heap = args[++i];
                    case "--step-timeout" -> o.stepTimeoutSeconds = Integer.parseInt(args[++i]);
                    case "--restart-timeout" -> o.restartTimeoutSeconds = Integer.parseInt(args[++i]);
                    case "--skip-kafka" -> o.skipKafka = true;
                    case "--skip-ferrite" -> o.skipFerrite = true;
                    case "--ferrite-override" -> o.ferriteOverrides.add(args[++i]);
                    case "--kafka-override" -> o.kafkaOverrides.add(args[++i]);
                    case "--out" -> o.out = Path.of(args[++i]);
                    case "--markdown" -> o.markdown = Path.of(args[++i]);
                    case "--classpath" -> o.classPath = args[++i];
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (o.topics <= 0)
            {
                o.topics = Math.max(1, o.partitions / 10); // 10 partitions a topic, as the 1 000 x 10
            }
            if (o.partitions % o.topics != 0)
            {
                throw new IllegalArgumentException("--partitions " + o.partitions + " is not a multiple of --topics " + o.topics);
            }
            return o;
        }

        int partitionsPerTopic()
        {
            return partitions / topics;
        }
    }

    private final Options options;
    private final ObjectMapper mapper = new ObjectMapper();

    PartitionScale(final Options options)
    {
        this.options = options;
    }

    public static void main(final String[] args) throws Exception
    {
        quietClientLogs();
        final ObjectNode json = new PartitionScale(Options.parse(args)).run();
        System.out.println(PartitionScaleReport.render(json));
    }

    /**
     * kafka-clients' logging at WARN, its network client and producer sender at ERROR (unless the command line sets the
     * level): "Connection to node -1 could not be established" every few ms while a broker starts or after it died, a
     * NOT_LEADER_OR_FOLLOWER retry per partition while leaders move; the runners count what fails instead.
     */
    public static void quietClientLogs()
    {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
        {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.producer.internals.Sender", "error");
        }
    }

    /** Runs Kafka then Ferrite and answers the JSON (also written to {@code --out}). */
    ObjectNode run() throws Exception
    {
        final ObjectNode json = mapper.createObjectNode();
        json.put("kind", PartitionScaleReport.KIND);
        final ObjectNode meta = meta();
        json.set("meta", meta);
        final ObjectNode limits = json.putObject("limits");
        final long[] ownLimits = ProcessCounters.openFileLimits(ProcessHandle.current().pid());
        limits.put("openFilesSoft", ownLimits[0]);
        limits.put("openFilesHard", ownLimits[1]);
        limits.put("maxMapCount", ProcessCounters.maxMapCount());
        settings(json.putArray("settings"));
        final ArrayNode brokers = json.putArray("brokers");
        if (!options.skipKafka)
        {
            brokers.add(broker(Kind.KAFKA));
            record(json, meta); // a run stopped during Ferrite's part still leaves Kafka's
        }
        if (!options.skipFerrite)
        {
            brokers.add(broker(Kind.FERRITE));
        }
        record(json, meta);
        return json;
    }

    private void record(final ObjectNode json, final ObjectNode meta) throws IOException
    {
        if (options.out != null)
        {
            final Path out = options.out.toAbsolutePath();
            Files.createDirectories(out.getParent());
            write(out, json);
            write(out.resolveSibling(out.getFileName().toString().replaceFirst("\\.json$", "") + ".meta.json"), meta);
            System.out.println("wrote " + out);
            if (options.markdown != null)
            {
                Files.writeString(options.markdown, PartitionScaleReport.renderDirectory(out.getParent()), StandardCharsets.UTF_8);
                System.out.println("wrote " + options.markdown);
            }
        }
    }

    private void write(final Path file, final ObjectNode node) throws IOException
    {
        Files.writeString(file, mapper.enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(node) + "\n",
            StandardCharsets.UTF_8);
    }

    /** One broker through every step; whatever fails is written into the node and the run goes on. */
    private ObjectNode broker(final Kind kind) throws Exception
    {
        System.out.printf(Locale.ROOT, "%n=== %s, %d partitions (%d topics x %d) ===%n", kind.label, options.partitions,
            options.topics, options.partitionsPerTopic());
        final ObjectNode node = mapper.createObjectNode();
        node.put("broker", kind.name().toLowerCase(Locale.ROOT));
        node.put("label", kind.label);
        final ArrayNode snapshots = node.putArray("snapshots");
        final ArrayNode problems = node.putArray("problems");
        final String loadBefore = Machine.loadAverages();
        final long started = System.nanoTime();
        final BrokerProcess broker = BrokerProcess.start(kind, options.heap, options.classPath,
            kind == Kind.KAFKA ? options.kafkaOverrides : options.ferriteOverrides, List.of());
        final Path data = broker.dir.resolve(kind == Kind.KAFKA ? "kafka-logs" : "ferrite-data");
        final Restarter restarter = new Restarter(broker, ProcessCounters.commandLine(broker.process.pid()));
        try
        {
            final long[] limits = ProcessCounters.openFileLimits(broker.process.pid());
            node.put("openFilesSoftLimit", limits[0]);
            node.put("openFilesHardLimit", limits[1]);
            final ScaleWorkload w = new ScaleWorkload(broker.bootstrap(), options.partitionsPerTopic(), restarter::alive);
            final long up = w.awaitUp(deadline(options.restartTimeoutSeconds));
            node.put("startMs", up < 0 ? -1 : ms(up - broker.spawnedNanos));
            snapshot(snapshots, "started, no topics", restarter, data);
            if (up < 0)
            {
                problems.add("did not start: " + broker.logTail(20));
                return node;
            }

            final ScaleWorkload.Outcome created = w.create(options.topics, options.batch, deadline(options.stepTimeoutSeconds));
            outcome(node, "create", created, problems);
            System.out.printf(Locale.ROOT, "created %d of %d partitions in %.1f s%s%n", created.done(), created.wanted(),
                created.elapsedNanos() / 1e9, created.error() == null ? "" : ": " + created.error());
            final int topicsMade = (int) (created.done() / options.partitionsPerTopic());
            node.put("partitionsCreated", created.done());
            snapshot(snapshots, "after creating", restarter, data);

            final ScaleWorkload.Outcome produced = w.produce(topicsMade, options.records, deadline(options.stepTimeoutSeconds));
            outcome(node, "produce", produced, problems);
            final ScaleWorkload.Outcome consumed = w.consume(topicsMade, options.records, deadline(options.stepTimeoutSeconds));
            outcome(node, "consume", consumed, problems);
            System.out.printf(Locale.ROOT, "produced to %d, consumed back from %d partitions%n", produced.done(), consumed.done());
            snapshot(snapshots, "after produce and consume", restarter, data);

            final ArrayNode restarts = node.putArray("restarts");
            int expected = options.records;
            for (final boolean kill : new boolean[] {false, true})
            {
                final ObjectNode r = restarts.addObject();
                final boolean up2 = restart(r, restarter, w, kill, topicsMade, problems);
                snapshot(snapshots, kill ? "after SIGKILL and start" : "after SIGTERM and start", restarter, data);
                expected += up2 && r.path("allPartitionsMs").asLong(-1) >= 0 ? 1 : 0;
                if (kill && up2)
                {
                    // what was acknowledged before the kill is still there (page cache survives a process)
                    final ScaleWorkload.Outcome again = w.consume(topicsMade, expected, deadline(options.stepTimeoutSeconds));
                    outcome(node, "consumeAfterKill", again, problems);
                    System.out.printf(Locale.ROOT, "after SIGKILL: %d of %d partitions read back with >= %d records%n",
                        again.done(), again.wanted(), expected);
                }
            }
        }
        catch (final Exception ex)
        {
            problems.add("run failed: " + ex);
            ex.printStackTrace(System.out);
        }
        finally
        {
            for (final String p : broker.problems(8))
            {
                problems.add("broker log: " + p);
            }
            node.put("load", loadBefore + " -> " + Machine.loadAverages());
            restarter.stop();
            broker.close();
            node.put("runSeconds", Math.round((System.nanoTime() - started) / 1e8) / 10.0);
        }
        return node;
    }

    /** Stops the broker (SIGTERM or SIGKILL), starts it again, times it to a first acknowledged produce and to every partition. */
    private boolean restart(final ObjectNode r, final Restarter restarter, final ScaleWorkload w, final boolean kill,
        final int topicsMade, final ArrayNode problems) throws IOException, InterruptedException
    {
        final String how = kill ? "SIGKILL" : "SIGTERM";
        r.put("signal", how);
        final long[] stop = restarter.stopWith(kill, options.restartTimeoutSeconds);
        r.put("stopMs", stop[0]);
        r.put("exitCode", stop[1]);
        final long spawned = restarter.start();
        final AtomicReference<String> lastError = new AtomicReference<>();
        final long acked = w.firstAcknowledged(deadline(options.restartTimeoutSeconds), lastError);
        r.put("firstProduceMs", acked < 0 ? -1 : ms(acked - spawned));
        if (acked < 0)
        {
            r.put("error", (restarter.alive() ? "no acknowledged produce within " + options.restartTimeoutSeconds + " s: "
                : "the broker exited " + ms(System.nanoTime() - spawned) + " ms after the spawn: ") + lastError.get());
            r.put("startFailure", restarter.startFailure(6));
            problems.add(how + " restart: " + r.path("error").asText() + "\n" + r.path("startFailure").asText());
            System.out.println("after " + how + ": " + r.path("error").asText());
            return false;
        }
        final ScaleWorkload.Outcome all = w.produce(topicsMade, 1, deadline(options.stepTimeoutSeconds));
        r.put("allPartitionsMs", all.complete() ? ms(System.nanoTime() - spawned) : -1);
        r.put("partitionsWritable", all.done());
        if (!all.complete())
        {
            problems.add(how + " restart: " + all.done() + " of " + all.wanted() + " partitions took a record: " + all.error());
        }
        System.out.printf(Locale.ROOT, "%s: stopped in %d ms, first produce %.2f s after spawn, every partition %.2f s%n", how,
            stop[0], r.path("firstProduceMs").asLong() / 1000.0, r.path("allPartitionsMs").asLong() / 1000.0);
        return true;
    }

    private void outcome(final ObjectNode node, final String name, final ScaleWorkload.Outcome o, final ArrayNode problems)
    {
        final ObjectNode n = node.putObject(name);
        n.put("wanted", o.wanted());
        n.put("done", o.done());
        n.put("ms", ms(o.elapsedNanos()));
        if (o.error() != null)
        {
            n.put("error", o.error());
            problems.add(name + ": " + o.done() + " of " + o.wanted() + ": " + o.error());
        }
    }

    private static void snapshot(final ArrayNode snapshots, final String phase, final Restarter restarter, final Path data)
    {
        final ProcessCounters.Snapshot s = ProcessCounters.read(phase, restarter.pid(), data);
        s.into(snapshots.addObject());
        System.out.printf(Locale.ROOT, "%s: alive %s, %d open files (%d in data), %d mappings (%d of data), RSS %.0f MiB "
                + "(anon %.0f, file %.0f), disk %.1f MiB allocated (%.1f apparent) in %d files%n", phase, s.alive(), s.openFiles(),
            s.openFilesInData(), s.mappings(), s.mappingsOfData(), s.rss() / 1048576.0, s.rssAnon() / 1048576.0,
            s.rssFile() / 1048576.0, s.diskAllocated() / 1048576.0, s.diskApparent() / 1048576.0, s.dataFiles());
    }

    private static long deadline(final int seconds)
    {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
    }

    private static long ms(final long nanos)
    {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    private ObjectNode meta()
    {
        final ObjectNode meta = Machine.describeRun(mapper.createObjectNode(), options.command);
        meta.put("partitions", options.partitions);
        meta.put("topics", options.topics);
        return meta;
    }

    private void settings(final ArrayNode settings)
    {
        settings.add(options.partitions + " partitions as " + options.topics + " topics of " + options.partitionsPerTopic()
            + " (replication factor 1), created with kafka-clients 4.4 Admin.createTopics, " + options.batch
            + " topics a request, stopping at the first batch with a failed topic; then " + options.records
            + " records of " + ScaleWorkload.VALUE_BYTES + " B to every partition (acks=1, linger.ms=5) and all read back "
            + "by one consumer (assign, no group); create is timed to the Admin's answer (Kafka's controller has then "
            + "committed the topics, its broker creates the logs afterwards: produce to every partition is timed to the "
            + "last acknowledgement)");
        settings.add("brokers: Apache Kafka 4.4.0 (KRaft, one node as broker and controller, its defaults"
            + overrides(options.kafkaOverrides) + ") then Ferrite (FerriteServer, its defaults" + overrides(options.ferriteOverrides)
            + "), each started as it ships (BrokerProcess, as side-by-side does) in a child JVM with "
            + String.join(" ", BrokerProcess.jvmOptions(options.heap)) + ", a fresh temporary data directory, loopback only, "
            + "the runner's own limits (ulimit -n as inherited, nothing raised for either)");
        settings.add("counters from /proc/PID: open files = entries of fd/ (in data dir: those linked into the data "
            + "directory), mappings = lines of maps (of data dir: those naming a file in it), RSS = VmRSS with RssAnon and "
            + "RssFile from status; disk = du -s -B1 of the data directory (allocated blocks, st_blocks x 512) and du "
            + "--apparent-size; per partition = (figure - figure before any topic) / partitions created");
        settings.add("restarts: SIGTERM (clean) then SIGKILL, each followed by the same command line started again on the "
            + "same data directory and ports; timed from that spawn to the first acknowledged produce (acks=1, partition 0 of "
            + "the first topic, retried) and to one record acknowledged on every partition; after the SIGKILL start every "
            + "partition is read back again; each step has a deadline (" + options.stepTimeoutSeconds + " s, restarts "
            + options.restartTimeoutSeconds + " s)");
    }

    private static String overrides(final List<String> o)
    {
        return o.isEmpty() ? "" : "; overrides " + String.join(", ", o);
    }
}
