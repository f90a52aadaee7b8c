package io.ferrite.perf.soak;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.KillTheLeader;
import io.ferrite.perf.sidebyside.Machine;
import io.ferrite.perf.sidebyside.PartitionScale;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The fault-injection soak (issue 14), in the manner of Jepsen's Kafka and Redpanda analyses: a three-node cluster
 * ({@link SoakCluster}: Ferrite, or Apache Kafka 4.4 for comparison) behind link proxies, a topic of
 * {@code --partitions} partitions with replication factor 3 and {@code min.insync.replicas=2}, idempotent acks=all
 * producers ({@link SoakProducer}) and consumers ({@link SoakConsumer}) running while the {@link Nemesis} injects
 * faults from a seed for {@code --seconds}; then every fault is healed, the ISR awaited full, the producers stopped
 * (every record sent acknowledged or failed), the ISR awaited full again and the high watermarks taken until two
 * takes agree, each replica's files awaited up to the high watermark, the consumers given the time to read to it,
 * every replica's copy of every partition read from its node's files ({@link ReplicaReader}) and the {@link Checker}
 * run. Producers, consumers and the nemesis are stopped whatever happens. The JSON and markdown ({@link SoakReport}) say what was injected, acknowledged, lost, duplicated, reordered
 * and divergent.
 */
public final class Soak
{
    static final String TOPIC = "soak";

    private final SoakOptions options;
    private final ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    Soak(final SoakOptions options)
    {
        this.options = options;
    }

    public static void main(final String[] args) throws Exception
    {
        PartitionScale.quietClientLogs();
        final ObjectNode json = new Soak(SoakOptions.parse(args)).run();
        System.out.println(SoakReport.render(json));
    }

    /** Runs the soak; the JSON (written to {@code --out} with its markdown when given). */
    public static ObjectNode run(final String... args) throws Exception
    {
        PartitionScale.quietClientLogs();
        return new Soak(SoakOptions.parse(args)).run();
    }

