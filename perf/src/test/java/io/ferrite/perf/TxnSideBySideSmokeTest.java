package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import io.ferrite.perf.sidebyside.SideBySideReport;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The side-by-side runner's transactional suite ({@code --transactions}) completes a tiny run: 2 000
 * records in transactions of 100 and of 1 000, commits timed, each topic read back with
 * read_committed and read_uncommitted, and a paced run (transactions begun on a schedule); beside each producer
 * workload's commit times, the broker's own EndTxn times read over JMX from the broker JVM. Ferrite alone in the default build (about 10 s on two cores),
 * Kafka 4.4 as well with {@code -Dferrite.smoke.kafka=true}. Measures nothing: it checks that every
 * figure was taken, not its value.
 */
class TxnSideBySideSmokeTest
{
    @Test
    void transactionalSuiteCompletesATinyRun() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path out = Path.of("target", "side-by-side-txn-smoke.json");
        final JsonNode json = SideBySideSmokeTest.runSmoke(out, kafka, "--transactions");
        final Set<String> measures = new HashSet<>();
        json.path("metrics").forEach(m -> measures.add(m.path("name").asText() + " | " + m.path("unit").asText()));
        for (final int size : new int[] {100, 1000})
        {
            final String producer = "transactional producer, " + size + " records per transaction";
            for (final String unit : new String[] {"records/s", "commit p50 us", "commit p99 us", "commit mean us",
                "flush before the commit p99 us", "broker CPU ms per MB", "broker EndTxn mean us", "broker EndTxn p50 us, recent",
                "broker EndTxn p99 us, recent"})
            {
                assertTrue(measures.contains(producer + " | " + unit), producer + " " + unit + " in " + measures);
            }
            final String consumer = "consumer of the transactional log (" + size + " per transaction), ";
            assertTrue(measures.contains(consumer + "read_committed | MB/s"), measures.toString());
            assertTrue(measures.contains(consumer + "read_uncommitted | MB/s"), measures.toString());
            assertTrue(measures.contains(consumer + "read_committed / read_uncommitted | ratio of MB/s, same round"),
                measures.toString());
        }
        // the paced run: the same producer on a fixed schedule (100 records, 50 transactions a second, 1 s in the smoke)
        final String paced = "transactional producer, 100 records per transaction, paced at 50 transactions/s";
        for (final String unit : new String[] {"records/s", "commit p50 us", "commit p99 us", "broker CPU ms per MB",
            "broker EndTxn mean us", "broker EndTxn p99 us, recent"})
        {
            assertTrue(measures.contains(paced + " | " + unit), paced + " " + unit + " in " + measures);
        }
        // the producer workloads were timed with the machine's stalls beside them, one row each per broker
        assertEquals(kafka ? 6 : 3, json.path("context").size(), json.path("context").toString());
        final String rendered = SideBySideReport.render("smoke", json);
        assertTrue(rendered.contains("| Ferrite's own 0.9–1.1 |"), rendered);
        assertTrue(rendered.contains("| transactional producer, 1000 records per transaction | commit p99 us (lower is better) |"),
            rendered);
        // the broker's own EndTxn times, read over JMX from each broker JVM, beside the client's commit times
        assertTrue(rendered.contains("| transactional producer, 100 records per transaction | broker EndTxn p99 us, recent (lower is "
            + "better) |"), rendered);
        for (final JsonNode m : json.path("metrics"))
        {
            if ("broker EndTxn mean us".equals(m.path("unit").asText()))
            {
                // the workload's EndTxns were timed by the broker: a mean over them, not NaN (recorded as 0) for none; Kafka's
                // are not checked so: it rounds each time to whole ms, so a mean of 0 is possible on a fast machine
                assertEquals(1, m.path("ferrite").size(), m.toString());
                m.path("ferrite").forEach(v -> assertTrue(v.asDouble() > 0, m.toString()));
                assertEquals(kafka ? 1 : 0, m.path("kafka").size(), m.toString());
            }
        }
        Files.deleteIfExists(out);
    }
}
