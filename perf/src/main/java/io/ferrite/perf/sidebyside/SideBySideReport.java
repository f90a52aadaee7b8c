package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Renders a side-by-side run (the JSON {@link SideBySide} writes) as markdown: used by the runner and by ResultsReport. */
public final class SideBySideReport
{
    public static final String KIND = "ferrite-side-by-side";

    private SideBySideReport()
    {
    }

    public static boolean isSideBySide(final JsonNode json)
    {
        return json.isObject() && KIND.equals(json.path("kind").asText());
    }

    public static String render(final String name, final JsonNode run)
    {
        final StringBuilder md = new StringBuilder();
        final JsonNode meta = run.path("meta");
        md.append("\n## ").append(name).append(" (side by side with Apache Kafka)\n\n");
        md.append("- date: ").append(meta.path("date").asText()).append(", commit `").append(meta.path("commit").asText()).append("`\n");
        md.append("- JDK: ").append(meta.path("jdk").asText()).append("\n");
        md.append("- machine: ").append(meta.path("cpu").asText()).append(", ").append(meta.path("cores").asText())
            .append(" cores, ").append(meta.path("os").asText()).append('\n');
        md.append("- command: `").append(meta.path("command").asText()).append("`\n");
        for (final JsonNode s : run.path("settings"))
        {
            md.append("- ").append(s.asText()).append('\n');
        }
        loadLines(md, run, "compare Kafka and Ferrite within this run (rounds alternate, each sees about the same load)");
        md.append("\nMedian over the rounds, (min–max) across rounds; ratio = Ferrite / Kafka of the medians.\n\n");
        md.append("| measure | unit | Kafka | Ferrite | Ferrite / Kafka | target | verdict |\n");
        md.append("|---|---|---:|---:|---:|---:|---|\n");
        for (final JsonNode m : run.path("metrics"))
        {
            final double[] k = values(m.path("kafka"));
            final double[] f = values(m.path("ferrite"));
            final double km = median(k);
            final double fm = median(f);
            final double ratio = fm / km;
            final boolean higher = "higher".equals(m.path("better").asText());
            // Judged by today's target, not the one recorded with the run (SideBySideTargets).
            final Double today = SideBySideTargets.of(m.path("name").asText(), m.path("unit").asText());
            final JsonNode target = today == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance()
                : com.fasterxml.jackson.databind.node.DoubleNode.valueOf(today);
            md.append("| ").append(m.path("name").asText()).append(" | ").append(m.path("unit").asText())
                .append(higher ? " (higher is better)" : " (lower is better)")
                .append(" | ").append(spread(k)).append(" | ").append(spread(f))
                .append(" | ").append(Double.isFinite(ratio) ? String.format(Locale.ROOT, "%.3f", ratio) : "n/a");
            final double[] own = SideBySideTargets.ownRange(m.path("name").asText());
            if (own != null)
            {
                md.append(" | Ferrite's own ").append(plain(own[0])).append("–").append(plain(own[1]))
                    .append(" | ").append(ownVerdict(fm, own)).append(" |\n");
                continue;
            }
            md.append(" | ").append(target.isNumber() ? (higher ? "≥ " : "≤ ") + new java.math.BigDecimal(target.asText()).stripTrailingZeros().toPlainString() : "")
                .append(" | ").append(verdict(ratio, target, higher)).append(" |\n");
        }
        if (run.path("context").size() > 0)
        {
            context(md, run.path("context"));
        }
        if (run.path("perRecord").size() > 0)
        {
            md.append("\nPer-record synchronous sends (`send().get()`, 1 KiB, linger.ms=0; latencies in us, elapsed in ms):\n\n```\n");
            for (final JsonNode line : run.path("perRecord"))
            {
                md.append(line.asText()).append('\n');
            }
            md.append("```\n");
        }
        if (run.path("problems").size() > 0)
        {
            md.append("\nProblems seen during the run (client errors, broker log warnings):\n\n");
            for (final JsonNode p : run.path("problems"))
            {
                md.append("- ").append(p.asText().replace("|", "\\|")).append('\n');
            }
        }
        return md.toString();
    }

    /**
     * The load average line of a run's {@code load} entries ("label before -> after") and, when it passed twice the
     * cores, the warning that the run was taken under load, ending with {@code compare}: what may still be compared.
     */
    static void loadLines(final StringBuilder md, final JsonNode run, final String compare)
    {
        final JsonNode meta = run.path("meta");
        if (run.path("load").size() == 0)
        {
            return;
        }
        final List<String> load = new ArrayList<>();
        run.path("load").forEach(l -> load.add(l.asText()));
        md.append("- 1-minute load average at the start and end of each round (other work on this machine, ")
            .append(meta.path("cores").asText()).append(" cores): ").append(String.join("; ", load)).append('\n');
        final double peak = peakLoad(load);
        final int cores = meta.path("cores").asInt(0);
        if (cores > 0 && peak > 2.0 * cores)
        {
            md.append("- **taken under load**: the 1-minute load average reached ").append(number(peak)).append(" on ")
                .append(cores).append(" cores (the run itself makes about 2), so other work had most of the machine; ")
                .append(compare).append(", and expect other figures on a quiet machine\n");
        }
    }

