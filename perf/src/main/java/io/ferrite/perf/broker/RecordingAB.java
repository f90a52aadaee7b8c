package io.ferrite.perf.broker;

import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.profile.GCProfiler;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.util.ListStatistics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * Issue 16's Must show, "the JMH request-path figures with metrics on and off differ by less than their error":
 * {@link RequestPathBenchmark} ({@code waitingFetches=0} unless given) with {@code recording=true} and
 * {@code recording=false} (the broker's {@code ferrite.metrics.recording}) in one fork each per round, the order
 * alternating (on off, off on, on off, ...) so that a machine that gets busier or quieter over the run weighs on both
 * alike; {@code -prof gc} always. Each side's iterations over all its forks are put together as JMH puts together the
 * iterations of {@code -f N} forks, and the mean and its 99.9% error are JMH's ({@link ListStatistics}).
 *
 * <p>{@code perf/bin/metrics-ab [--rounds N] [--out DIR] [JMH options]}: {@code --rounds} (5) forks per side; any JMH
 * option passes through ({@code -wi 3 -w 2 -i 5 -r 2}, the benchmark's own, by default; {@code -bm sample} for the
 * latency distribution; {@code -p waitingFetches=100}). Each run's JMH JSON goes to {@code DIR}
 * ({@code round-R-recording-on.json}). Prints, per benchmark and mode: each side's mean ± error, the difference and the
 * error of the difference ({@code sqrt(error_on^2 + error_off^2)}; "within" when the difference is smaller), and
 * {@code gc.alloc.rate.norm} (bytes per operation, every thread of the JVM: the broker's and JMH's).
 */
public final class RecordingAB
{
    private static final String ALLOCATION = "gc.alloc.rate.norm";

    /** One side's figures of one benchmark and mode. */
    private static final class Side
    {
        final ListStatistics score = new ListStatistics();
        final ListStatistics allocation = new ListStatistics();
        final List<String> forks = new ArrayList<>();
        String unit = "";
    }

    private RecordingAB()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        int rounds = 5;
        Path out = Path.of("perf", "target", "metrics-ab");
        final List<String> jmh = new ArrayList<>();
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--out" -> out = Path.of(args[++i]);
                default -> jmh.add(args[i]);
            }
        }
        Files.createDirectories(out);
        final CommandLineOptions given = new CommandLineOptions(jmh.toArray(String[]::new));
        final long startNs = System.nanoTime();
        // benchmark and mode -> recording (true, false) -> its figures
        final Map<String, Side[]> sides = new TreeMap<>();
        final StringBuilder loads = new StringBuilder();
        for (int round = 1; round <= rounds; round++)
        {
            final boolean[] order = round % 2 == 1 ? new boolean[] {true, false} : new boolean[] {false, true};
            for (final boolean recording : order)
            {
                final String name = "round-" + round + "-recording-" + (recording ? "on" : "off");
                loads.append(String.format(Locale.ROOT, "  %s: load average %s%n", name, loadAverage()));
                final ChainedOptionsBuilder options = new OptionsBuilder().parent(given)
                    .include(RequestPathBenchmark.class.getName() + "\\.(produce|fetch)$")
                    .param("recording", Boolean.toString(recording))
                    .forks(1)
                    .addProfiler(GCProfiler.class)
                    .resultFormat(ResultFormatType.JSON)
                    .result(out.resolve(name + ".json").toString())
                    .shouldFailOnError(true);
                if (!given.getParameter("waitingFetches").hasValue())
                {
                    options.param("waitingFetches", "0");
                }
                if (given.getBenchModes().isEmpty())
                {
                    options.mode(Mode.AverageTime);
                }
                for (final RunResult run : new Runner(options.build()).run())
                {
                    add(sides, run, recording, round);
                }
            }
        }
        System.out.print(report(sides, rounds, (System.nanoTime() - startNs) / 1e9, loads));
    }

    private static void add(final Map<String, Side[]> sides, final RunResult run, final boolean recording, final int round)
    {
        final String benchmark = run.getParams().getBenchmark();
        final String key = benchmark.substring(benchmark.lastIndexOf('.') + 1) + " " + run.getParams().getMode().shortLabel()
            + " waitingFetches=" + run.getParams().getParam("waitingFetches");
        final Side side = sides.computeIfAbsent(key, k -> new Side[] {new Side(), new Side()})[recording ? 0 : 1];
        final ListStatistics fork = new ListStatistics();
        for (final BenchmarkResult result : run.getBenchmarkResults())
        {
            for (final IterationResult iteration : result.getIterationResults())
            {
                final double score = iteration.getPrimaryResult().getScore();
                side.score.addValue(score);
                fork.addValue(score);
                side.unit = iteration.getPrimaryResult().getScoreUnit();
                for (final Map.Entry<String, Result> secondary : iteration.getSecondaryResults().entrySet())
                {
                    if (secondary.getKey().endsWith(ALLOCATION))
                    {
                        side.allocation.addValue(secondary.getValue().getScore());
                    }
                }
            }
        }
        side.forks.add(String.format(Locale.ROOT, "%.2f (round %d)", fork.getMean(), round));
    }

    /** The table: each side's mean ± 99.9% error over its iterations, the difference and its error, the allocation. */
    static String report(final Map<String, Side[]> sides, final int rounds, final double seconds, final CharSequence loads)
    {
        final StringBuilder md = new StringBuilder();
        md.append(String.format(Locale.ROOT, "RequestPathBenchmark, ferrite.metrics.recording on and off: %d forks each, "
            + "alternating; %.0f s in all%n%n", rounds, seconds));
        md.append("| benchmark | on | off | off - on | error of the difference | within | alloc B/op on | alloc B/op off |\n");
        md.append("|---|---|---|---|---|---|---|---|\n");
        for (final Map.Entry<String, Side[]> e : sides.entrySet())
        {
            final Side on = e.getValue()[0];
            final Side off = e.getValue()[1];
            if (on.score.getN() < 2 || off.score.getN() < 2)
            {
                md.append("| ").append(e.getKey()).append(" | too few iterations for an error |\n");
                continue;
            }
            final double errorOn = on.score.getMeanErrorAt(0.999);
            final double errorOff = off.score.getMeanErrorAt(0.999);
            final double difference = off.score.getMean() - on.score.getMean();
            final double error = Math.sqrt(errorOn * errorOn + errorOff * errorOff);
            md.append(String.format(Locale.ROOT, "| %s | %.2f ± %.2f %s | %.2f ± %.2f %s | %+.2f | %.2f | %s | %s | %s |%n",
                e.getKey(), on.score.getMean(), errorOn, on.unit, off.score.getMean(), errorOff, off.unit, difference, error,
                Math.abs(difference) < error ? "yes" : "no", allocation(on), allocation(off)));
        }
        md.append("\nForks' means:\n");
        for (final Map.Entry<String, Side[]> e : sides.entrySet())
        {
            md.append("  ").append(e.getKey()).append(" on: ").append(String.join(", ", e.getValue()[0].forks)).append('\n');
            md.append("  ").append(e.getKey()).append(" off: ").append(String.join(", ", e.getValue()[1].forks)).append('\n');
        }
        return md.append("\nLoad at each run's start:\n").append(loads).toString();
    }

    private static String allocation(final Side side)
    {
        return side.allocation.getN() < 2 ? "-" : String.format(Locale.ROOT, "%.1f ± %.1f", side.allocation.getMean(),
            side.allocation.getMeanErrorAt(0.999));
    }

    private static String loadAverage()
    {
        try
        {
            final String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        }
        catch (final IOException | RuntimeException ex)
        {
            return "(unknown)";
        }
    }
}
