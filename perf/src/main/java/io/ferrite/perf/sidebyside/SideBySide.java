package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.HdrHistogram.Histogram;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Apache Kafka 4.4 and Ferrite side by side on this machine: each broker in a child JVM with the
 * same JVM options, started afresh for each round, rounds alternating Kafka, Ferrite, Kafka,
 * Ferrite...; the same kafka-clients workloads and Kafka's own tools against each; one table of
 * medians and ratios (Ferrite / Kafka), and optionally the JSON that {@code perf/bin/jmh-report}
 * renders into jmh-results/RESULTS.md.
 *
 * <pre>
 * SideBySide [--rounds 2] [--heap 1g] [--records 200000] [--rates 5000,20000] [--rate-seconds 10]
 *            [--sync-records 1000] [--e2e-rate 1000] [--e2e-seconds 10] [--tool-records 200000]
 *            [--tool-e2e-records 2000] [--skip-kafka] [--skip-tools] [--smoke]
 *            [--transactions [--txn-records 200000] [--txn-sizes 100,1000] [--txn-reads 5]]
 *            [--client-latency [--client-rates 1000,10000,50000] [--cell-seconds 10] [--cell-warmup-seconds 2]
 *             [--client-idle backoff|yield|spin]]
 *            [--security ssl,sasl_ssl [--tls-protocol TLSv1.3] [--cipher-suites A,B] [--tls-rate 5000]]
 *            [--ferrite-override k=v]... [--kafka-override k=v]... [--broker-jvm-option OPT]... [--out FILE.json]
 * </pre>
 */
public final class SideBySide
{
    private final SideBySideOptions options;
    private final MetricTable metrics = new MetricTable();
    private final List<String> perRecord = new ArrayList<>();
    private final List<String> problems = new ArrayList<>();
    private final List<String> load = new ArrayList<>();
    private final List<ObjectNode> context = new ArrayList<>();
    /** The secured suite ({@code --security}), or null. */
    private TlsSuite tls;

    SideBySide(final SideBySideOptions options)
    {
        this.options = options;
    }

    public static void main(final String[] args) throws Exception
    {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
        {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"); // the clients' config dumps
            // "Connection to node -1 could not be established" every few ms while a broker starts
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
        }
        final SideBySideOptions options = SideBySideOptions.parse(args);
        if (options.clientLatency)
        {
            System.out.println(ClientLatencyReport.render("client-latency", new ClientLatency(options).run()));
            return;
        }
        final ObjectNode json = new SideBySide(options).run();
        System.out.println(SideBySideReport.render("side-by-side", json));
    }

    /** Runs every round and answers the JSON (also written to {@code --out} when given). */
    ObjectNode run() throws Exception
    {
        tls = options.security.isEmpty() ? null : TlsSuite.make(options);
        try
        {
            for (int round = 1; round <= options.rounds; round++)
            {
                if (!options.skipKafka)
                {
                    round(Kind.KAFKA, round);
                }
                round(Kind.FERRITE, round);
            }
        }
        finally
        {
            if (tls != null)
            {
                tls.close();
            }
        }
        final ObjectNode json = toJson();
        if (options.out != null)
        {
            writeJson(options.out, json);
        }
        return json;
    }

    /** Writes a run's JSON, indented, to {@code out} (its folder made when missing). */
    static void writeJson(final Path out, final ObjectNode json) throws IOException
    {
        Files.createDirectories(out.toAbsolutePath().getParent());
        Files.writeString(out, new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(json) + "\n",
            StandardCharsets.UTF_8);
        System.out.println("wrote " + out);
    }