    /**
     * What else happened during each latency workload, one row per workload and broker, medians over
     * the rounds: the machine's own stalls as the runner saw them, and both JVMs' GC pauses.
     */
    private static void context(final StringBuilder md, final JsonNode context)
    {
        md.append("\nWhat else happened during each latency workload (medians over the rounds): how late a runner thread ")
            .append("woke from 1 ms sleeps (the machine's own stalls, whichever broker runs), the runner JVM's GC pauses, the ")
            .append("broker JVM's GC pauses (count, sum, longest) and CPU time. A client cannot see a latency tail below the ")
            .append("stalls of the machine it runs on.\n\n");
        md.append("| workload | broker | hiccup p99 us | hiccup p99.9 us | hiccup max us | runner GC ms | broker GC pauses | ")
            .append("broker GC ms | longest broker GC ms | broker CPU ms |\n");
        md.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        final Map<String, List<JsonNode>> rows = new LinkedHashMap<>();
        for (final JsonNode c : context)
        {
            rows.computeIfAbsent(c.path("workload").asText() + "\u0000" + c.path("broker").asText(), k -> new ArrayList<>()).add(c);
        }
        for (final List<JsonNode> row : rows.values())
        {
            final JsonNode first = row.get(0);
            md.append("| ").append(first.path("workload").asText()).append(" | ")
                .append("kafka".equals(first.path("broker").asText()) ? "Kafka" : "Ferrite");
            for (final String field : new String[] {"hiccupP99Us", "hiccupP999Us", "hiccupMaxUs", "runnerGcMs", "brokerGcCount",
                "brokerGcMs", "brokerGcMaxMs", "brokerCpuMs"})
            {
                md.append(" | ").append(number(median(row.stream().mapToDouble(n -> n.path(field).asDouble()).toArray())));
            }
            md.append(" |\n");
        }
    }

    static String verdict(final double ratio, final JsonNode target, final boolean higher)
    {
        if (!target.isNumber())
        {
            return "";
        }
        if (!Double.isFinite(ratio))
        {
            return "not measured";
        }
        final double t = target.asDouble();
        if (higher ? ratio >= t : ratio <= t)
        {
            return "met";
        }
        final double factor = higher ? t / ratio : (ratio == 0 ? Double.POSITIVE_INFINITY : ratio / t);
        return String.format(Locale.ROOT, "missed: %.2fx short", factor);
    }

    /** The highest load average in the runner's "label before -> after" entries. */
    static double peakLoad(final List<String> load)
    {
        double peak = 0;
        for (final String entry : load)
        {
            final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\d+\\.\\d+").matcher(entry);
            while (m.find())
            {
                peak = Math.max(peak, Double.parseDouble(m.group()));
            }
        }
        return peak;
    }

    /** The verdict on a figure of Ferrite's own that must lie in {@code range} (not a ratio to Kafka's). */
    static String ownVerdict(final double ferrite, final double[] range)
    {
        if (!Double.isFinite(ferrite))
        {
            return "not measured";
        }
        if (ferrite >= range[0] && ferrite <= range[1])
        {
            return "met";
        }
        return String.format(Locale.ROOT, "missed: Ferrite's %.3f is outside %s–%s", ferrite, plain(range[0]), plain(range[1]));
    }

    private static String plain(final double v)
    {
        return new java.math.BigDecimal(Double.toString(v)).stripTrailingZeros().toPlainString();
    }

    private static double[] values(final JsonNode array)
    {
        final List<Double> out = new ArrayList<>();
        for (final JsonNode v : array)
        {
            if (v.isNumber())
            {
                out.add(v.asDouble());
            }
        }
        return out.stream().mapToDouble(Double::doubleValue).toArray();
    }

    static double median(final double[] values)
    {
        if (values.length == 0)
        {
            return Double.NaN;
        }
        final double[] sorted = values.clone();
        Arrays.sort(sorted);
        final int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }

    private static String spread(final double[] values)
    {
        if (values.length == 0)
        {
            return "n/a";
        }
        final double min = Arrays.stream(values).min().getAsDouble();
        final double max = Arrays.stream(values).max().getAsDouble();
        return number(median(values)) + (values.length > 1 ? " (" + number(min) + "–" + number(max) + ")" : "");
    }

    static String number(final double v)
    {
        if (Double.isNaN(v))
        {
            return "n/a";
        }
        final double a = Math.abs(v);
        if (a >= 100 || v == 0)
        {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return a >= 1 ? String.format(Locale.ROOT, "%.2f", v) : String.format(Locale.ROOT, "%.3f", v);
    }
}
