package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import io.ferrite.perf.sidebyside.BrokerProcess.Kind;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.TreeSet;

import static io.ferrite.perf.sidebyside.ClientLatency.ACK_1;
import static io.ferrite.perf.sidebyside.ClientLatency.ACK_ALL;
import static io.ferrite.perf.sidebyside.ClientLatency.END_TO_END;
import static io.ferrite.perf.sidebyside.ClientLatency.FERRITE_CLIENT;
import static io.ferrite.perf.sidebyside.ClientLatency.KAFKA_CLIENTS;
import static io.ferrite.perf.sidebyside.ClientLatency.PING_PONG;
import static io.ferrite.perf.sidebyside.ClientLatency.path;

/**
 * Renders a client latency run (the JSON {@link ClientLatency} writes, kind {@value #KIND}) as markdown: one table per
 * measure (send to ack with acks=1 and all, send to poll) with a row per path and the ping-pong floor, the throughput
 * row, and issue 15's goals with the side-by-side report's verdicts (met / missed). Used by the runner and by
 * ResultsReport.
 */
public final class ClientLatencyReport
{
    public static final String KIND = "ferrite-client-latency";
    /** Ferrite client → Ferrite p99 at most this fraction of kafka-clients → Kafka's. */
    static final double P99_TARGET = 0.1;
    /** Ferrite client → Ferrite p50 at most this multiple of the bare ping-pong's. */
    static final double P50_FLOOR_TARGET = 3.0;
    /** Ferrite client → Ferrite MB/s at least this multiple of kafka-clients → Kafka's. */
    static final double THROUGHPUT_TARGET = 2.0;

    private static final String[] MEASURES = {ACK_1, ACK_ALL, END_TO_END};

    private ClientLatencyReport()
    {
    }

    public static boolean isClientLatency(final JsonNode json)
    {
        return json.isObject() && KIND.equals(json.path("kind").asText());
    }

    public static String render(final String name, final JsonNode run)
    {
        final StringBuilder md = new StringBuilder();
        md.append("\n## ").append(name).append(" (client latency: kafka-clients and the Ferrite client against Apache Kafka and ")
            .append("Ferrite, issue 15)\n\n");
        PartitionScaleReport.runLines(md, run.path("meta"));
        for (final JsonNode s : run.path("settings"))
        {
            md.append("- ").append(s.asText()).append('\n');
        }
        SideBySideReport.loadLines(md, run, "its paths ran one after the other (ping-pong, Kafka's, Ferrite's), so load that "
            + "came and went weighs on some paths more than others");
        final List<Integer> rates = rates(run);
        final List<String> paths = new ArrayList<>();
        for (final Kind broker : new Kind[] {Kind.KAFKA, Kind.FERRITE})
        {
            paths.add(path(KAFKA_CLIENTS, broker));
        }
        for (final Kind broker : new Kind[] {Kind.KAFKA, Kind.FERRITE})
        {
            paths.add(path(FERRITE_CLIENT, broker));
        }
        for (final String measure : MEASURES)
        {
            md.append("\n").append(measure).append(": us from each record's intended send time, p50 / p99 / p99.9 / max\n\n");
            md.append("| path |");
            rates.forEach(r -> md.append(' ').append(rate(r)).append(" p50 | p99 | p99.9 | max |"));
            md.append("\n|---|");
            rates.forEach(r -> md.append("---:|---:|---:|---:|"));
            md.append('\n');
            for (final String path : paths)
            {
                row(md, run, path, measure, rates);
            }
            for (final JsonNode u : run.path("unavailable"))
            {
                md.append("| ").append(u.path("path").asText()).append(" | ").append(u.path("reason").asText())
                    .append(" |".repeat(rates.size() * 4)).append('\n');
            }
            row(md, run, PING_PONG, ClientLatency.ROUND_TRIP, rates);
        }
        throughputTable(md, run);
        goals(md, run, rates);
        if (run.path("problems").size() > 0)
        {
            md.append("\nProblems seen during the run (failed or missing records, broker log warnings):\n\n");
            for (final JsonNode p : run.path("problems"))
            {
                md.append("- ").append(p.asText().replace("|", "\\|").replace("\n", " ")).append('\n');
            }
        }
        return md.toString();
    }

    private static List<Integer> rates(final JsonNode run)
    {
        final TreeSet<Integer> rates = new TreeSet<>();
        run.path("cells").forEach(c -> rates.add(c.path("rate").asInt()));
        return new ArrayList<>(rates);
    }

    private static String rate(final int r)
    {
        return String.format(Locale.ROOT, "%,d/s", r).replace(',', ' ');
    }

    private static void row(final StringBuilder md, final JsonNode run, final String path, final String measure,
        final List<Integer> rates)
    {
        md.append("| ").append(path).append(" |");
        for (final int r : rates)
        {
            final JsonNode c = cell(run, path, measure, r);
            for (final String field : new String[] {"p50Us", "p99Us", "p999Us", "maxUs"})
            {
                md.append(' ').append(c == null ? "n/a" : Long.toString(c.path(field).asLong())).append(" |");
            }
        }
        md.append('\n');
    }

