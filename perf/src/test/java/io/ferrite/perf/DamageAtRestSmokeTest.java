package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.damage.DamageAtRest;
import io.ferrite.perf.damage.DamageReport;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The damage-at-rest tool produces a row for one case (the active segment truncated mid-batch after
 * a SIGKILL) against both brokers in child JVMs, with the damage applied to each broker's own files
 * and the partition read back: about 50 s on two cores, most of it Kafka's format and two starts.
 * Kafka takes part only with {@code -Dferrite.smoke.kafka=true} (the {@code long} profile, and CI) and
 * is left out of the default build. Judges neither broker: the table does that.
 */
class DamageAtRestSmokeTest
{
    private static final int RECORDS = 2500;

    @Test
    void toolProducesARowForEachBroker() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path out = Path.of("target", "damage-smoke.json");
        final List<String> args = new ArrayList<>(List.of("--case", "truncate-active-midbatch", "--stop", "kill",
            "--records", Integer.toString(RECORDS), "--out", out.toString(), "--broker", "ferrite"));
        if (kafka)
        {
            args.add("--broker");
            args.add("kafka");
        }
        DamageAtRest.main(args.toArray(String[]::new));

        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertEquals(1, json.path("rows").size(), json.toString());
        final JsonNode row = json.path("rows").get(0);
        assertEquals("truncate-active-midbatch", row.path("case").asText());
        assertEquals("kill", row.path("stop").asText());
        for (final String broker : kafka ? new String[] {"ferrite", "kafka"} : new String[] {"ferrite"})
        {
            final JsonNode r = row.path(broker);
            assertFalse(r.isMissingNode(), broker + " has no result: " + row);
            // the damage reached this broker's own files, and the broker came back and was read
            assertTrue(r.path("damage").asText().startsWith("truncated "), r.toString());
            assertTrue(r.path("serving").asBoolean(), r.toString());
            assertEquals(RECORDS, r.path("intact").asInt() + r.path("lost").asInt(), r.toString());
            assertTrue(r.path("intact").asInt() > 0, "nothing was read back: " + r);
            assertTrue(r.path("lost").asInt() > 0, "a truncated batch cannot be served: " + r);
        }
        if (!kafka)
        {
            assertEquals("incomplete", DamageReport.verdict(row));
        }
        else
        {
            assertNotEquals("incomplete", DamageReport.verdict(row));
        }
        final String md = Files.readString(Path.of("target", "damage-smoke.md"));
        assertTrue(md.contains("| truncate-active-midbatch | kill | "), md);
        final JsonNode meta = new ObjectMapper().readTree(Path.of("target", "damage-smoke.meta.json").toFile());
        assertTrue(meta.path("jdk").asText().length() > 0 && meta.path("date").asText().length() > 0, meta.toString());
        for (final String suffix : new String[] {".json", ".meta.json", ".md"})
        {
            Files.deleteIfExists(Path.of("target", "damage-smoke" + suffix));
        }
    }
}