    private void round(final Kind kind, final int round) throws Exception
    {
        System.out.printf(Locale.ROOT, "%n=== %s, round %d ===%n", kind.label, round);
        final String label = kind.label + " round " + round;
        final List<String> overrides = kind == Kind.KAFKA ? options.kafkaOverrides : options.ferriteOverrides;
        final String loadBefore = Machine.loadAverage();
        final BrokerProcess broker = BrokerProcess.start(kind, options.heap, options.classPath, overrides, options.brokerJvmOptions,
            tls == null ? null : tls.security);
        try
        {
            final Workloads w = new Workloads(broker.bootstrap(), p ->
            {
                problems.add(label + ": " + p);
                System.out.println("PROBLEM " + label + ": " + p);
            });
            final long acked = w.firstProduce("startup", 180_000);
            add(kind, "start-up to first acknowledged produce", "ms", false, (acked - broker.spawnedNanos) / 1e6);
            if (options.transactions)
            {
                new TxnRound(this, kind, round, broker, w, options).run();
            }
            else if (tls != null)
            {
                tls.round(this, kind, round, broker, w);
            }
            else
            {
                defaultWorkloads(kind, round, label, broker, w);
            }

            if (!broker.process.isAlive())
            {
                problems.add(label + ": the broker exited during the run, code " + broker.process.exitValue() + "\n" + broker.logTail(20));
            }
            final long rss = broker.residentBytes();
            add(kind, "broker resident memory (VmRSS) after the run", "MiB", false, rss / 1048576.0);
            final long anon = broker.status("RssAnon:");
            final long file = broker.status("RssFile:");
            add(kind, "of which anonymous (RssAnon: heap, direct buffers, metaspace...)", "MiB", false, anon / 1048576.0);
            add(kind, "of which file-backed (RssFile: mapped segments and indexes, jars)", "MiB", false, file / 1048576.0);
            System.out.printf(Locale.ROOT, "RSS %.0f MiB (anonymous %.0f, file %.0f)%n", rss / 1048576.0, anon / 1048576.0,
                file / 1048576.0);
        }
        catch (final Exception ex)
        {
            problems.add(label + " failed: " + ex);
            System.out.println("FAILED " + label + ": " + ex + "\n" + broker.logTail(30));
            ex.printStackTrace(System.out);
        }
        finally
        {
            load.add(label + " " + loadBefore + " -> " + Machine.loadAverage());
            for (final String p : broker.problems(8))
            {
                problems.add(label + " broker log: " + p);
            }
            broker.close();
        }
    }

