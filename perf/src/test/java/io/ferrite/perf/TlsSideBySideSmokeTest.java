package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import io.ferrite.perf.sidebyside.SideBySideReport;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side-by-side runner's secured suite ({@code --security ssl,sasl_ssl}, issue 18) completes a tiny run: real
 * brokers in child JVMs with SSL and SASL_SSL (SCRAM-SHA-512) listeners made from a key store keytool writes at the
 * run's start, kafka-clients producing at acks=1 and all, consuming, at a fixed rate and one record at a time over
 * each; every row taken, no client error, the TLS session each broker negotiated said. Ferrite alone in the default
 * build, Kafka 4.4 as well with {@code -Dferrite.smoke.kafka=true} (then both must have negotiated the same session).
 * Measures nothing.
 */
class TlsSideBySideSmokeTest
{
    @Test
    void securedSuiteCompletesATinyRun() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path out = Path.of("target", "side-by-side-tls-smoke.json");
        final JsonNode json = SideBySideSmokeTest.runSmoke(out, kafka, "--security", "ssl,sasl_ssl");
        final Set<String> measures = new HashSet<>();
        json.path("metrics").forEach(m -> measures.add(m.path("name").asText() + " | " + m.path("unit").asText()));
        for (final String protocol : new String[] {"SSL", "SASL_SSL"})
        {
            for (final String acks : new String[] {"1", "all"})
            {
                for (final String unit : new String[] {"records/s", "MB/s", "broker CPU ms per MB"})
                {
                    final String row = protocol + " producer throughput acks=" + acks + " | " + unit;
                    assertTrue(measures.contains(row), row + " in " + measures);
                }
            }
            for (final String unit : new String[] {"MB/s", "records/s", "broker CPU ms per MB"})
            {
                final String row = protocol + " consumer throughput (1 consumer, data already written) | " + unit;
                assertTrue(measures.contains(row), row + " in " + measures);
            }
            assertTrue(measures.contains(protocol + " latency at 1000 records/s (acks=1, send to ack) | p99 us"), measures.toString());
            assertTrue(measures.contains(protocol + " per-record send().get() acks=1 | p99 us"), measures.toString());
        }
        // two latency workloads per protocol and broker, each with the machine's stalls beside it
        assertEquals(kafka ? 8 : 4, json.path("context").size(), json.path("context").toString());

        final List<String> settings = new ArrayList<>();
        json.path("settings").forEach(s -> settings.add(s.asText()));
        final String negotiated = settings.stream().filter(s -> s.startsWith("negotiated")).findFirst().orElseThrow();
        // each broker's SSL and SASL_SSL listener answered a TLS 1.3 handshake (the suite's default version)
        assertTrue(negotiated.contains("Ferrite: SASL_SSL TLSv1.3 TLS_"), negotiated);
        assertTrue(negotiated.contains(", SSL TLSv1.3 TLS_"), negotiated);
        if (kafka)
        {
            assertTrue(negotiated.contains("Kafka: SASL_SSL TLSv1.3 TLS_"), negotiated);
        }
        // a different session on the two brokers would be a problem of the run
        json.path("problems").forEach(p -> assertTrue(!p.asText().contains("different TLS sessions"), p.asText()));

        final String rendered = SideBySideReport.render("smoke", json);
        assertTrue(rendered.contains("| SASL_SSL producer throughput acks=all | records/s (higher is better) |"), rendered);
        // the goals carried by the rows: 2x the throughput, lower broker CPU per MB
        assertTrue(rendered.matches("(?s).*\\| SSL producer throughput acks=1 \\| records/s \\(higher is better\\) \\|[^\n]*\\| ≥ 2 \\|.*"),
            rendered);
        assertTrue(rendered.matches("(?s).*\\| SSL consumer throughput [^\n]*\\| broker CPU ms per MB \\(lower is better\\) \\|[^\n]*\\| ≤ 1 \\|.*"),
            rendered);
        Files.deleteIfExists(out);
    }
}
