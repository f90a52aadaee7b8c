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
 * The short soak CI runs: three Ferrite nodes behind the link proxies, 2 idempotent acks=all producers at 50
 * records/s and 1 consumer on 2 partitions while the nemesis injects faults for 40 s from a fixed seed (whose first
 * draws are a SIGSTOP, a link delay, a SIGSTOP, a node blackholed from both others and a SIGKILL with restart: every
 * kind of fault, the partition by both the process's and the proxy's hand); then the checker must find nothing:
 * no acknowledged record lost, none duplicated or reordered, the replicas byte-identical below the high watermark,
 * no consumer offset backwards, no consumed record gone. Measures nothing. Tagged slow (a cluster start, 40 s of
 * faults, the healing): CI's slow step runs it.
 */
@Tag("slow")
class SoakSmokeTest
{
    @Test
    void ferriteKeepsEveryPromiseThroughAShortSoak() throws Exception
    {
        final Path dir = Path.of("target", "soak-smoke");
        Files.createDirectories(dir);
        final Path out = dir.resolve("soak.json");
        Files.deleteIfExists(out);
        Soak.run("--seconds", "40", "--seed", "1", "--gap", "1000:3000", "--hold", "2000:5000", "--producers", "2",
            "--rate", "50", "--consumers", "1", "--partitions", "2", "--heap", "256m", "--deadline", "150",
            "--override", "broker.session.timeout.ms=3000", "--override", "broker.heartbeat.interval.ms=500",
            "--out", out.toString(), "--markdown", dir.resolve("soak.md").toString());

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
