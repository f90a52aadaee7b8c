package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The client latency report's goals and verdicts, from a run made up here (no broker). */
class ClientLatencyReportTest
{
    private final ObjectNode run = new ObjectMapper().createObjectNode();
    private final ArrayNode cells = run.putArray("cells");

    @Test
    void goalsAreJudgedAgainstKafkaClientsOnKafkaAndAgainstThePingPong()
    {
        run.put("kind", ClientLatencyReport.KIND);
        run.putObject("meta").put("cores", "2");
        for (final String measure : new String[] {ClientLatency.ACK_1, ClientLatency.ACK_ALL, ClientLatency.END_TO_END})
        {
            cell("kafka-clients → Kafka", measure, 1000, 400, 1000);
            cell("Ferrite client → Ferrite", measure, 1000, 60, 50); // p99 0.05x Kafka's, p50 2x the ping-pong's
            cell("kafka-clients → Kafka", measure, 50000, 400, 1000);
            cell("Ferrite client → Ferrite", measure, 50000, 200, 300); // p99 0.3x, p50 8x
        }
        cell(ClientLatency.PING_PONG, ClientLatency.ROUND_TRIP, 1000, 30, 80);
        cell(ClientLatency.PING_PONG, ClientLatency.ROUND_TRIP, 50000, 25, 90);
        run.putArray("unavailable").addObject().put("path", ClientLatency.IN_PROCESS).put("reason", ClientLatency.NO_IN_PROCESS);
        final ArrayNode t = run.putArray("throughput");
        t.addObject().put("path", "kafka-clients → Kafka").put("records", 1000).put("megabytesPerSecond", 100.0)
            .put("clientCpuMsPerMb", 8.0);
        t.addObject().put("path", "Ferrite client → Ferrite").put("records", 1000).put("megabytesPerSecond", 150.0)
            .put("clientCpuMsPerMb", 2.0);
        final String md = ClientLatencyReport.render("test", run);

        assertTrue(md.contains("| p99: Ferrite client → Ferrite / kafka-clients → Kafka | send to ack, acks=1 | 1 000/s | 0.050 | "
            + "≤ 0.1 | met |"), md);
        assertTrue(md.contains("| p99: Ferrite client → Ferrite / kafka-clients → Kafka | send to poll (end to end), acks=1 | "
            + "50 000/s | 0.300 | ≤ 0.1 | missed: 3.00x short |"), md);
        assertTrue(md.contains("| p50: Ferrite client → Ferrite / bare socket ping-pong (loopback, the floor) | send to ack, "
            + "acks=all | 1 000/s | 2.000 | ≤ 3 | met |"), md);
        assertTrue(md.contains("| p50: Ferrite client → Ferrite / bare socket ping-pong (loopback, the floor) | send to ack, "
            + "acks=all | 50 000/s | 8.000 | ≤ 3 | missed: 2.67x short |"), md);
        assertTrue(md.contains("| throughput: Ferrite client → Ferrite / kafka-clients → Kafka | MB/s | unpaced | 1.500 | ≥ 2 | "
            + "missed: 1.33x short |"), md);
        assertTrue(md.contains("| client CPU per MB: Ferrite client → Ferrite / kafka-clients → Kafka | CPU ms per MB | unpaced | "
            + "0.250 | < 1 | met |"), md);
        // the paths not in the run are shown as such, the in-process one with its reason
        assertTrue(md.contains("| kafka-clients → Ferrite | n/a | n/a | n/a | n/a | n/a | n/a | n/a | n/a |"), md);
        assertTrue(md.contains("| in-process (Ferrite embedded) | not measured: the Ferrite client has no in-process transport"), md);
        assertTrue(md.contains("| bare socket ping-pong (loopback, the floor) | 30 | 80 | 81 | 82 | 25 | 90 | 91 | 92 |"), md);
    }

    private void cell(final String path, final String measure, final int rate, final long p50, final long p99)
    {
        cells.addObject().put("path", path).put("measure", measure).put("rate", rate).put("expected", 10).put("samples", 10)
            .put("p50Us", p50).put("p99Us", p99).put("p999Us", p99 + 1).put("maxUs", p99 + 2).put("failed", 0);
    }
}
