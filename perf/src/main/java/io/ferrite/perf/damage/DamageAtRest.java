package io.ferrite.perf.damage;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.ferrite.perf.sidebyside.BrokerProcess;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.common.TopicPartition;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * The damage-at-rest table: for each broker (Kafka 4.4 and Ferrite, each as it ships, see
 * {@link BrokerProcess}) and each stop (clean: SIGTERM and its exit; kill: SIGKILL), one broker is
 * started, a topic of 1 MiB segments filled with a known record set ({@link Records}) and the broker
 * stopped; its log directory is kept as it was left, and for each {@link DamageCase} a copy of it is
 * damaged, the broker restarted on it and everything read back ({@link ReadBack}). Every case thus
 * starts from the same files. The JSON is rendered by {@link DamageReport}.
 *
 * <pre>
 * DamageAtRest [--case NAME]... [--stop clean|kill]... [--broker kafka|ferrite]... [--records 11000]
 *              [--stall-seconds 15] [--read-seconds 180] [--heap 512m] [--out FILE.json]
 * </pre>
 */
public final class DamageAtRest
{
    static final String TOPIC = "damage";
    static final String PRISTINE = "pristine-log-dir";

    static final class Options
    {
        final List<DamageCase> cases = new ArrayList<>();
        final List<String> stops = new ArrayList<>();
        final List<Kind> brokers = new ArrayList<>();
        int records = 11_000;
        int stallSeconds = 15;
        int readSeconds = 180;
        int startSeconds = 120;
        String heap = "512m";
        Path out;
        String classPath = System.getProperty("java.class.path");
        String command;

        static Options parse(final String... args)
        {
            final Options o = new Options();
            o.command = "damage-at-rest " + String.join(" ", args);
            for (int i = 0; i < args.length; i++)
            {
                switch (args[i])
                {
                    case "--case" -> o.cases.add(DamageCase.byId(args[++i]));
                    case "--stop" -> o.stops.add(stop(args[++i]));
                    case "--broker" -> o.brokers.add(Kind.valueOf(args[++i].toUpperCase(java.util.Locale.ROOT)));
                    case "--records" -> o.records = Integer.parseInt(args[++i]);
                    case "--stall-seconds" -> o.stallSeconds = Integer.parseInt(args[++i]);
                    case "--read-seconds" -> o.readSeconds = Integer.parseInt(args[++i]);
                    case "--start-seconds" -> o.startSeconds = Integer.parseInt(args[++i]);
                    case "--heap" -> o.heap = args[++i];
                    case "--out" -> o.out = Path.of(args[++i]);
                    case "--classpath" -> o.classPath = args[++i];
                    default -> throw new IllegalArgumentException("unknown option " + args[i]);
                }
            }
            if (o.cases.isEmpty())
            {
                o.cases.addAll(List.of(DamageCase.values()));
            }
            if (o.stops.isEmpty())
            {
                o.stops.addAll(List.of("clean", "kill"));
            }
            if (o.brokers.isEmpty())
            {
                o.brokers.addAll(List.of(Kind.KAFKA, Kind.FERRITE));
            }
            return o;
        }

        private static String stop(final String s)
        {
            if (!s.equals("clean") && !s.equals("kill"))
            {
                throw new IllegalArgumentException("--stop is clean or kill, not " + s);
            }
            return s;
        }
    }

    /** Warnings Kafka logs at every start or stop of a single node, damaged or not: left out of the table. */
    private static final List<String> BENIGN = List.of("Performing controller activation",
        "Attempting to close NetworkClient that has already been closed");

    private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

    private final Options options;
    /** case id + " " + stop -> the row, in the order of the cases. */
    private final Map<String, ObjectNode> rows = new LinkedHashMap<>();
    private final ArrayNode setups = JSON.arrayNode();

    DamageAtRest(final Options options)
    {
        this.options = options;
        for (final DamageCase c : options.cases)
        {
            for (final String stop : options.stops)
            {
                final ObjectNode row = JSON.objectNode().put("case", c.id()).put("stop", stop).put("description", c.description);
                rows.put(c.id() + " " + stop, row);
            }
        }
    }

