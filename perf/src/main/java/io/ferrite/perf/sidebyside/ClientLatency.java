package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The client latency table of issue 15 ({@code perf/bin/side-by-side --client-latency}): in one run, a bare socket
 * ping-pong on loopback (the floor, {@link PingPong}) with no broker running, then Apache Kafka 4.4, then Ferrite, each
 * in a child JVM as the default suite starts them ({@link BrokerProcess}). Against each broker, at each fixed rate
 * ({@code --client-rates}, 1 000, 10 000 and 50 000 records/s), kafka-clients ({@link KafkaClientCell}) and then the
 * Ferrite client ({@link FerriteClientCell}) each run two cells of {@code --cell-warmup-seconds} + {@code --cell-seconds}:
 * acks=1 with a consumer polling (send to ack and send to poll from the same records) and acks=all (send to ack). Every
 * latency is measured from the record's intended time on the fixed-rate schedule ({@link FixedRate}). Then the
 * throughput row ({@link ClientThroughput}): each client unpaced against each broker. The in-process path is not
 * measured: the client has no in-process transport (the table says so). The JSON ({@code --out}) is rendered by
 * {@link ClientLatencyReport}, also into RESULTS.md.
 */
final class ClientLatency
{
    static final String ACK_1 = "send to ack, acks=1";
    static final String ACK_ALL = "send to ack, acks=all";
    static final String END_TO_END = "send to poll (end to end), acks=1";
    static final String ROUND_TRIP = "round trip";
    static final String KAFKA_CLIENTS = "kafka-clients";
    static final String FERRITE_CLIENT = "Ferrite client";
    static final String PING_PONG = "bare socket ping-pong (loopback, the floor)";
    static final String IN_PROCESS = "in-process (Ferrite embedded)";
    static final String NO_IN_PROCESS = "not measured: the Ferrite client has no in-process transport yet (client/README.md, "
        + "\"What does not exist yet\"), and the broker offers none to kafka-clients; the engine's own in-process figures "
        + "against Chronicle Queue are embedded.EmbeddedLatencyBenchmark's";

    /** The rate of the unmeasured warm-up of each broker ({@link #warmUp}). */
    static final int WARM_RATE = 10_000;

    private final SideBySideOptions options;
    private final ObjectMapper mapper = new ObjectMapper();
    private final ArrayNode cells = mapper.createArrayNode();
    private final ArrayNode throughput = mapper.createArrayNode();
    private final List<String> problems = new ArrayList<>();
    private final List<String> load = new ArrayList<>();
    private final Supplier<IdleStrategy> idles;

    ClientLatency(final SideBySideOptions options)
    {
        this.options = options;
        this.idles = idle(options.clientIdle);
    }

    /** The Ferrite client's idle strategy between duty cycles: backoff (spin, yield, then park 1 to 20 us), yield or spin. */
    static Supplier<IdleStrategy> idle(final String name)
    {
        return switch (name)
        {
            case "backoff" -> () -> new BackoffIdleStrategy(10, 5, 1_000, 20_000);
            case "yield" -> YieldingIdleStrategy::new;
            case "spin" -> BusySpinIdleStrategy::new;
            default -> throw new IllegalArgumentException("--client-idle is backoff, yield or spin, not " + name);
        };
    }

    static String path(final String client, final Kind broker)
    {
        return client + " → " + broker.label;
    }

