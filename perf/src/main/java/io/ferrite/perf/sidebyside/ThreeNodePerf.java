package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartitionInfo;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Issue 14's performance side by side: Apache Kafka 4.4 and Ferrite each as three nodes on this machine
 * ({@link ThreeNodes}: child JVMs on loopback, broker and controller in each), started afresh for each round, rounds
 * alternating Kafka, Ferrite. On each a topic of one partition with replication factor 3 and
 * {@code min.insync.replicas=2} per workload: (a) producer throughput, one kafka-clients 4.4 producer with acks=all
 * as the single-node runner's producer rows ({@link Workloads#throughput}), with the three nodes' CPU per MB summed;
 * (b) latency at a fixed rate, acks=all, linger.ms=0, from each record's intended send time to its acknowledgement
 * ({@link Workloads#paced}), warm-up excluded. Beside them the failover time of the latest kill-the-leader record
 * ({@link FailoverRecord}). Writes the side-by-side JSON that {@code perf/bin/jmh-report} renders into RESULTS.md
 * ({@link SideBySideReport}), with the goals as targets ({@link SideBySideTargets}).
 *
 * <pre>
 * ThreeNodePerf [--rounds 3] [--heap 512m] [--records 200000] [--rates 5000] [--rate-seconds 20] [--warm-seconds 5]
 *               [--skip-kafka] [--smoke] [--deadline 180] [--failover-from jmh-results/kill-the-leader]
 *               [--ferrite-override k=v]... [--kafka-override k=v]... [--out FILE.json]
 * </pre>
 */
public final class ThreeNodePerf
{
    /** Every measure's name starts so: its targets are issue 14's ({@link SideBySideTargets}). */
    public static final String PREFIX = "3 nodes RF=3: ";

    static final class Options
    {
        int rounds = 3;
        String heap = "512m";
        int records = 200_000;
        int[] rates = {5_000};
        double rateSeconds = 20;
        double warmSeconds = 5;
        boolean skipKafka;
        int deadlineSeconds = 180;
        Path failoverFrom = Path.of("jmh-results", "kill-the-leader");
        final List<String> ferriteOverrides = new ArrayList<>();
        final List<String> kafkaOverrides = new ArrayList<>();
        Path out;
        String classPath = System.getProperty("java.class.path");
        String command = "";

        static Options parse(final String... args)
        {
            final Options o = new Options();
            o.command = "three-nodes " + String.join(" ", args);
            for (int i = 0; i < args.length; i++)
            {
                switch (args[i])
                {
                    case "--smoke" ->
                    {
                        o.rounds = 1;
                        o.heap = "256m";
                        o.records = 5_000;
                        o.rates = new int[] {500};
                        o.rateSeconds = 2;
                        o.warmSeconds = 1;
                    }
                    case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
                    case "--heap" -> o.heap = args[++i];
                    case "--records" -> o.records = Integer.parseInt(args[++i]);
                    case "--rates" -> o.rates = java.util.Arrays.stream(args[++i].split(",")).mapToInt(r -> Integer.parseInt(r.trim())).toArray();
                    case "--rate-seconds" -> o.rateSeconds = Double.parseDouble(args[++i]);
                    case "--warm-seconds" -> o.warmSeconds = Double.parseDouble(args[++i]);
                    case "--skip-kafka" -> o.skipKafka = true;
                    case "--deadline" -> o.deadlineSeconds = Integer.parseInt(args[++i]);
                    case "--failover-from" -> o.failoverFrom = Path.of(args[++i]);
                    case "--ferrite-override" -> o.ferriteOverrides.add(args[++i]);
                    case "--kafka-override" -> o.kafkaOverrides.add(args[++i]);
                    case "--out" -> o.out = Path.of(args[++i]);
                    case "--classpath" -> o.classPath = args[++i];
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            return o;
        }

        long deadline()
        {
            return System.nanoTime() + TimeUnit.SECONDS.toNanos(deadlineSeconds);
        }
    }

    private final Options options;
    private final MetricTable metrics = new MetricTable();
    private final List<String> problems = new ArrayList<>();
    private final List<String> load = new ArrayList<>();

    ThreeNodePerf(final Options options)
    {
        this.options = options;
    }

    public static void main(final String[] args) throws Exception
    {
        PartitionScale.quietClientLogs();
        final ObjectNode json = new ThreeNodePerf(Options.parse(args)).run();
        System.out.println(SideBySideReport.render("side-by-side-3-nodes", json));
    }

    /** Runs every round, reads the failover record, answers the JSON (also written to {@code --out} when given). */
    ObjectNode run() throws Exception
    {
        final long started = System.nanoTime();
        for (int round = 1; round <= options.rounds; round++)
        {
            if (!options.skipKafka)
            {
                round(Kind.KAFKA, round);
            }
            round(Kind.FERRITE, round);
        }
        final FailoverRecord failover = FailoverRecord.latest(options.failoverFrom);
        if (failover == null)
        {
            problems.add("no kill-the-leader record in " + options.failoverFrom + ": no failover figure");
        }
        else
        {
            final String name = PREFIX + "failover, leader SIGKILL to the first acks=all acknowledgement (kill-the-leader/"
                + failover.file() + ")";
            failover.seconds().forEach((kind, figures) -> figures.forEach(s -> metrics.add(kind, name, "s", false, s)));
        }
        final ObjectNode json = toJson(failover);
        final double seconds = Math.round((System.nanoTime() - started) / 1e8) / 10.0;
        ((ObjectNode) json.path("meta")).put("runSeconds", seconds);
        System.out.println("the run took " + seconds + " s");
        if (options.out != null)
        {
            SideBySide.writeJson(options.out, json);
        }
        return json;
    }

    /** One system's round: its three nodes started, the two workloads, the nodes killed; what fails is a problem and the run goes on. */
    private void round(final Kind kind, final int round) throws Exception
    {
        System.out.printf(Locale.ROOT, "%n=== %s, 3 nodes, round %d ===%n", kind.label, round);
        final String label = kind.label + " round " + round;
        final String loadBefore = Machine.loadAverage();
        ThreeNodes cluster = null;
        try
        {
            cluster = ThreeNodes.start(kind, options.heap, options.classPath,
                kind == Kind.KAFKA ? options.kafkaOverrides : options.ferriteOverrides);
            workloads(kind, round, label, cluster);
        }
        catch (final Exception ex)
        {
            problems.add(label + (cluster == null ? ": start failed: " : " failed: ") + ex);
            System.out.println("FAILED " + label + ": " + ex);
            ex.printStackTrace(System.out);
        }
        finally
        {
            load.add(label + " " + loadBefore + " -> " + Machine.loadAverage());
            if (cluster != null)
            {
                cluster.problems(4).stream().limit(12).forEach(p -> problems.add(label + " broker log: " + p));
                cluster.close();
            }
        }
    }

    private void workloads(final Kind kind, final int round, final String label, final ThreeNodes cluster) throws Exception
    {
        try (Admin admin = FailoverClients.admin(cluster.bootstrap()))
        {
            final long up = KillTheLeader.awaitBrokers(admin, options.deadline());
            if (up < 0)
            {
                problems.add(label + ": the three nodes did not list each other within " + options.deadlineSeconds + " s");
                return;
            }
            // from the first node's spawn (Kafka's storage formats run before it, not counted, as in the single-node runner)
            metrics.add(kind, PREFIX + "start-up, spawn of the first node to DescribeCluster listing the 3", "s", false,
                (up - cluster.node(1).spawnedNanos) / 1e9);
            final Workloads w = new Workloads(cluster.bootstrap(), p ->
            {
                problems.add(label + ": " + p);
                System.out.println("PROBLEM " + label + ": " + p);
            });

            final String topic = topic(admin, "rf3-throughput-r" + round);
            final long cpuBefore = brokersCpuNanos(cluster);
            final long clientBefore = SideBySide.runnerCpuNanos();
            final double[] t = w.throughput(topic, "all", "none", options.records);
            final double megabytes = SideBySide.megabytes(options.records);
            final double cpuMsPerMb = (brokersCpuNanos(cluster) - cpuBefore) / 1e6 / megabytes;
            final double clientMsPerMb = (SideBySide.runnerCpuNanos() - clientBefore) / 1e6 / megabytes;
            final String name = PREFIX + "producer throughput acks=all none";
            metrics.add(kind, name, "records/s", true, t[0]);
            metrics.add(kind, name, "MB/s", true, t[1]);
            metrics.add(kind, name, "broker CPU ms per MB (the 3 nodes summed)", false, cpuMsPerMb);
            metrics.add(kind, name, "client CPU ms per MB (the runner's JVM)", false, clientMsPerMb);
            System.out.printf(Locale.ROOT, "%s: %.0f records/s, %.1f MB/s, broker CPU %.2f ms/MB (3 nodes)%n", name, t[0], t[1],
                cpuMsPerMb);
            checkIsr(admin, label, topic, "throughput");

            for (final int rate : options.rates)
            {
                final String latencyTopic = topic(admin, "rf3-latency-" + rate + "-r" + round);
                final Histogram h = w.paced(latencyTopic, "all", rate, options.warmSeconds, options.rateSeconds, true);
                final String latency = PREFIX + "latency at " + rate + " records/s (acks=all, intended send time to ack)";
                metrics.add(kind, latency, "p50 us", false, h.getValueAtPercentile(50));
                metrics.add(kind, latency, "p99 us", false, h.getValueAtPercentile(99));
                metrics.add(kind, latency, "p99.9 us", false, h.getValueAtPercentile(99.9));
                metrics.add(kind, latency, "max us", false, h.getMaxValue());
                System.out.printf(Locale.ROOT, "%s: p50 %d p99 %d p99.9 %d max %d us (%d samples)%n", latency,
                    h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(),
                    h.getTotalCount());
                checkIsr(admin, label, latencyTopic, "latency at " + rate + "/s");
            }
        }
    }

    /** Creates {@code topic} (1 partition, replication factor 3, min.insync.replicas=2) and waits until the 3 nodes are its ISR. */
    private String topic(final Admin admin, final String topic) throws Exception
    {
        FailoverClients.createTopic(admin, topic, 2);
        if (FailoverClients.awaitPartition(admin, topic, KillTheLeader::fullIsr, options.deadline()) == null)
        {
            throw new IllegalStateException(topic + " never had a leader and the 3 nodes in its ISR within "
                + options.deadlineSeconds + " s");
        }
        return topic;
    }

    /** A problem when the partition's ISR is no longer the 3 nodes after a workload: acks=all then waited for fewer replicas. */
    private void checkIsr(final Admin admin, final String label, final String topic, final String workload)
    {
        final TopicPartitionInfo p = FailoverClients.describe(admin, topic);
        if (p == null || !KillTheLeader.fullIsr(p))
        {
            problems.add(label + ": after the " + workload + " run the ISR of " + topic + " was "
                + (p == null ? "not described" : p.isr()) + ", not the 3 nodes (acks=all waited for fewer replicas)");
        }
    }

    private static long brokersCpuNanos(final ThreeNodes cluster)
    {
        long sum = 0;
        for (int id = 1; id <= ThreeNodes.NODES; id++)
        {
            sum += cluster.node(id).cpuNanos();
        }
        return sum;
    }

    private ObjectNode toJson(final FailoverRecord failover)
    {
        final ObjectNode json = new ObjectMapper().createObjectNode();
        json.put("kind", SideBySideReport.KIND);
        Machine.describeRun(json.putObject("meta"), options.command);
        final ArrayNode settings = json.putArray("settings");
        settings.add("issue 14's performance side by side: each system as 3 nodes on loopback, each node a child JVM that is "
            + "broker and controller (Kafka's combined KRaft mode; Ferrite's cluster mode, which runs Kafka's KRaft "
            + "controller): Apache Kafka 4.4.0 (kafka.Kafka, storage formatted with one cluster id" + overrides(options.kafkaOverrides)
            + ") and Ferrite (FerriteServer with replication-lite, its defaults: ferrite.durability=flush, i.e. the page cache"
            + overrides(options.ferriteOverrides) + "), both with " + String.join(", ", ThreeNodes.commonSettings())
            + " and Kafka's defaults otherwise; each node with " + String.join(" ", BrokerProcess.jvmOptions(options.heap))
            + "; fresh temporary directories, started afresh for each round, rounds alternating Kafka, Ferrite ("
            + options.rounds + " of each)");
        settings.add("clients: kafka-clients 4.4.0 in the runner's JVM (they and the 3 node JVMs share the "
            + "machine's cores), bootstrap the 3 nodes; records of 1 KiB (random A-Z); per workload a new topic of 1 partition, "
            + "replication factor 3, min.insync.replicas=2 (topic config), waited for until its ISR is the 3 nodes, and "
            + "checked to still be after the workload (a problem otherwise)");
        settings.add("producer throughput: one producer, acks=all (idempotent, kafka-clients' default), " + options.records
            + " records, batch.size=65536, linger.ms=5, no compression, send with callback then flush (as the single-node "
            + "runner's producer rows); broker CPU: user + system time of the 3 node JVMs (/proc/<pid>/stat) over the run, "
            + "summed, per MB of record values; client CPU likewise for the runner's JVM");
        settings.add("latency at fixed load: one producer, acks=all (idempotent), linger.ms=0, records on a fixed schedule at "
            + rates() + " records/s (parkNanos, no spinning) for " + options.rateSeconds + " s after " + options.warmSeconds
            + " s of warm-up (not recorded); each record's latency from its intended time on the schedule to its "
            + "acknowledgement (HdrHistogram, us): a late send() counts its lateness (no coordinated omission)");
        if (failover != null)
        {
            settings.add(failover.describe());
        }
        settings.add("targets (issue 14): Ferrite's throughput at least 2x Kafka's (MB/s), its p99 at most 0.2x Kafka's, its "
            + "failover time at most 0.2x Kafka's");
        metrics.writeTo(json.putArray("metrics"));
        json.putArray("context");
        json.putArray("perRecord");
        final ArrayNode ld = json.putArray("load");
        load.forEach(ld::add);
        final ArrayNode pb = json.putArray("problems");
        problems.forEach(pb::add);
        return json;
    }

    private String rates()
    {
        return String.join(", ", java.util.Arrays.stream(options.rates).mapToObj(Integer::toString).toList());
    }

    private static String overrides(final List<String> o)
    {
        return o.isEmpty() ? "" : "; overrides " + String.join(", ", o);
    }
}