    /** The default suite: producer and consumer throughput, latency at fixed load, per-record, end-to-end, Kafka's tools. */
    private void defaultWorkloads(final Kind kind, final int round, final String label, final BrokerProcess broker,
        final Workloads w) throws Exception
    {
        final List<String> topics = new ArrayList<>(List.of("tp-1-none", "tp-1-lz4", "tp-all-none", "tp-all-lz4",
            "sync-0", "sync-1", "sync-all", "e2e", "pp-tool", "e2e-tool"));
        for (final int rate : options.rates)
        {
            topics.add("load-" + rate);
        }
        w.createTopics(topics);

        for (final String acks : new String[] {"1", "all"})
        {
            for (final String compression : new String[] {"none", "lz4"})
            {
                final long cpuBefore = broker.cpuNanos();
                final long clientBefore = runnerCpuNanos();
                final double[] t = w.throughput("tp-" + acks + "-" + compression, acks, compression, options.records);
                final double cpuMsPerMb = (broker.cpuNanos() - cpuBefore) / 1e6 / megabytes(options.records);
                final double clientMsPerMb = (runnerCpuNanos() - clientBefore) / 1e6 / megabytes(options.records);
                final String name = "producer throughput acks=" + acks + " " + compression;
                add(kind, name, "records/s", true, t[0]);
                add(kind, name, "MB/s", true, t[1]);
                add(kind, name, "broker CPU ms per MB", false, cpuMsPerMb);
                add(kind, name, "client CPU ms per MB (the runner's JVM)", false, clientMsPerMb);
                System.out.printf(Locale.ROOT, "%s: %.0f records/s, %.1f MB/s, broker CPU %.2f ms/MB%n", name, t[0], t[1],
                    cpuMsPerMb);
            }
        }

        final long consumeCpuBefore = broker.cpuNanos();
        final long consumeClientBefore = runnerCpuNanos();
        final double[] c = w.consume("tp-1-none", options.records);
        final double consumeCpu = (broker.cpuNanos() - consumeCpuBefore) / 1e6 / megabytes(options.records);
        final double consumeClient = (runnerCpuNanos() - consumeClientBefore) / 1e6 / megabytes(options.records);
        add(kind, "consumer throughput (1 consumer, data already written)", "MB/s", true, c[0]);
        add(kind, "consumer throughput (1 consumer, data already written)", "records/s", true, c[1]);
        add(kind, "consumer throughput (1 consumer, data already written)", "broker CPU ms per MB", false, consumeCpu);
        add(kind, "consumer throughput (1 consumer, data already written)", "client CPU ms per MB (the runner's JVM)", false,
            consumeClient);
        System.out.printf(Locale.ROOT, "consumer: %.1f MB/s, %.0f records/s, broker CPU %.2f ms/MB%n", c[0], c[1], consumeCpu);

        for (final int rate : options.rates)
        {
            final String name = "latency at " + rate + " records/s (acks=1, send to ack)";
            final Probe probe = Probe.start(broker);
            final Histogram h = w.fixedLoad("load-" + rate, rate, options.rateSeconds);
            context(kind, round, name, probe.stop());
            percentiles(kind, name, h);
            System.out.printf(Locale.ROOT, "%s: p50 %d p99 %d p99.9 %d max %d us (%d samples)%n", name,
                h.getValueAtPercentile(50), h.getValueAtPercentile(99), h.getValueAtPercentile(99.9), h.getMaxValue(),
                h.getTotalCount());
        }

        System.out.println("# " + label);
        System.out.println("MODE SENT FAILED ELAPSED THROUGHPUT P50 P99 P99.9 MAX");
        perRecord.add("# " + label + " (ELAPSED ms, THROUGHPUT records/s, latencies us)");
        perRecord.add("MODE SENT FAILED ELAPSED THROUGHPUT P50 P99 P99.9 MAX");
        for (final String acks : new String[] {"0", "1", "all"})
        {
            final Probe probe = Probe.start(broker);
            final Object[] r = w.perRecord("sync-" + acks, acks, options.syncRecords);
            context(kind, round, "per-record send().get() acks=" + acks, probe.stop());
            final int sent = (Integer) r[0];
            final double elapsedMs = (Double) r[2];
            final Histogram h = (Histogram) r[3];
            final String line = String.format(Locale.ROOT, "acks=%s %d %d %.1f %.0f %d %d %d %d", acks, sent, r[1], elapsedMs,
                sent / (elapsedMs / 1000), h.getValueAtPercentile(50), h.getValueAtPercentile(99),
                h.getValueAtPercentile(99.9), h.getMaxValue());
            System.out.println(line);
            perRecord.add(line);
            final String name = "per-record send().get() acks=" + acks;
            add(kind, name, "p50 us", false, h.getValueAtPercentile(50));
            add(kind, name, "p99 us", false, h.getValueAtPercentile(99));
            add(kind, name, "p99.9 us", false, h.getValueAtPercentile(99.9));
        }

        final String e2eName = "end-to-end at " + options.e2eRate + " records/s (send to poll)";
        final Probe e2eProbe = Probe.start(broker);
        final Histogram e2e = w.endToEnd("e2e", options.e2eRate, options.e2eSeconds);
        context(kind, round, e2eName, e2eProbe.stop());
        percentiles(kind, e2eName, e2e);
        System.out.printf(Locale.ROOT, "end-to-end: p50 %d p99 %d p99.9 %d max %d us (%d samples)%n",
            e2e.getValueAtPercentile(50), e2e.getValueAtPercentile(99), e2e.getValueAtPercentile(99.9), e2e.getMaxValue(),
            e2e.getTotalCount());

        if (!options.skipTools)
        {
            tools(kind, broker, label);
        }
    }