    public static void main(final String[] args) throws Exception
    {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null)
        {
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
            System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
        }
        final Options options = Options.parse(args);
        final ObjectNode json = new DamageAtRest(options).run();
        final ObjectNode meta = meta(options);
        final String markdown = DamageReport.render(json, meta);
        System.out.println(markdown);
        if (options.out != null)
        {
            final ObjectMapper mapper = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
            Files.createDirectories(options.out.toAbsolutePath().getParent());
            Files.writeString(options.out, mapper.writeValueAsString(json) + "\n", StandardCharsets.UTF_8);
            Files.writeString(DamageReport.sibling(options.out, ".meta.json"), mapper.writeValueAsString(meta) + "\n", StandardCharsets.UTF_8);
            Files.writeString(DamageReport.sibling(options.out, ".md"), markdown, StandardCharsets.UTF_8);
            System.out.println("wrote " + options.out + " and its .meta.json and .md");
        }
    }

    ObjectNode run() throws Exception
    {
        for (final Kind kind : options.brokers)
        {
            for (final String stop : options.stops)
            {
                setup(kind, stop);
            }
        }
        final ObjectNode json = JSON.objectNode().put("tool", "damage-at-rest").put("records", options.records)
            .put("valueBytes", Records.VALUE_BYTES).put("segmentBytes", Records.SEGMENT_BYTES)
            .put("stallSeconds", options.stallSeconds);
        json.set("setups", setups);
        final ArrayNode out = json.putArray("rows");
        rows.values().forEach(out::add);
        return json;
    }

    /** One broker filled and stopped one way, then every case on a copy of what the stop left. */
    private void setup(final Kind kind, final String stop) throws Exception
    {
        final String key = kind.name().toLowerCase(java.util.Locale.ROOT);
        System.out.printf("%n=== %s, %s stop: writing %d records ===%n", kind.label, stop, options.records);
        final BrokerProcess first = BrokerProcess.start(kind, options.heap, options.classPath, List.of(), List.of());
        final ObjectNode setup = setups.addObject().put("broker", key).put("stop", stop);
        try
        {
            Records.createTopic(first.bootstrap(), TOPIC, System.nanoTime() + Duration.ofSeconds(options.startSeconds).toNanos());
            Records.produce(first.bootstrap(), TOPIC, options.records);
            if (stop.equals("clean"))
            {
                first.stopCleanly(60);
            }
            else
            {
                first.kill();
            }
            final LogFiles files = new LogFiles(first.logDir(), TOPIC, 0);
            final ArrayNode names = setup.putArray("partitionFiles");
            try (Stream<Path> list = Files.list(files.partitionDir))
            {
                list.map(p -> p.getFileName().toString()).sorted().forEach(names::add);
            }
            setup.put("segments", files.segments().size());
            copyTree(first.logDir(), first.dir.resolve(PRISTINE));
        }
        catch (final Exception ex)
        {
            final String why = "setup failed: " + ex + " / broker log: " + first.logTail("broker.log", 5).replace('\n', ' ');
            setup.put("failed", why);
            System.out.println(why);
            for (final DamageCase c : options.cases)
            {
                rows.get(c.id() + " " + stop).set(key, JSON.objectNode().put("started", false).put("why", why));
            }
            first.close();
            return;
        }
        try
        {
            for (final DamageCase c : options.cases)
            {
                final long started = System.nanoTime();
                final ObjectNode result = runCase(first, c);
                rows.get(c.id() + " " + stop).set(key, result);
                System.out.printf("%s %s %s (%.1f s): %s%n", kind.label, stop, c.id(), (System.nanoTime() - started) / 1e9, result);
            }
        }
        finally
        {
            first.close();
        }
    }

    private ObjectNode runCase(final BrokerProcess first, final DamageCase c) throws Exception
    {
        final ObjectNode r = JSON.objectNode();
        deleteTree(first.logDir());
        copyTree(first.dir.resolve(PRISTINE), first.logDir());
        r.put("damage", c.applyTo(new LogFiles(first.logDir(), TOPIC, 0)));
        final String logName = "restart-" + c.id() + ".log";
        final BrokerProcess broker = first.restart(logName);
        try
        {
            final long[] offsets = awaitServing(broker, logName, r);
            if (offsets != null)
            {
                r.put("logStart", offsets[0]).put("logEnd", offsets[1]);
                final ReadBack.Outcome o = ReadBack.read(broker.bootstrap(), TOPIC, options.records, offsets[1],
                    Duration.ofSeconds(options.stallSeconds), Duration.ofSeconds(options.readSeconds));
                r.put("intact", o.intactCount()).put("lost", options.records - o.intactCount())
                    .put("lostRanges", o.lostRanges(options.records, 6)).put("delivered", o.delivered)
                    .put("corruptDelivered", o.corrupt).put("wedged", o.wedged).put("stopped", o.stopped)
                    .put("skippedAfterError", o.skipped);
                if (o.wedged)
                {
                    r.put("wedgedAt", o.wedgedAt);
                }
                if (o.firstCorrupt != null)
                {
                    r.put("firstCorrupt", o.firstCorrupt);
                }
                final ObjectNode errors = r.putObject("errors");
                o.errors.forEach(errors::put);
            }
            else
            {
                r.put("intact", 0).put("lost", options.records).put("wedged", false);
            }
        }
        finally
        {
            if (broker.process.isAlive())
            {
                broker.stopCleanly(60);
            }
            final ArrayNode log = r.putArray("brokerLog");
            for (final String line : broker.problems(logName, 20))
            {
                if (log.size() < 8 && BENIGN.stream().noneMatch(line::contains))
                {
                    log.add(line.length() > 300 ? line.substring(0, 300) + "..." : line);
                }
            }
        }
        return r;
    }

    /**
     * Waits until the restarted broker answers ListOffsets for the partition and answers its log
     * start and end; null (with {@code started}, {@code why}) when it exits or does not answer.
     */
    private long[] awaitServing(final BrokerProcess broker, final String logName, final ObjectNode r) throws Exception
    {
        final long deadline = System.nanoTime() + Duration.ofSeconds(options.startSeconds).toNanos();
        final TopicPartition tp = new TopicPartition(TOPIC, 0);
        String last = "";
        try (Admin admin = Admin.create(Records.admin(broker.bootstrap())))
        {
            while (System.nanoTime() < deadline)
            {
                if (!broker.process.isAlive())
                {
                    r.put("started", false).put("serving", false).put("exitCode", broker.process.exitValue())
                        .put("why", whyLine(broker, logName));
                    return null;
                }
                try
                {
                    final long[] offsets = Records.offsets(admin, tp);
                    r.put("started", true).put("serving", true);
                    return offsets;
                }
                catch (final Exception ex)
                {
                    last = ex.getCause() != null ? ex.getCause().toString() : ex.toString();
                    Thread.sleep(200); // paces the retries of a broker still starting; nothing is proved by it
                }
            }
        }
        r.put("started", broker.process.isAlive()).put("serving", false)
            .put("why", "no ListOffsets answer for the partition in " + options.startSeconds + " s: " + last);
        return null;
    }

    /** The one line that says why a broker exited: its first error and the first frame of the broker's own code, else its last line. */
    static String whyLine(final BrokerProcess broker, final String logName)
    {
        final String[] lines = broker.logTail(logName, 400).split("\n");
        String last = "";
        for (int i = 0; i < lines.length; i++)
        {
            final String line = lines[i];
            if (line.contains("ERROR") || line.contains("FATAL") || line.contains("Exception"))
            {
                String why = line.strip();
                for (int j = i + 1; j < lines.length && j < i + 40; j++)
                {
                    final String frame = lines[j].strip();
                    if (frame.startsWith("at io.ferrite.") || frame.startsWith("at kafka.") || frame.startsWith("at org.apache.kafka."))
                    {
                        why += " (" + frame + ")";
                        break;
                    }
                }
                return why.length() > 400 ? why.substring(0, 400) + "..." : why;
            }
            if (!line.isBlank())
            {
                last = line;
            }
        }
        return last.isEmpty() ? "(no output)" : last;
    }

    static ObjectNode meta(final Options options) throws IOException
    {
        final ObjectNode m = JSON.objectNode();
        m.put("date", Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        m.put("commit", System.getProperty("damage.commit", "unknown"));
        // the lead may run this tool from one checkout against a Ferrite jar built from another
        m.put("ferriteCommit", System.getProperty("damage.ferrite.commit", System.getProperty("damage.commit", "unknown")));
        m.put("ferriteJar", String.valueOf(BrokerProcess.ferriteJar()));
        m.put("jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
        m.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version") + " " + System.getProperty("os.arch"));
        m.put("cpus", Runtime.getRuntime().availableProcessors());
        m.put("command", options.command);
        // the Kafka that runs is the kafka_2.13 jar on the brokers' class path
        final java.util.regex.Matcher v = java.util.regex.Pattern.compile("kafka_2\\.13-([0-9][^/:]*)\\.jar").matcher(options.classPath);
        m.put("kafka", "Apache Kafka " + (v.find() ? v.group(1) : "?") + " (KRaft, one node)");
        return m;
    }

    static void copyTree(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> files = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>) files::iterator)
            {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(target);
                }
                else
                {
                    Files.copy(p, target);
                }
            }
        }
    }

    static void deleteTree(final Path dir) throws IOException
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> files = Files.walk(dir))
        {
            for (final Path p : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator)
            {
                Files.delete(p);
            }
        }
    }
}