    ObjectNode run() throws Exception
    {
        System.out.printf(Locale.ROOT, "soak: %s, seed %d, faults %s, %d s%n", options.system.label, options.seed,
            String.join(",", options.faults), options.seconds);
        final ObjectNode json = mapper.createObjectNode();
        json.put("kind", SoakReport.KIND);
        final ObjectNode meta = Machine.describeRun(json.putObject("meta"), options.command);
        meta.put("system", options.system.label);
        meta.put("seed", options.seed);
        meta.put("faults", String.join(",", options.faults));
        meta.put("seconds", options.seconds);
        meta.put("producers", options.producers);
        meta.put("ratePerProducer", options.rate);
        meta.put("consumers", options.consumers);
        meta.put("partitions", options.partitions);
        meta.put("gapMs", options.gapMs[0] + ".." + options.gapMs[1]);
        meta.put("holdMs", options.holdMs[0] + ".." + options.holdMs[1]);
        meta.put("overrides", String.join(" ", options.overrides));
        final ArrayNode problems = json.putArray("problems");
        final String loadBefore = Machine.loadAverages();
        SoakCluster cluster = null;
        try
        {
            cluster = SoakCluster.start(options.system, options.heap, options.classPath, options.overrides);
            run(json, cluster);
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
                cluster.problems(5).stream().limit(40).forEach(p -> problems.add("log: " + p));
            }
            json.put("load", loadBefore + " -> " + Machine.loadAverages());
            if (cluster != null)
            {
                cluster.close();
            }
        }
        record(json);
        return json;
    }

    private void run(final ObjectNode json, final SoakCluster cluster) throws Exception
    {
        final ArrayNode problems = json.withArray("problems");
        try (Admin admin = admin(cluster.bootstrap()))
        {
            if (KillTheLeader.awaitBrokers(admin, deadline()) < 0)
            {
                problems.add("the three nodes did not list each other within " + options.deadlineSeconds + " s");
                return;
            }
            admin.createTopics(List.of(new NewTopic(TOPIC, options.partitions, (short) SoakCluster.NODES)
                .configs(Map.of("min.insync.replicas", "2")))).all().get(60, TimeUnit.SECONDS);
            if (!awaitFullIsr(admin, deadline()))
            {
                problems.add("the topic's ISR was not full within " + options.deadlineSeconds + " s");
                return;
            }
            final List<SoakConsumer> consumers = new ArrayList<>();
            final List<SoakProducer> producers = new ArrayList<>();
            Nemesis nemesis = null;
            try
            {
                for (int c = 1; c <= options.consumers; c++)
                {
                    consumers.add(new SoakConsumer(c, cluster.bootstrap(), TOPIC, options.partitions).start());
                }
                final int capacity = (int) Math.min(Integer.MAX_VALUE - 8, (long) options.rate * (options.seconds + 3L * options.deadlineSeconds));
                for (int p = 1; p <= options.producers; p++)
                {
                    producers.add(new SoakProducer(p, cluster.bootstrap(), TOPIC, options.partitions, options.rate, capacity).start());
                }
                final long zero = System.nanoTime();
                nemesis = new Nemesis(cluster, options.seed, options.faults, zero,
                    zero + TimeUnit.SECONDS.toNanos(options.seconds), options.gapMs, options.holdMs);
                final Thread nemesisThread = new Thread(nemesis, "nemesis");
                nemesisThread.start();
                nemesisThread.join(TimeUnit.SECONDS.toMillis(options.seconds) + options.holdMs[1] + 60_000);
                nemesis.stop();
                nemesisThread.join();
                cluster.healAll();
                final long healed = System.nanoTime();
                System.out.printf(Locale.ROOT, "healed at %d ms; awaiting the full ISR%n", TimeUnit.NANOSECONDS.toMillis(healed - zero));
                final boolean fullAfterHeal = awaitFullIsr(admin, deadline());
                json.put("healToFullIsrMs", fullAfterHeal ? TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - healed) : -1);
                for (final SoakProducer p : producers)
                {
                    p.stop(Duration.ofSeconds(150));
                }
                final Map<Integer, Long> hw = settledHighWatermarks(admin, problems);
                final List<Checker.Replica> replicas = awaitReplicas(cluster, hw);
                awaitConsumers(consumers, hw, problems);
                stopConsumers(consumers, problems);
                final List<Checker.Ack> acks = new ArrayList<>();
                producers.forEach(p -> acks.addAll(p.acks()));
                final List<Checker.Seen> seen = new ArrayList<>();
                consumers.forEach(c -> seen.addAll(c.seen()));
                final Checker.Result result = Checker.check(acks, seen, hw, replicas);
                json.set("check", result.toJson());
                final ObjectNode hws = json.putObject("highWatermarks");
                hw.forEach((p, v) -> hws.put(Integer.toString(p), v));
            }
            finally
            {
                // on every path, so that a run that throws leaves no client or fault running
                if (nemesis != null)
                {
                    nemesis.stop();
                }
                for (final SoakProducer p : producers)
                {
                    p.stop(Duration.ofSeconds(5));
                }
                stopConsumers(consumers, problems);
                describeClients(json, producers, consumers);
                final ObjectNode connections = json.putObject("connectionsAccepted");
                cluster.links.acceptedCounts().forEach(connections::put);
                json.put("proxyAcceptFailures", cluster.links.acceptFailures());
                final ArrayNode events = json.putArray("faults");
                for (final Nemesis.Event e : nemesis == null ? List.<Nemesis.Event>of() : nemesis.events())
                {
                    events.add(mapper.valueToTree(e));
                }
            }
        }
    }

    /** Stops the consumers (those stopped already at once), each one that did not end a problem. */
    private static void stopConsumers(final List<SoakConsumer> consumers, final ArrayNode problems) throws InterruptedException
    {
        for (final SoakConsumer c : consumers)
        {
            if (!c.stop())
            {
                problems.add("consumer " + c.id() + " did not stop within 30 s");
            }
        }
    }

    private static void describeClients(final ObjectNode json, final List<SoakProducer> producers, final List<SoakConsumer> consumers)
    {
        final ArrayNode ps = json.putArray("producers");
        for (final SoakProducer p : producers)
        {
            final ObjectNode o = ps.addObject();
            o.put("id", p.id());
            o.put("sent", p.sent());
            o.put("acknowledged", p.acks().size());
            final ObjectNode errors = o.putObject("errors");
            p.errors().forEach(errors::put);
        }
        final ArrayNode cs = json.putArray("consumers");
        for (int i = 0; i < consumers.size(); i++)
        {
            final ObjectNode o = cs.addObject();
            o.put("id", i + 1);
            o.put("read", consumers.get(i).seen().size());
            final ObjectNode errors = o.putObject("errors");
            consumers.get(i).errors().forEach(errors::put);
        }
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
            Files.writeString(options.markdown, SoakReport.render(json), StandardCharsets.UTF_8);
            System.out.println("wrote " + options.markdown);
        }
    }

    private long deadline()
    {
        return System.nanoTime() + TimeUnit.SECONDS.toNanos(options.deadlineSeconds);
    }

    static Admin admin(final String bootstrap)
    {
        final Properties a = new Properties();
        a.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        a.put(AdminClientConfig.RECONNECT_BACKOFF_MAX_MS_CONFIG, 500);
        a.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 5_000);
        a.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 10_000);
        return Admin.create(a);
    }

    /** Waits until every partition of the topic has a leader and the three nodes in its ISR. */
    private static boolean awaitFullIsr(final Admin admin, final long deadline) throws InterruptedException
    {
        while (System.nanoTime() < deadline)
        {
            try
            {
                final List<TopicPartitionInfo> ps = admin.describeTopics(List.of(TOPIC)).allTopicNames()
                    .get(10, TimeUnit.SECONDS).get(TOPIC).partitions();
                if (ps.stream().allMatch(KillTheLeader::fullIsr))
                {
                    return true;
                }
            }
            catch (final Exception ex)
            {
                // a node is still coming back
            }
            Thread.sleep(200);
        }
        return false;
    }

    /** Each partition's high watermark (ListOffsets latest, read_uncommitted), asked until two answers in a row agree. */
    private Map<Integer, Long> highWatermarks(final Admin admin) throws Exception
    {
        Map<Integer, Long> before = Map.of();
        final long deadline = deadline();
        while (System.nanoTime() < deadline)
        {
            final Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
            for (int p = 0; p < options.partitions; p++)
            {
                ask.put(new TopicPartition(TOPIC, p), OffsetSpec.latest());
            }
            try
            {
                final Map<Integer, Long> now = new TreeMap<>();
                admin.listOffsets(ask).all().get(10, TimeUnit.SECONDS).forEach((tp, info) -> now.put(tp.partition(), info.offset()));
                if (now.equals(before))
                {
                    return now;
                }
                before = now;
            }
            catch (final Exception ex)
            {
                // a leader moving: again
            }
            Thread.sleep(1_000);
        }
        throw new IOException("no stable high watermarks within " + options.deadlineSeconds + " s: " + before);
    }

    /**
     * The high watermarks once the producers stopped: the full ISR awaited, the high watermarks taken, the full ISR
     * awaited again and the high watermarks taken again, until both takes agree (or the deadline: a problem). A node
     * only just back, or shrunk out after the producers stopped, is not yet in the ISR the first time.
     */
    private Map<Integer, Long> settledHighWatermarks(final Admin admin, final ArrayNode problems) throws Exception
    {
        final long deadline = deadline();
        Map<Integer, Long> before = null;
        while (true)
        {
            final boolean full = awaitFullIsr(admin, deadline);
            final Map<Integer, Long> hw = highWatermarks(admin);
            if (!full)
            {
                problems.add("the ISR was not full within " + options.deadlineSeconds + " s of the producers' stop");
                return hw;
            }
            if (hw.equals(before))
            {
                return hw;
            }
            if (System.nanoTime() >= deadline)
            {
                problems.add("the high watermarks were still moving " + options.deadlineSeconds + " s after the producers' stop");
                return hw;
            }
            before = hw;
        }
    }

    /**
     * Every replica of every partition read from its node's files, once each one's files reach the high watermark
     * ({@link ReplicaReader#end}) or at the deadline (one short of it is then reported by the checker as behind).
     */
    private List<Checker.Replica> awaitReplicas(final SoakCluster cluster, final Map<Integer, Long> hw) throws Exception
    {
        final long deadline = deadline();
        boolean all = false;
        while (!all && System.nanoTime() < deadline)
        {
            all = true;
            for (int node = 1; node <= SoakCluster.NODES && all; node++)
            {
                for (int p = 0; p < options.partitions && all; p++)
                {
                    all = ReplicaReader.end(partitionDir(cluster, node, p), hw.get(p)) >= hw.get(p);
                }
            }
            if (!all)
            {
                Thread.sleep(200);
            }
        }
        final List<Checker.Replica> replicas = new ArrayList<>();
        for (int node = 1; node <= SoakCluster.NODES; node++)
        {
            for (int p = 0; p < options.partitions; p++)
            {
                replicas.add(ReplicaReader.read(node, p, partitionDir(cluster, node, p), hw.get(p)));
            }
        }
        return replicas;
    }

    private static Path partitionDir(final SoakCluster cluster, final int node, final int partition)
    {
        return cluster.node(node).logDir().resolve(TOPIC + "-" + partition);
    }

    /**
     * Gives the consumers until the deadline to read every partition up to its high watermark; one that did not is a
     * problem (the consumer-side checks then cover less).
     */
    private void awaitConsumers(final List<SoakConsumer> consumers, final Map<Integer, Long> hw, final ArrayNode problems)
        throws InterruptedException
    {
        final long deadline = deadline();
        while (System.nanoTime() < deadline)
        {
            boolean done = true;
            for (final SoakConsumer c : consumers)
            {
                done &= c.reachedAll(hw);
            }
            if (done)
            {
                return;
            }
            Thread.sleep(200);
        }
        for (final SoakConsumer c : consumers)
        {
            if (!c.reachedAll(hw))
            {
                problems.add("consumer " + c.id() + " had not read up to the high watermarks " + hw + " within "
                    + options.deadlineSeconds + " s");
            }
        }
    }
}