    /** The cell of a path, measure and rate, or null when the run has none (that broker skipped, or it failed). */
    public static JsonNode cell(final JsonNode run, final String path, final String measure, final int rate)
    {
        for (final JsonNode c : run.path("cells"))
        {
            if (c.path("path").asText().equals(path) && c.path("measure").asText().equals(measure) && c.path("rate").asInt() == rate)
            {
                return c;
            }
        }
        return null;
    }

    private static double figure(final JsonNode run, final String path, final String measure, final int rate, final String field)
    {
        final JsonNode c = cell(run, path, measure, rate);
        return c == null ? Double.NaN : c.path(field).asDouble();
    }

    private static void throughputTable(final StringBuilder md, final JsonNode run)
    {
        md.append("\nThroughput: one producer, unpaced, 1 KiB records, acks=1\n\n");
        md.append("| path | records | records/s | MB/s | client CPU ms per MB |\n|---|---:|---:|---:|---:|\n");
        for (final JsonNode t : run.path("throughput"))
        {
            md.append("| ").append(t.path("path").asText()).append(" | ").append(t.path("records").asLong()).append(" | ")
                .append(SideBySideReport.number(t.path("recordsPerSecond").asDouble())).append(" | ")
                .append(SideBySideReport.number(t.path("megabytesPerSecond").asDouble())).append(" | ")
                .append(SideBySideReport.number(t.path("clientCpuMsPerMb").asDouble())).append(" |\n");
        }
    }

    private static void goals(final StringBuilder md, final JsonNode run, final List<Integer> rates)
    {
        final String ferrite = path(FERRITE_CLIENT, Kind.FERRITE);
        final String kafka = path(KAFKA_CLIENTS, Kind.KAFKA);
        md.append("\nIssue 15's goals\n\n| goal | measure | rate | ratio | target | verdict |\n|---|---|---:|---:|---:|---|\n");
        for (final String measure : MEASURES)
        {
            for (final int r : rates)
            {
                goal(md, "p99: " + ferrite + " / " + kafka, measure, rate(r),
                    figure(run, ferrite, measure, r, "p99Us") / figure(run, kafka, measure, r, "p99Us"), P99_TARGET, false);
            }
        }
        for (final String measure : MEASURES)
        {
            for (final int r : rates)
            {
                goal(md, "p50: " + ferrite + " / " + PING_PONG, measure, rate(r),
                    figure(run, ferrite, measure, r, "p50Us") / figure(run, PING_PONG, ClientLatency.ROUND_TRIP, r, "p50Us"),
                    P50_FLOOR_TARGET, false);
            }
        }
        md.append("| in-process no worse than Chronicle Queue | | | | | not measured: no in-process transport |\n");
        final JsonNode f = throughput(run, ferrite);
        final JsonNode k = throughput(run, kafka);
        goal(md, "throughput: " + ferrite + " / " + kafka, "MB/s", "unpaced",
            f.path("megabytesPerSecond").asDouble(Double.NaN) / k.path("megabytesPerSecond").asDouble(Double.NaN), THROUGHPUT_TARGET,
            true);
        final double cpu = f.path("clientCpuMsPerMb").asDouble(Double.NaN) / k.path("clientCpuMsPerMb").asDouble(Double.NaN);
        md.append("| client CPU per MB: ").append(ferrite).append(" / ").append(kafka).append(" | CPU ms per MB | unpaced | ")
            .append(ratio(cpu)).append(" | < 1 | ")
            .append(!Double.isFinite(cpu) ? "not measured" : cpu < 1 ? "met" : String.format(Locale.ROOT, "missed: %.2fx over", cpu))
            .append(" |\n");
    }

    private static void goal(final StringBuilder md, final String goal, final String measure, final String rate, final double ratio,
        final double target, final boolean higher)
    {
        md.append("| ").append(goal).append(" | ").append(measure).append(" | ").append(rate).append(" | ").append(ratio(ratio))
            .append(" | ").append(higher ? "≥ " : "≤ ").append(new java.math.BigDecimal(Double.toString(target)).stripTrailingZeros()
                .toPlainString()).append(" | ")
            .append(SideBySideReport.verdict(ratio, DoubleNode.valueOf(target), higher)).append(" |\n");
    }

    private static String ratio(final double ratio)
    {
        return Double.isFinite(ratio) ? String.format(Locale.ROOT, "%.3f", ratio) : "n/a";
    }

    private static JsonNode throughput(final JsonNode run, final String path)
    {
        for (final JsonNode t : run.path("throughput"))
        {
            if (t.path("path").asText().equals(path))
            {
                return t;
            }
        }
        return com.fasterxml.jackson.databind.node.MissingNode.getInstance();
    }
}