    /** Runs the ping-pong, then each broker's cells, and answers the JSON (also written to {@code --out} when given). */
    ObjectNode run() throws Exception
    {
        final String before = Machine.loadAverage();
        for (final int rate : options.clientRates)
        {
            final FixedRate schedule = schedule(rate);
            final CellResult r = PingPong.run(Workloads.RECORD_BYTES, schedule);
            add(PING_PONG, ROUND_TRIP, schedule, r.ack(), r);
        }
        load.add("ping-pong " + before + " -> " + Machine.loadAverage());
        if (!options.skipKafka)
        {
            brokerPhase(Kind.KAFKA);
        }
        brokerPhase(Kind.FERRITE);
        final ObjectNode json = toJson();
        if (options.out != null)
        {
            Files.createDirectories(options.out.toAbsolutePath().getParent());
            Files.writeString(options.out, mapper.enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json) + "\n",
                StandardCharsets.UTF_8);
            System.out.println("wrote " + options.out);
        }
        return json;
    }

    private FixedRate schedule(final int rate)
    {
        return new FixedRate(rate, options.cellWarmupSeconds, options.cellSeconds);
    }

    private static String topic(final String client, final String acks, final int rate, final int pass)
    {
        return (client.equals(KAFKA_CLIENTS) ? "kc" : "fc") + "-acks" + acks + "-" + rate + (pass > 1 ? "-pass" + pass : "");
    }

    private void brokerPhase(final Kind kind) throws Exception
    {
        final String label = kind.label;
        System.out.printf(Locale.ROOT, "%n=== %s ===%n", label);
        final String before = Machine.loadAverage();
        final List<String> overrides = kind == Kind.KAFKA ? options.kafkaOverrides : options.ferriteOverrides;
        final BrokerProcess broker = BrokerProcess.start(kind, options.heap, options.classPath, overrides, options.brokerJvmOptions);
        try
        {
            final Workloads w = new Workloads(broker.bootstrap(), p -> problem(label + ": " + p));
            w.firstProduce("startup", 180_000);
            final List<String> topics = new ArrayList<>(List.of("tp-kc", "tp-fc", "warm-kc", "warm-fc"));
            for (int pass = 1; pass <= options.clientRepeats; pass++)
            {
                for (final int rate : options.clientRates)
                {
                    for (final String client : new String[] {KAFKA_CLIENTS, FERRITE_CLIENT})
                    {
                        topics.add(topic(client, "1", rate, pass));
                        topics.add(topic(client, "all", rate, pass));
                    }
                }
            }
            w.createTopics(topics);
            awaitTopics(broker.bootstrap(), topics);
            warmUp(broker, w);
            for (int pass = 1; pass <= options.clientRepeats; pass++)
            {
                for (final int rate : options.clientRates)
                {
                    for (final String client : new String[] {KAFKA_CLIENTS, FERRITE_CLIENT})
                    {
                        cell(broker, w, client, "1", rate, pass);
                        cell(broker, w, client, "all", rate, pass);
                    }
                }
            }
            final int n = options.records;
            final ClientThroughput.Figures kc = ClientThroughput.kafkaClients(w, "tp-kc", n);
            addThroughput(path(KAFKA_CLIENTS, kind), n, kc);
            final ClientThroughput.Figures fc = ClientThroughput.ferriteClient(broker.bootstrap(), w.payload, "tp-fc", n, idles.get());
            addThroughput(path(FERRITE_CLIENT, kind), n, fc);
        }
        catch (final Exception ex)
        {
            problem(label + " failed: " + ex + "\n" + broker.logTail(30));
            ex.printStackTrace(System.out);
        }
        finally
        {
            load.add(label + " " + before + " -> " + Machine.loadAverage());
            for (final String p : broker.problems(8))
            {
                problem(label + " broker log: " + p);
            }
            broker.close();
        }
    }

    /**
     * Drives the broker just started with both clients, unmeasured, before its cells: kafka-clients then the Ferrite
     * client, acks=1 with a consumer, at {@link #WARM_RATE} for half of {@code --client-broker-warmup-seconds} each. A
     * broker's first cells ran while it was still compiling its hot paths (Kafka's especially: on 2 cores its JIT took
     * the CPU from the cells), and the first path measured paid for it.
     */
    private void warmUp(final BrokerProcess broker, final Workloads w) throws Exception
    {
        final double half = options.clientBrokerWarmupSeconds / 2;
        if (half <= 0)
        {
            return;
        }
        final String before = Machine.loadAverage();
        final CellResult kc = KafkaClientCell.run(w, "warm-kc", "1", new FixedRate(WARM_RATE, half, 0), true);
        final CellResult fc = FerriteClientCell.run(broker.bootstrap(), w.payload, "warm-fc", 1, new FixedRate(WARM_RATE, half, 0),
            true, idles);
        System.out.printf(Locale.ROOT, "%s warmed up: %.0f s of each client at %d/s, load %s -> %s%s%n", broker.kind.label, half,
            WARM_RATE, before, Machine.loadAverage(), kc.failed() + fc.failed() > 0 ? " (" + (kc.failed() + fc.failed())
            + " records failed)" : "");
    }

    /** Waits until the broker's metadata names every topic (Ferrite answers CreateTopics before it publishes them). */
    static void awaitTopics(final String bootstrap, final List<String> topics) throws Exception
    {
        try (Admin admin = Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap)))
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (true)
            {
                try
                {
                    admin.describeTopics(topics).allTopicNames().get(10, TimeUnit.SECONDS);
                    return;
                }
                catch (final java.util.concurrent.ExecutionException ex)
                {
                    if (System.nanoTime() - deadline > 0)
                    {
                        throw ex;
                    }
                    Thread.sleep(20);
                }
            }
        }
    }

    private void cell(final BrokerProcess broker, final Workloads w, final String client, final String acks, final int rate,
        final int pass) throws Exception
    {
        final FixedRate schedule = schedule(rate);
        final String topic = topic(client, acks, rate, pass);
        System.out.println("cell " + topic + ", load " + Machine.loadAverage());
        final boolean endToEnd = "1".equals(acks);
        final CellResult r = client.equals(KAFKA_CLIENTS) ? KafkaClientCell.run(w, topic, acks, schedule, endToEnd)
            : FerriteClientCell.run(broker.bootstrap(), w.payload, topic, "all".equals(acks) ? -1 : 1, schedule, endToEnd, idles);
        final String path = path(client, broker.kind);
        add(path, endToEnd ? ACK_1 : ACK_ALL, schedule, r.ack(), r);
        if (endToEnd)
        {
            add(path, END_TO_END, schedule, r.endToEnd(), r);
        }
    }

    private void add(final String path, final String measure, final FixedRate schedule, final Histogram h, final CellResult r)
    {
        final ObjectNode c = cells.addObject();
        c.put("path", path);
        c.put("measure", measure);
        c.put("rate", schedule.rate);
        c.put("expected", schedule.measuredCount());
        c.put("samples", h.getTotalCount());
        c.put("p50Us", h.getValueAtPercentile(50));
        c.put("p99Us", h.getValueAtPercentile(99));
        c.put("p999Us", h.getValueAtPercentile(99.9));
        c.put("maxUs", h.getMaxValue());
        c.put("meanUs", Math.round(h.getMean() * 10) / 10.0);
        c.put("failed", r.failed());
        System.out.printf(Locale.ROOT, "%s, %s at %d/s: p50 %d p99 %d p99.9 %d max %d us (%d of %d measured)%n", path, measure,
            schedule.rate, h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(),
            h.getTotalCount(), schedule.measuredCount());
        if (r.failed() > 0 || h.getTotalCount() != schedule.measuredCount())
        {
            problem(path + ", " + measure + " at " + schedule.rate + "/s: " + r.failed() + " failed, " + h.getTotalCount() + " of "
                + schedule.measuredCount() + " measured" + (r.firstFailure() == null ? "" : "; first: " + r.firstFailure()));
        }
    }

    private void addThroughput(final String path, final int n, final ClientThroughput.Figures f)
    {
        final ObjectNode t = throughput.addObject();
        t.put("path", path);
        t.put("records", n);
        t.put("recordsPerSecond", Math.round(f.recordsPerSecond()));
        t.put("megabytesPerSecond", Math.round(f.megabytesPerSecond() * 100) / 100.0);
        t.put("clientCpuMsPerMb", Math.round(f.cpuMsPerMb() * 1000) / 1000.0);
        System.out.printf(Locale.ROOT, "throughput %s: %.0f records/s, %.1f MB/s, client CPU %.2f ms per MB%n", path,
            f.recordsPerSecond(), f.megabytesPerSecond(), f.cpuMsPerMb());
        if (f.failed() > 0)
        {
            problem("throughput " + path + ": " + f.failed() + " failed");
        }
    }

    private void problem(final String p)
    {
        problems.add(p);
        System.out.println("PROBLEM " + p);
    }

    private ObjectNode toJson()
    {
        final ObjectNode json = mapper.createObjectNode();
        json.put("kind", ClientLatencyReport.KIND);
        Machine.describeRun(json.putObject("meta"), options.command);
        final ArrayNode settings = json.putArray("settings");
        settings.add("brokers: Apache Kafka 4.4.0 and Ferrite, each in a child JVM started as the default suite starts it ("
            + String.join(" ", BrokerProcess.jvmOptions(options.heap)) + "), one after the other (Kafka's cells, then Ferrite's), "
            + "loopback; records of 1 KiB (random A-Z) to partition 0 of a fresh one-partition topic per cell");
        settings.add("clients in the runner's JVM: kafka-clients 4.4.0 (linger.ms=0, batch.size 64 KiB, its defaults otherwise: "
            + "acks=all idempotent, acks=1 not) and the Ferrite client (client/, the same settings and the same idempotence rule; "
            + "its producer and the consumer each on one thread running send or poll and the duty cycle, idle strategy "
            + options.clientIdle + (options.clientIdle.equals("backoff") ? ": 10 spins, 5 yields, then parks of 1 to 20 us" : "")
            + ")");
        settings.add("before its cells each broker is driven, unmeasured, by kafka-clients then the Ferrite client (acks=1 with a "
            + "consumer, " + WARM_RATE + " records/s, " + options.clientBrokerWarmupSeconds / 2 + " s each): the first cells "
            + "after a start otherwise ran while the broker (Kafka most) was still compiling");
        settings.add("each cell: records sent on a fixed-rate schedule (record i due at start + i/rate; the sender parks until "
            + "then) for " + options.cellWarmupSeconds + " s of warm-up, not measured, then " + options.cellSeconds + " s "
            + "measured; every latency is taken from the record's intended time on the schedule, not from when send() was "
            + "called, so a sender held up counts its wait (no coordinated omission); HdrHistogram, us");
        settings.add("send to ack: until the producer's callback or completion handler has the record's acknowledgement; "
            + "send to poll: the acks=1 cell's records, until the consumer (the same client, assign from offset 0, kafka-clients "
            + "poll(100 ms) / Ferrite doWork+poll, default fetch settings) hands the record to the application (kafka-clients: "
            + "when poll() returns; Ferrite: in the record handler), on its own thread while the producer runs");
        settings.add("bare socket ping-pong: " + Workloads.RECORD_BYTES + "-byte messages at the same rates and schedule, written "
            + "without waiting for the echoes (those due together in one write when the sender is behind); an echo thread "
            + "(blocking reads and writes, TCP_NODELAY) writes back what it reads; run first, with no broker running");
        settings.add("throughput: one producer, unpaced, " + options.records + " records of 1 KiB, acks=1, batch.size 64 KiB, "
            + "linger.ms 5, then flush (the Ferrite client runs its duty cycle every 16 sends and when its batch pool is "
            + "full); client CPU per MB: the runner JVM's CPU time (all its threads, GC and JIT too) over the run, per MB "
            + "of record values");
        final ArrayNode unavailable = json.putArray("unavailable");
        unavailable.addObject().put("path", IN_PROCESS).put("reason", NO_IN_PROCESS);
        json.set("cells", cells);
        json.set("throughput", throughput);
        final ArrayNode ld = json.putArray("load");
        load.forEach(ld::add);
        final ArrayNode pb = json.putArray("problems");
        problems.forEach(pb::add);
        return json;
    }
}
