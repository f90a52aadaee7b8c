package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.soak.Soak;
import io.ferrite.perf.soak.SoakReport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short soak CI runs: three Ferrite nodes behind the link proxies, idempotent acks=all producers at 50 records/s
 * and 1 consumer on 2 partitions while the nemesis injects faults for 55 s from seed 1 (whose first draws are a
 * SIGSTOP, a link delay, a SIGSTOP, a node blackholed from both others, a delay, a SIGSTOP, a SIGKILL with restart
 * at about 35 s: the 55 s leave the kill 15 s of room for a schedule slowed by load);
 * then the checker must find nothing: no acknowledged record lost, none duplicated or reordered, the replicas
 * byte-identical below the high watermark and none behind it, no consumer offset backwards, no consumed record gone.
 * The faults must have taken effect: the SIGKILL ran, and the proxies told the nodes apart (each node opened
 * connections to another node, and was opened connections to by another: raft's leader and followers do, so a
 * proxy that took every node for a client would fail this). Measures nothing.
 * Tagged slow (a cluster start, 55 s of faults, the healing): CI's slow step runs it.
 *
 * <p>Once with one producer and once with three: with more than one, Ferrite lost acknowledged records whenever two
 * producers' InitProducerId went to different nodes while each node handed out producer ids from its own file (both got
 * producer id 0 and the leader took one's batches for retries of the other's: the soak's finding of issue 14,
 * {@code jmh-results/soak.md}); producer ids now come in blocks from the active controller (AllocateProducerIds), as
 * Kafka's do, and the three-producer soak must find nothing either.
 */
@Tag("slow")
class SoakSmokeTest
{
    @Test
    void ferriteKeepsEveryPromiseThroughAShortSoak() throws Exception
    {
        soak(1);
    }

    @Test
    void ferriteKeepsEveryPromiseToSeveralProducersThroughAShortSoak() throws Exception
    {
        soak(3);
    }

    private static void soak(final int producers) throws Exception
    {
        final Path dir = Path.of("target", "soak-smoke-" + producers);
        Files.createDirectories(dir);
        final Path out = dir.resolve("soak.json");
        Files.deleteIfExists(out);
        Soak.run("--seconds", "55", "--seed", "1", "--gap", "1000:3000", "--hold", "2000:5000", "--producers",
            Integer.toString(producers), "--rate", "50", "--consumers", "1", "--partitions", "2", "--heap", "256m",
            "--deadline", "150", "--override", "broker.session.timeout.ms=3000", "--override",
            "broker.heartbeat.interval.ms=500", "--out", out.toString(), "--markdown", dir.resolve("soak.md").toString());

        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(SoakReport.isSoak(json));
        final JsonNode check = json.path("check");
        assertFalse(check.isMissingNode(), "no check ran: " + json.path("problems"));
        assertTrue(json.path("faults").size() >= 3, "faults: " + json.path("faults"));
        boolean killed = false;
        for (final JsonNode f : json.path("faults"))
        {
            assertEquals("", f.path("error").asText(), "a fault failed: " + f);
            killed |= f.path("fault").asText().equals("kill");
        }
        assertTrue(killed, "no SIGKILL ran: " + json.path("faults"));
        final JsonNode connections = json.path("connectionsAccepted");
        for (int node = 1; node <= 3; node++)
        {
            long opened = 0;
            long received = 0;
            for (int peer = 1; peer <= 3; peer++)
            {
                if (peer != node)
                {
                    opened += connections.path(node + "->" + peer).asLong();
                    received += connections.path(peer + "->" + node).asLong();
                }
            }
            assertTrue(opened > 0 && received > 0, "node " + node + "'s connections not told apart: " + connections);
        }
        assertEquals(0, json.path("proxyAcceptFailures").asLong(), "proxy failures: " + json.path("problems"));
        assertTrue(check.path("acknowledged").asLong() > 0, check.toString());
        assertTrue(check.path("consumed").asLong() > 0, check.toString());
        assertEquals(0, check.path("lost").asLong(), "lost: " + check);
        assertEquals(0, check.path("duplicated").asLong(), "duplicated: " + check);
        assertEquals(0, check.path("reordered").asLong(), "reordered: " + check);
        assertEquals(0, check.path("divergentPartitions").asLong(), "divergent: " + check);
        assertEquals(0, check.path("replicasBehind").asLong(), "behind: " + check);
        assertEquals(0, check.path("consumerOffsetWentBackwards").asLong(), "backwards: " + check);
        assertEquals(0, check.path("consumedThenDisappeared").asLong(), "disappeared: " + check);
        assertTrue(check.path("ok").asBoolean(), check.toString());
    }
}