    private static final Pattern PRODUCER_PERF = Pattern.compile(
        "(\\d+) records sent, ([\\d.]+) records/sec \\(([\\d.]+) MB/sec\\), ([\\d.]+) ms avg latency, ([\\d.]+) ms max latency, "
            + "(\\d+) ms 50th, (\\d+) ms 95th, (\\d+) ms 99th, (\\d+) ms 99.9th");
    private static final Pattern E2E_AVG = Pattern.compile("Avg latency: ([\\d.]+) ms");
    private static final Pattern E2E_PCT = Pattern.compile("Percentiles: 50th = (\\d+), 99th = (\\d+), 99.9th = (\\d+)");

    private void tools(final Kind kind, final BrokerProcess broker, final String label) throws Exception
    {
        final String pp = tool(label, "org.apache.kafka.tools.ProducerPerformance", "--topic", "pp-tool",
            "--num-records", Integer.toString(options.toolRecords), "--record-size", "1024", "--throughput", "-1",
            "--producer-props", "bootstrap.servers=" + broker.bootstrap(), "acks=1", "batch.size=65536", "linger.ms=5");
        final Matcher all = PRODUCER_PERF.matcher(pp);
        java.util.regex.MatchResult m = null;
        while (all.find())
        {
            m = all.toMatchResult(); // the last line is the summary
        }
        if (m != null)
        {
            final String name = "kafka-tools ProducerPerformance acks=1 (batch 64 KiB, linger 5 ms)";
            add(kind, name, "records/s", true, Double.parseDouble(m.group(2)));
            add(kind, name, "MB/s", true, Double.parseDouble(m.group(3)));
            add(kind, name, "p99 ms", false, Double.parseDouble(m.group(8)));
            System.out.println("ProducerPerformance: " + m.group());
        }
        else
        {
            problems.add(label + ": ProducerPerformance gave no summary: " + tail(pp));
        }
        final String e2e = tool(label, "org.apache.kafka.tools.EndToEndLatency", "--bootstrap-server", broker.bootstrap(),
            "--topic", "e2e-tool", "--num-records", Integer.toString(options.toolE2eRecords), "--producer-acks", "1",
            "--record-size", "1024");
        final Matcher avg = E2E_AVG.matcher(e2e);
        final Matcher pct = E2E_PCT.matcher(e2e);
        if (avg.find() && pct.find())
        {
            final String name = "kafka-tools EndToEndLatency acks=1 (one record at a time)";
            add(kind, name, "avg ms", false, Double.parseDouble(avg.group(1)));
            add(kind, name, "p99 ms (whole ms)", false, Double.parseDouble(pct.group(2)));
            System.out.println("EndToEndLatency: " + avg.group() + "; " + pct.group());
        }
        else
        {
            problems.add(label + ": EndToEndLatency gave no summary: " + tail(e2e));
        }
    }

