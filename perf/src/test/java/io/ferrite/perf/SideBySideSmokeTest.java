package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.sidebyside.SideBySideReport;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side-by-side runner completes a tiny run (one round, a few thousand records, Kafka's tools
 * included) against both brokers in child JVMs: about 30 s on two cores, most of it Kafka's start.
 * Kafka takes part only with {@code -Dferrite.smoke.kafka=true} (the {@code long} profile, and CI) and
 * is left out of the default build (about 12 s). Measures nothing.
 */
class SideBySideSmokeTest
{
    @Test
    void runnerCompletesATinyRun() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path out = Path.of("target", "side-by-side-smoke.json");
        final JsonNode json = runSmoke(out, kafka);
        assertTrue(json.path("metrics").size() >= 30, "metrics: " + json.path("metrics").size());
        final String rendered = SideBySideReport.render("smoke", json);
        assertTrue(rendered.contains("| producer throughput acks=all lz4 | records/s"));
        assertTrue(rendered.contains("| producer throughput acks=1 none | broker CPU ms per MB (lower is better) |"));
        // what else happened during the 5 latency workloads (one rate, three per-record modes, end-to-end), per broker
        assertEquals(kafka ? 10 : 5, json.path("context").size(), json.path("context").toString());
        for (final JsonNode c : json.path("context"))
        {
            assertTrue(c.path("hiccupMaxUs").asLong() > 0, c.toString()); // a 1 ms sleep never wakes exactly on time
            assertTrue(c.path("brokerGcCount").asInt() >= 0, c.toString()); // -1: the broker's GC log was not read
            assertTrue(c.path("brokerCpuMs").asDouble() >= 0, c.toString()); // -1: /proc/<pid>/stat was not read
        }
        assertTrue(rendered.contains("| per-record send().get() acks=all | Ferrite |"), rendered);
        Files.deleteIfExists(out);
    }

    /**
     * Runs the runner with {@code --smoke} and {@code options}, Kafka taking part when {@code kafka}, and
     * answers its JSON, checked: a side-by-side run, no workload failed, one figure a broker per measure.
     */
    static JsonNode runSmoke(final Path out, final boolean kafka, final String... options) throws Exception
    {
        final List<String> args = new ArrayList<>(List.of(options));
        args.addAll(List.of("--smoke", "--out", out.toString()));
        if (!kafka)
        {
            args.add("--skip-kafka");
        }
        io.ferrite.perf.sidebyside.SideBySide.main(args.toArray(String[]::new));
        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(SideBySideReport.isSideBySide(json));
        final List<String> problems = new ArrayList<>();
        json.path("problems").forEach(p -> problems.add(p.asText()));
        // a failed send, commit or read (fewer records read back than written) is a problem "... N failed"
        assertFalse(problems.stream().anyMatch(p -> p.contains(" failed")), problems.toString());
        for (final JsonNode m : json.path("metrics"))
        {
            assertEquals(1, m.path("ferrite").size(), m.toString());
            assertEquals(kafka ? 1 : 0, m.path("kafka").size(), m.toString());
        }
        return json;
    }
}
