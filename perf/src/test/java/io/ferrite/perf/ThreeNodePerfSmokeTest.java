package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.sidebyside.SideBySideReport;
import io.ferrite.perf.sidebyside.ThreeNodePerf;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 14's 3-node side-by-side runner completes its {@code --smoke} run against a three-node Ferrite cluster in
 * child JVMs: one round, 5 000 records of throughput acks=all and 2 s at 500 records/s after 1 s of warm-up, on topics
 * with replication factor 3; it checks that every measure has its figure, that no send failed and the ISR stayed the 3
 * nodes, and that the failover row was read from the latest committed kill-the-leader record with both systems'
 * figures; and that the report renders the rows with the targets and a verdict. Kafka's three nodes take part
 * only with {@code -Dferrite.smoke.kafka.cluster=true} (as {@code KillTheLeaderSmokeTest}: three KRaft nodes took
 * 73-95 s to start on the loaded machine). Measures nothing: no figure is compared with a bound. Tagged slow.
 */
@Tag("slow")
class ThreeNodePerfSmokeTest
{
    @Test
    void runnerCompletesATinyRunOnThreeNodes() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka.cluster");
        final Path out = Path.of("target", "three-nodes-smoke.json");
        Files.deleteIfExists(out);
        final List<String> args = new ArrayList<>(List.of("--smoke", "--deadline", "120", "--out", out.toString(),
            "--failover-from", Path.of("..", "jmh-results", "kill-the-leader").toString()));
        if (!kafka)
        {
            args.add("--skip-kafka");
        }
        ThreeNodePerf.main(args.toArray(String[]::new));

        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(SideBySideReport.isSideBySide(json));
        final List<String> problems = new ArrayList<>();
        json.path("problems").forEach(p -> problems.add(p.asText()));
        // a failed send, a failed round or start, an ISR that shrank during a workload: each is a problem line
        assertFalse(problems.stream().anyMatch(p -> p.contains("failed") || p.contains("ISR") || p.contains("did not")),
            problems.toString());
        final List<String> names = new ArrayList<>();
        for (final JsonNode m : json.path("metrics"))
        {
            final String name = m.path("name").asText() + " | " + m.path("unit").asText();
            names.add(name);
            if (name.contains("failover"))
            {
                // read from the committed record, which has both systems' acks=all cases
                assertTrue(m.path("kafka").size() >= 1 && m.path("ferrite").size() >= 1, m.toString());
                assertEquals(0.2, m.path("target").asDouble(), m.toString());
                continue;
            }
            assertEquals(1, m.path("ferrite").size(), m.toString());
            assertEquals(kafka ? 1 : 0, m.path("kafka").size(), m.toString());
            assertTrue(m.path("ferrite").get(0).asDouble() > 0, m.toString());
        }
        assertEquals(List.of(
            ThreeNodePerf.PREFIX + "start-up, spawn of the first node to DescribeCluster listing the 3 | s",
            ThreeNodePerf.PREFIX + "producer throughput acks=all none | records/s",
            ThreeNodePerf.PREFIX + "producer throughput acks=all none | MB/s",
            ThreeNodePerf.PREFIX + "producer throughput acks=all none | broker CPU ms per MB (the 3 nodes summed)",
            ThreeNodePerf.PREFIX + "producer throughput acks=all none | client CPU ms per MB (the runner's JVM)",
            ThreeNodePerf.PREFIX + "latency at 500 records/s (acks=all, intended send time to ack) | p50 us",
            ThreeNodePerf.PREFIX + "latency at 500 records/s (acks=all, intended send time to ack) | p99 us",
            ThreeNodePerf.PREFIX + "latency at 500 records/s (acks=all, intended send time to ack) | p99.9 us",
            ThreeNodePerf.PREFIX + "latency at 500 records/s (acks=all, intended send time to ack) | max us"),
            names.subList(0, names.size() - 1));
        assertTrue(names.get(names.size() - 1).startsWith(ThreeNodePerf.PREFIX + "failover, leader SIGKILL to the first "
            + "acks=all acknowledgement (kill-the-leader/2"), names.toString());

        final String rendered = SideBySideReport.render("side-by-side-3-nodes", json);
        assertTrue(rendered.contains("| " + ThreeNodePerf.PREFIX + "producer throughput acks=all none | MB/s (higher is better) |"),
            rendered);
        assertTrue(rendered.contains("| ≥ 2 | " + (kafka ? "m" : "not measured")), rendered);
        assertTrue(rendered.contains("failover: not measured by this run but read from the latest kill-the-leader record, "
            + "jmh-results/kill-the-leader/2"), rendered);
        assertTrue(rendered.matches("(?s).*\\| " + java.util.regex.Pattern.quote(ThreeNodePerf.PREFIX)
            + "failover[^\n]*\\| s \\(lower is better\\) \\|[^\n]*\\| ≤ 0\\.2 \\| (met|missed[^|]*) \\|.*"), rendered);
        Files.deleteIfExists(out);
    }
}
