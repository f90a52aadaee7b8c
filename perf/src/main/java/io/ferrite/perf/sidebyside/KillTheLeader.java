package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The acks lecture's kill-the-leader demonstration (issue 14), Apache Kafka 4.4 and Ferrite side by side: each as
 * a three-node cluster ({@link ThreeNodes}), a topic of one partition with replication factor 3 and
 * {@code min.insync.replicas=2} per case; for acks=1 and acks=all ({@link LeaderKill}) a producer at a steady rate,
 * the partition's leader SIGKILLed at the midpoint, the partition read back from the survivors, the killed node
 * started again and timed back into the ISR, the partition read back again after the rejoin; then two of the three
 * nodes stopped ({@link TwoDown}).
 *
 * <pre>
 * KillTheLeader [--rate 1000] [--seconds 20] [--rounds 1] [--down-seconds 10] [--heap 512m]
 *               [--skip-kafka] [--skip-ferrite] [--skip-two-down] [--acks 1,all]
 *               [--ferrite-override k=v]... [--kafka-override k=v]... [--out FILE.json] [--markdown FILE.md]
 * </pre>
 */
public final class KillTheLeader
{
    static final class Options
    {
        int rate = 1000;
        int seconds = 20;
        int rounds = 1;
        int downSeconds = 10;
        String heap = "512m";
        boolean skipKafka;
        boolean skipFerrite;
        boolean skipTwoDown;
        List<String> acks = List.of("1", "all");
        final List<String> ferriteOverrides = new ArrayList<>();
        final List<String> kafkaOverrides = new ArrayList<>();
        Path out;
        Path markdown;
        String classPath = System.getProperty("java.class.path");
        String command = "";
        int deadlineSeconds = 180;