    private String tool(final String label, final String main, final String... args) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of(BrokerProcess.javaBinary(), "-Xmx512m",
            "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", options.classPath, main));
        command.addAll(List.of(args));
        final Path log = Files.createTempFile("side-by-side-tool", ".log");
        try
        {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!p.waitFor(600, TimeUnit.SECONDS))
            {
                p.destroyForcibly();
                problems.add(label + ": " + main + " timed out");
            }
            else if (p.exitValue() != 0)
            {
                problems.add(label + ": " + main + " exited " + p.exitValue() + ": " + tail(Files.readString(log)));
            }
            return Files.readString(log);
        }
        finally
        {
            Files.deleteIfExists(log);
        }
    }

    private static String tail(final String output)
    {
        final String trimmed = output.strip();
        return trimmed.length() <= 600 ? trimmed : "..." + trimmed.substring(trimmed.length() - 600);
    }

    /** CPU time of the runner's JVM so far (the clients, and whatever else runs in it), all threads. */
    static long runnerCpuNanos()
    {
        return ((com.sun.management.OperatingSystemMXBean) java.lang.management.ManagementFactory.getOperatingSystemMXBean())
            .getProcessCpuTime();
    }

    static double megabytes(final int records)
    {
        return records * (double) Workloads.RECORD_BYTES / 1e6;
    }

    /** Records what else happened during a latency workload (see {@link Probe}). */
    void context(final Kind kind, final int round, final String workload, final Probe.Figures f)
    {
        final ObjectNode node = new ObjectMapper().createObjectNode();
        node.put("workload", workload);
        node.put("broker", kind.name().toLowerCase(Locale.ROOT));
        node.put("round", round);
        node.put("hiccupP99Us", f.hiccups().getValueAtPercentile(99));
        node.put("hiccupP999Us", f.hiccups().getValueAtPercentile(99.9));
        node.put("hiccupMaxUs", f.hiccups().getMaxValue());
        node.put("runnerGcMs", f.runnerGcMs());
        node.put("runnerGcCount", f.runnerGcCount());
        node.put("brokerGcMs", MetricTable.round3(f.brokerGc().totalMs()));
        node.put("brokerGcMaxMs", MetricTable.round3(f.brokerGc().maxMs()));
        node.put("brokerGcCount", f.brokerGc().count());
        node.put("brokerCpuMs", MetricTable.round3(f.brokerCpuMs()));
        context.add(node);
        System.out.printf(Locale.ROOT, "  during it: runner hiccups p99 %d us, max %d us; runner GC %.0f ms (%d); broker GC %.1f ms "
            + "(%d, longest %.1f); broker CPU %.0f ms%n", f.hiccups().getValueAtPercentile(99), f.hiccups().getMaxValue(),
            f.runnerGcMs(), f.runnerGcCount(), f.brokerGc().totalMs(), f.brokerGc().count(), f.brokerGc().maxMs(), f.brokerCpuMs());
    }

    void percentiles(final Kind kind, final String name, final Histogram h)
    {
        add(kind, name, "p50 us", false, h.getValueAtPercentile(50));
        add(kind, name, "p99 us", false, h.getValueAtPercentile(99));
        add(kind, name, "p99.9 us", false, h.getValueAtPercentile(99.9));
        add(kind, name, "max us", false, h.getMaxValue());
    }

    void add(final Kind kind, final String name, final String unit, final boolean higherBetter, final double value)
    {
        metrics.add(kind, name, unit, higherBetter, value);
    }

    private ObjectNode toJson()
    {
        final ObjectMapper mapper = new ObjectMapper();
        final ObjectNode json = mapper.createObjectNode();
        json.put("kind", SideBySideReport.KIND);
        final ObjectNode meta = json.putObject("meta");
        meta.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        meta.put("commit", System.getProperty("sidebyside.commit", "unknown"));
        meta.put("jdk", System.getProperty("java.runtime.version") + " (" + System.getProperty("java.vm.name") + ")");
        meta.put("cpu", Machine.cpuModel());
        meta.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
        meta.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
        meta.put("command", options.command.strip());
        final ArrayNode settings = json.putArray("settings");
        settings.add("brokers: Apache Kafka 4.4.0 (kafka_2.13, KRaft, one node as broker and controller, storage formatted by "
            + "kafka.tools.StorageTool, its defaults: num.network.threads=3, num.io.threads=8, no flush per message, i.e. the "
            + "page cache" + overrides(options.kafkaOverrides) + ") and Ferrite (FerriteServer, its defaults: "
            + "ferrite.durability=flush, i.e. the page cache, ferrite.idle.strategy=backoff" + overrides(options.ferriteOverrides) + ")");
        final Path jar = BrokerProcess.ferriteJar();
        settings.add("each broker started as it ships: Kafka (kafka.Kafka) on the runner's class path (kafka_2.13 4.4.0 and its "
            + "dependencies, as its libs/ directory), Ferrite " + (jar == null ? "(FerriteServer) on the same class path (its "
            + "runnable jar was not built)" : "from its runnable jar broker/target/ferrite-broker.jar, as bin/ferrite-server starts it"));
        settings.add("each broker in a child JVM with the same options (" + String.join(" ", BrokerProcess.jvmOptions(options.heap))
            + "), data in a fresh temporary directory, loopback only; started afresh each round; rounds alternate Kafka, Ferrite ("
            + options.rounds + " of each)");
        settings.add("clients: kafka-clients 4.4.0 in the runner's JVM on the same machine (clients and broker share the cores); "
            + "records of 1 KiB (random A-Z, as ProducerPerformance); topics of 1 partition, replication factor 1");
        if (options.transactions)
        {
            TxnRound.settings(options).forEach(settings::add);
        }
        else if (tls != null)
        {
            tls.settings(problems).forEach(settings::add);
        }
        else
        {
            settings.add("producer throughput: " + options.records + " records per setting, batch.size=65536, linger.ms=5, "
                + "send with callback then flush; consumer throughput: one consumer (assign, default fetch sizes) reading the "
                + "acks=1/none topic from offset 0");
            settings.add("latency at fixed load: acks=1, linger.ms=0, sends paced (parkNanos, no spinning) for " + options.rateSeconds
                + " s after a 1 s warm-up, from the send() call to its callback (HdrHistogram, us)");
            settings.add("per-record: " + options.syncRecords + " x send().get(), linger.ms=0, after 200 warm-up sends; end-to-end: "
                + options.e2eRate + " records/s for " + options.e2eSeconds + " s after a 1 s warm-up, acks=1, linger.ms=0, from "
                + "System.nanoTime() at send (in the value) to the consumer's poll() returning it");
            settings.add(options.skipTools ? "Kafka's tools: skipped" : "Kafka's tools (kafka-tools 4.4.0, child JVM, -Xmx512m): "
                + "ProducerPerformance " + options.toolRecords + " records, EndToEndLatency " + options.toolE2eRecords + " records");
        }
        settings.add("start-up: from spawning the broker JVM to the first acknowledged produce (Admin createTopics retried, then "
            + "one acks=1 send; Kafka's storage format runs before and is not counted; Ferrite "
            + (BrokerProcess.ferriteJar() != null && !BrokerProcess.classDataOptions(BrokerProcess.ferriteJar()).isEmpty()
                ? "with" : "without") + " the class-data archive its build writes, as bin/ferrite-server starts it); RSS: VmRSS of the broker JVM from "
            + "/proc/<pid>/status after the run; broker CPU: user + system time of the broker JVM from /proc/<pid>/stat over the "
            + "workload, per MB of record values (1 KiB each) produced or consumed; client CPU likewise for the runner's JVM, "
            + "where the producer or consumer runs");
        settings.add("during each latency workload the runner also measures what else happened (the table after the main one): "
            + "a thread of the runner sleeping 1 ms again and again records how late it wakes (as jHiccup: scheduling on the "
            + "shared cores, the runner's GC, the hypervisor), the runner JVM's GC pause time (MXBeans), and the broker JVM's GC "
            + "pauses (its -Xlog:gc file, same option for both brokers) and CPU time");
        if (!options.brokerJvmOptions.isEmpty())
        {
            settings.add("extra broker JVM options (both brokers): " + String.join(" ", options.brokerJvmOptions));
        }
        metrics.writeTo(json.putArray("metrics"));
        final ArrayNode cx = json.putArray("context");
        context.forEach(cx::add);
        final ArrayNode pr = json.putArray("perRecord");
        perRecord.forEach(pr::add);
        final ArrayNode ld = json.putArray("load");
        load.forEach(ld::add);
        final ArrayNode pb = json.putArray("problems");
        problems.forEach(pb::add);
        return json;
    }

    private static String overrides(final List<String> o)
    {
        return o.isEmpty() ? "" : "; overrides " + String.join(", ", o);
    }

    /** The problems seen (the smoke test reads them; the transactional suite adds its own). */
    List<String> problems()
    {
        return problems;
    }
}
