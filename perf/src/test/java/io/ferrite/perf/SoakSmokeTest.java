package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.soak.Soak;
import io.ferrite.perf.soak.SoakReport;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The short soak CI runs: three Ferrite nodes behind the link proxies, idempotent acks=all producers at 50 records/s
 * and 1 consumer on 2 partitions while the nemesis injects faults for 45 s from seed 1 (whose first draws are a
 * SIGSTOP, a link delay, a SIGSTOP, a node blackholed from both others, a delay, a SIGSTOP, a SIGKILL with restart
 * at about 35 s);
 * then the checker must find nothing: no acknowledged record lost, none duplicated or reordered, the replicas
 * byte-identical below the high watermark, no consumer offset backwards, no consumed record gone. Measures nothing.
 * Tagged slow (a cluster start, 45 s of faults, the healing): CI's slow step runs it.
 *
 * <p>With one producer in CI: with more than one, Ferrite loses acknowledged records whenever two producers' InitProducerId
 * went to different nodes — each node hands out producer ids from its own file ({@code ProducerIds}, from 0), so both
 * get producer id 0 and the leader takes one's batches for retries of the other's (the soak's finding of issue 14,
 * {@code jmh-results/soak.md}); whether two producers meet on one node is the clients' choice, so that test would pass
 * or fail by chance. The multi-producer case is disabled until producer ids are allocated cluster-wide (Kafka: blocks
 * from the controller, AllocateProducerIds).
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
    @Disabled("issue 14 soak finding: producer ids are per node in cluster mode, two producers can both get id 0")
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
        Soak.run("--seconds", "45", "--seed", "1", "--gap", "1000:3000", "--hold", "2000:5000", "--producers",
            Integer.toString(producers), "--rate", "50", "--consumers", "1", "--partitions", "2", "--heap", "256m",
            "--deadline", "150", "--override", "broker.session.timeout.ms=3000", "--override",
            "broker.heartbeat.interval.ms=500", "--out", out.toString(), "--markdown", dir.resolve("soak.md").toString());

        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(SoakReport.isSoak(json));
        final JsonNode check = json.path("check");
        assertFalse(check.isMissingNode(), "no check ran: " + json.path("problems"));
        assertTrue(json.path("faults").size() >= 3, "faults: " + json.path("faults"));
        for (final JsonNode f : json.path("faults"))
        {
            assertEquals("", f.path("error").asText(), "a fault failed: " + f);
        }
        assertTrue(check.path("acknowledged").asLong() > 0, check.toString());
        assertTrue(check.path("consumed").asLong() > 0, check.toString());
        assertEquals(0, check.path("lost").asLong(), "lost: " + check);
        assertEquals(0, check.path("duplicated").asLong(), "duplicated: " + check);
        assertEquals(0, check.path("reordered").asLong(), "reordered: " + check);
        assertEquals(0, check.path("divergentPartitions").asLong(), "divergent: " + check);
        assertEquals(0, check.path("consumerOffsetWentBackwards").asLong(), "backwards: " + check);
        assertEquals(0, check.path("consumedThenDisappeared").asLong(), "disappeared: " + check);
        assertTrue(check.path("ok").asBoolean(), check.toString());
    }
}