        static Options parse(final String... args)
        {
            final Options o = new Options();
            o.command = "kill-the-leader " + String.join(" ", args);
            for (int i = 0; i < args.length; i++)
            {
                switch (args[i])
                {
                    case "--rate" -> o.rate = Integer.parseInt(args[++i]);
                    case "--seconds" -> o.seconds = Integer.parseInt(args[++i]);
                    case "--rounds" -> o.rounds = Integer.parseInt(args[++i]);
                    case "--down-seconds" -> o.downSeconds = Integer.parseInt(args[++i]);
                    case "--heap" -> o.heap = args[++i];
                    case "--skip-kafka" -> o.skipKafka = true;
                    case "--skip-ferrite" -> o.skipFerrite = true;
                    case "--skip-two-down" -> o.skipTwoDown = true;
                    case "--acks" -> o.acks = List.of(args[++i].split(","));
                    case "--ferrite-override" -> o.ferriteOverrides.add(args[++i]);
                    case "--kafka-override" -> o.kafkaOverrides.add(args[++i]);
                    case "--deadline" -> o.deadlineSeconds = Integer.parseInt(args[++i]);
                    case "--out" -> o.out = Path.of(args[++i]);
                    case "--markdown" -> o.markdown = Path.of(args[++i]);
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
    private final ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    KillTheLeader(final Options options)
    {
        this.options = options;
    }

    public static void main(final String[] args) throws Exception
    {
        PartitionScale.quietClientLogs();
        final ObjectNode json = new KillTheLeader(Options.parse(args)).run();
        System.out.println(KillTheLeaderReport.render(json));
    }

    ObjectNode run() throws Exception
    {
        final ObjectNode json = mapper.createObjectNode();
        json.put("kind", KillTheLeaderReport.KIND);
        final ObjectNode meta = Machine.describeRun(json.putObject("meta"), options.command);
        meta.put("rate", options.rate);
        meta.put("seconds", options.seconds);
        meta.put("rounds", options.rounds);
        settings(json.putArray("settings"));
        final ArrayNode systems = json.putArray("systems");
        if (!options.skipKafka)
        {
            systems.add(system(Kind.KAFKA));
            record(json);
        }
        if (!options.skipFerrite)
        {
            systems.add(system(Kind.FERRITE));
        }
        record(json);
        return json;
    }

    private void record(final ObjectNode json) throws IOException
    {
        if (options.out == null)
        {
            return;
        }
        final Path out = options.out.toAbsolutePath();
        Files.createDirectories(out.getParent());
        Files.writeString(out, mapper.writeValueAsString(json) + "\n", StandardCharsets.UTF_8);
        System.out.println("wrote " + out);
        if (options.markdown != null)
        {
            Files.writeString(options.markdown, KillTheLeaderReport.renderDirectory(out.getParent()), StandardCharsets.UTF_8);
            System.out.println("wrote " + options.markdown);
        }
    }

    /** One system: its cluster started, every round's cases, the two-down case; whatever fails is recorded and the run goes on. */
    private ObjectNode system(final Kind kind) throws Exception
    {
        System.out.printf(Locale.ROOT, "%n=== %s, 3 nodes ===%n", kind.label);
        final ObjectNode node = mapper.createObjectNode();
        node.put("system", kind.name().toLowerCase(Locale.ROOT));
        node.put("label", kind.label);
        final ArrayNode problems = node.putArray("problems");
        final String loadBefore = Machine.loadAverages();
        final long started = System.nanoTime();
        ThreeNodes cluster = null;
        try
        {
            cluster = ThreeNodes.start(kind, options.heap, options.classPath,
                kind == Kind.KAFKA ? options.kafkaOverrides : options.ferriteOverrides);
            run(node, cluster, started);
        }
        catch (final Exception ex)
        {
            problems.add((cluster == null ? "start failed: " : "run failed: ") + ex);
            ex.printStackTrace(System.out);
        }
        finally
        {
            if (cluster != null)
            {
                cluster.problems(6).stream().limit(30).forEach(p -> problems.add("log: " + p));
            }
            node.put("load", loadBefore + " -> " + Machine.loadAverages());
            if (cluster != null)
            {
                cluster.close();
            }
            node.put("runSeconds", Math.round((System.nanoTime() - started) / 1e8) / 10.0);
        }
        return node;
    }

    /** Every round's cases and the two-down case on a cluster started at {@code started}, into {@code node}. */
    private void run(final ObjectNode node, final ThreeNodes cluster, final long started) throws Exception
    {
        final ArrayNode problems = node.withArray("problems");
        try (Admin admin = FailoverClients.admin(cluster.bootstrap()))
        {
            final long up = awaitBrokers(admin, options.deadline());
            node.put("startMs", up < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(up - started));
            if (up < 0)
            {
                problems.add("the three nodes did not list each other within " + options.deadlineSeconds + " s");
                return;
            }
            final ArrayNode cases = node.putArray("cases");
            for (int round = 1; round <= options.rounds; round++)
            {
                for (final String acks : options.acks)
                {
                    final ObjectNode c = new LeaderKill(cluster, admin, options).run(acks, round);
                    cases.add(c);
                    c.path("problems").forEach(p -> problems.add("acks=" + acks + " round " + c.path("round").asInt() + ": " + p.asText()));
                }
            }
            if (!options.skipTwoDown)
            {
                final ObjectNode d = new TwoDown(cluster, admin, options).run();
                node.set("twoDown", d);
                d.path("problems").forEach(p -> problems.add("two down: " + p.asText()));
            }
        }
    }

    /** Waits until DescribeCluster lists the three brokers; the time it did, or -1 at the deadline. */
    public static long awaitBrokers(final Admin admin, final long deadline) throws InterruptedException
    {
        while (System.nanoTime() < deadline)
        {
            try
            {
                if (admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).size() == ThreeNodes.NODES)
                {
                    return System.nanoTime();
                }
            }
            catch (final Exception ex)
            {
                // not up yet
            }
            Thread.sleep(100);
        }
        return -1;
    }

    /** Whether {@code p} names a live leader and every node in its ISR. */
    public static boolean fullIsr(final TopicPartitionInfo p)
    {
        return FailoverClients.hasLeaderAndIsr(p, ThreeNodes.NODES);
    }

    private void settings(final ArrayNode settings)
    {
        settings.add("each system as 3 nodes on loopback, each node broker and controller (Kafka's combined KRaft mode; "
            + "Ferrite's cluster mode runs Kafka's KRaft controller): Apache Kafka 4.4.0 (kafka.Kafka, storage formatted "
            + "with one cluster id" + overrides(options.kafkaOverrides) + ") then Ferrite (FerriteServer with "
            + "replication-lite" + overrides(options.ferriteOverrides) + "), fresh temporary data directories, "
            + "each node a child JVM with " + String.join(" ", BrokerProcess.jvmOptions(options.heap))
            + "; both with " + String.join(", ", ThreeNodes.commonSettings())
            + " and Kafka's defaults otherwise (broker.session.timeout.ms 9000, broker.heartbeat.interval.ms 2000, "
            + "replica.lag.time.max.ms 30000, unclean.leader.election.enable false)");
        settings.add("per case a new topic of 1 partition, replication factor 3, min.insync.replicas=2 (topic config), "
            + "created with Admin.createTopics and waited for until its ISR is the 3 nodes; one kafka-clients 4.4 producer "
            + "(bootstrap: the 3 nodes) sends records numbered 0, 1, ... (key = value = the number) to partition 0 at "
            + options.rate + "/s on a fixed schedule, all " + options.rate * options.seconds + " of them (" + options.seconds
            + " s when it keeps up; a record behind its time is sent at once, none is skipped); acks=all with enable.idempotence=true "
            + "(kafka-clients' default, as the lecture's acks=all), acks=1 with enable.idempotence=false (the idempotent "
            + "producer needs acks=all); otherwise kafka-clients' defaults (linger.ms 5, delivery.timeout.ms 120000, "
            + "request.timeout.ms 30000, max.in.flight 5, retries unbounded), max.block.ms 10000");
        settings.add("once half of the records are sent the partition's leader (Admin.describeTopics) gets SIGKILL; the "
            + "producer goes on; after the last send it is flushed (every record acknowledged or failed); the partition is "
            + "read back up to its end offset (high watermark, waited for until it covers the highest offset acknowledged "
            + "by the new leader) by a consumer (assign, no group) bootstrapped on the 2 survivors; once the killed node is "
            + "back and the ISR is the 3 nodes, the leader of then gets SIGKILL too (so one of the other two leads: the "
            + "first killed node when it comes first among the partition's replicas), the partition is read back again "
            + "through those two, and the second killed node is started again until the ISR is the 3; "
            + "acknowledged-but-lost = records acknowledged whose number is missing from either read; duplicates = "
            + "records read back more than once (the larger of the two reads); "
            + "kill to first acknowledgement = from the SIGKILL to the first acknowledgement of a record sent after it; "
            + "new leader = the first leader other than the killed node Admin.describeTopics shows (polled every 50 ms "
            + "through the survivors); then the killed node is started again on its files and timed from the spawn to "
            + "its id in the partition's ISR");
        settings.add("two down: a new topic as above (min.insync.replicas=2) and one with min.insync.replicas=3, each with "
            + "the 3 nodes in its ISR; on the first an acks=all producer (enable.idempotence=false, retries=0: the broker's "
            + "error reaches the callback, as the lecture shows NOT_ENOUGH_REPLICAS) and an acks=1 producer "
            + "(enable.idempotence=false), each at " + options.rate + "/s; after 2 s a follower that leads neither topic "
            + "gets SIGKILL; once it is out of the second topic's ISR, 5 acks=all records (retries=0) go to that topic one "
            + "at a time; then the other follower gets SIGKILL (the leader stays; with 2 of 3 voters gone the controller "
            + "quorum is lost), " + options.downSeconds + " s later the first killed follower is started again and "
            + "timed to the first acks=all acknowledgement of a record sent after its start and into the ISR, the "
            + "producers run 3 s more, then the other follower is started again and timed until the ISR is the 3 nodes");
    }

    private static String overrides(final List<String> o)
    {
        return o.isEmpty() ? "" : "; overrides " + String.join(", ", o);
    }
}
