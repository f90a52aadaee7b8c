package io.ferrite.perf;

import io.ferrite.perf.results.ResultsReport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CI does not measure: it checks that every benchmark runs (in-process, one short iteration, with
 * one value of each size parameter but every engine and write strategy) and
 * that the committed RESULTS.md is what the committed JSON gives.
 */
@Tag("slow") // outside the default build: `mvn -B verify -Pslow` (CI runs it), see the README
class BenchmarksSmokeTest
{
    @Test
    void everyBenchmarkRuns() throws RunnerException
    {
        final Collection<RunResult> results = new Runner(new OptionsBuilder()
            .include("io\\.ferrite\\.perf\\..*")
            .forks(0)
            .warmupIterations(0)
            .measurementIterations(1)
            .measurementTime(TimeValue.milliseconds(50))
            .param("logMiB", "2")
            .param("mebibytes", "2")
            // one value of each size parameter (every benchmark and both engines and write strategies still run)
            .param("batchBytes", "1024")
            .param("messageBytes", "64")
            .param("waitingFetches", "100")
            .param("partitions", "10")
            .shouldFailOnError(true)
            .build()).run();
        // one line per benchmark in the list the annotation processor generates
        final long declared;
        try (var in = getClass().getClassLoader().getResourceAsStream("META-INF/BenchmarkList"))
        {
            declared = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).lines()
                .filter(l -> !l.isBlank()).count();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
        assertTrue(declared >= 7, "benchmarks declared: " + declared);
        // each benchmark runs once per mode and combination of its parameters: count the distinct
        // benchmark and mode pairs (the list has a line for each)
        assertEquals(declared, results.stream().map(r -> r.getParams().getBenchmark() + " " + r.getParams().getMode()).distinct()
            .count(), "benchmarks run");
        for (final RunResult r : results)
        {
            assertTrue(r.getPrimaryResult().getScore() > 0, r.getParams().getBenchmark());
        }
    }

    @Test
    void resultsMarkdownIsGeneratedFromTheJson() throws IOException
    {
        final Path dir = Path.of("..", "jmh-results");
        if (!Files.exists(dir.resolve("RESULTS.md")))
        {
            return; // nothing recorded yet
        }
        assertEquals(ResultsReport.render(dir), Files.readString(dir.resolve("RESULTS.md")),
            "jmh-results/RESULTS.md differs from what its JSON gives: run perf/bin/jmh-report");
    }
}
