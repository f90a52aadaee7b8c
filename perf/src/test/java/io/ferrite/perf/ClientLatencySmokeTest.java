package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.sidebyside.ClientLatencyReport;
import io.ferrite.perf.sidebyside.SideBySide;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side-by-side runner's client latency mode ({@code --client-latency --smoke}) completes a tiny run with real
 * brokers in child JVMs: the bare ping-pong, then kafka-clients and the Ferrite client against Ferrite (and against
 * Kafka 4.4 with {@code -Dferrite.smoke.kafka=true}), one rate (1 000/s), half a second of warm-up and one second
 * measured per cell, and the throughput row. Every record of every cell must be acknowledged (and polled, for the
 * end-to-end measure) and measured exactly once: a cell that lost a record, or measured one twice, fails. Measures
 * nothing: the figures' values are not checked.
 */
class ClientLatencySmokeTest
{
    private static final String[] MEASURES = {"send to ack, acks=1", "send to ack, acks=all", "send to poll (end to end), acks=1"};

    @Test
    void clientLatencyModeCompletesATinyRun() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path out = Path.of("target", "client-latency-smoke.json");
        final List<String> args = new ArrayList<>(List.of("--client-latency", "--smoke", "--out", out.toString()));
        if (!kafka)
        {
            args.add("--skip-kafka");
        }
        SideBySide.main(args.toArray(String[]::new));
        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(ClientLatencyReport.isClientLatency(json));
        final List<String> problems = new ArrayList<>();
        json.path("problems").forEach(p -> problems.add(p.asText()));
        assertFalse(problems.stream().anyMatch(p -> p.contains("failed")), problems.toString());

        final List<String> paths = new ArrayList<>(List.of("kafka-clients → Ferrite", "Ferrite client → Ferrite"));
        if (kafka)
        {
            paths.addAll(List.of("kafka-clients → Kafka", "Ferrite client → Kafka"));
        }
        for (final String path : paths)
        {
            for (final String measure : MEASURES)
            {
                measuredEveryRecord(json, path, measure);
            }
        }
        measuredEveryRecord(json, "bare socket ping-pong (loopback, the floor)", "round trip");
        assertEquals(paths.size() * MEASURES.length + 1, json.path("cells").size(), json.path("cells").toString());

        for (final String path : paths)
        {
            final JsonNode t = throughput(json, path);
            assertNotNull(t, path + " in " + json.path("throughput"));
            assertEquals(2000, t.path("records").asInt(), t.toString());
            assertTrue(t.path("megabytesPerSecond").asDouble() > 0, t.toString());
            assertTrue(t.path("clientCpuMsPerMb").asDouble() > 0, t.toString());
        }

        final String rendered = ClientLatencyReport.render("smoke", json);
        assertTrue(rendered.contains("| in-process (Ferrite embedded) | not measured: the Ferrite client has no in-process "
            + "transport yet"), rendered);
        for (final String measure : MEASURES)
        {
            final String p99 = "| p99: Ferrite client → Ferrite / kafka-clients → Kafka | " + measure + " | 1 000/s | ";
            assertTrue(rendered.contains(p99), p99 + " in " + rendered);
            final String verdict = rendered.substring(rendered.indexOf(p99)).split("\n")[0];
            assertTrue(kafka ? verdict.matches(".*\\| (met|missed: [0-9.]+x short) \\|$") : verdict.endsWith("| not measured |"), verdict);
            final String floor = "| p50: Ferrite client → Ferrite / bare socket ping-pong (loopback, the floor) | " + measure
                + " | 1 000/s | ";
            assertTrue(rendered.contains(floor), floor + " in " + rendered);
            assertTrue(rendered.substring(rendered.indexOf(floor)).split("\n")[0].matches(".*\\| (met|missed: [0-9.]+x short) \\|$"),
                rendered);
        }
        Files.deleteIfExists(out);
    }

    /** Every measured record of the cell was measured once: as many samples as the schedule's measured records, none failed. */
    private static void measuredEveryRecord(final JsonNode json, final String path, final String measure)
    {
        final JsonNode c = ClientLatencyReport.cell(json, path, measure, 1000);
        assertNotNull(c, path + " " + measure + " in " + json.path("cells"));
        assertEquals(1000, c.path("expected").asLong(), c.toString()); // 1 000/s for 1 s measured
        assertEquals(c.path("expected").asLong(), c.path("samples").asLong(), c.toString());
        assertEquals(0, c.path("failed").asLong(), c.toString());
        assertTrue(c.path("p50Us").asLong() > 0 && c.path("p50Us").asLong() <= c.path("p99Us").asLong()
            && c.path("p99Us").asLong() <= c.path("p999Us").asLong() && c.path("p999Us").asLong() <= c.path("maxUs").asLong(),
            c.toString());
    }

    private static JsonNode throughput(final JsonNode json, final String path)
    {
        for (final JsonNode t : json.path("throughput"))
        {
            if (t.path("path").asText().equals(path))
            {
                return t;
            }
        }
        return null;
    }
}
