package io.ferrite.perf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.ferrite.perf.sidebyside.PartitionScaleReport;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The partition-scale runner completes a tiny run (20 partitions as 2 topics of 10) against Ferrite,
 * and against Kafka 4.4 too with {@code -Dferrite.smoke.kafka=true} (the {@code long} profile, and CI's
 * perf step; the default build leaves Kafka out: its three starts are most of the 40 s a run with both
 * takes on two idle cores), each in a child JVM, restarts included, and records every figure. Measures
 * nothing: no figure is compared with a bound, only checked to have been read.
 */
class PartitionScaleSmokeTest
{
    private static final String[] PHASES = {"started, no topics", "after creating", "after produce and consume",
        "after SIGTERM and start", "after SIGKILL and start"};

    @Test
    void runnerRecordsEveryFigureForBothBrokers() throws Exception
    {
        final boolean kafka = Boolean.getBoolean("ferrite.smoke.kafka");
        final Path dir = Path.of("target", "partition-scale-smoke");
        final Path out = dir.resolve("N20.json");
        final Path markdown = dir.resolve("partition-scale.md");
        Files.createDirectories(dir);
        Files.deleteIfExists(out);
        final List<String> args = new ArrayList<>(List.of("--partitions", "20", "--topics", "2", "--heap", "256m",
            "--out", out.toString(), "--markdown", markdown.toString()));
        if (!kafka)
        {
            args.add("--skip-kafka");
        }
        io.ferrite.perf.sidebyside.PartitionScale.main(args.toArray(String[]::new));

        final JsonNode json = new ObjectMapper().readTree(out.toFile());
        assertTrue(PartitionScaleReport.isPartitionScale(json));
        assertTrue(Files.exists(dir.resolve("N20.meta.json")), "meta beside the JSON");
        for (final String field : new String[] {"date", "commit", "jdk", "cpu", "cores", "os", "command"})
        {
            assertFalse(json.path("meta").path(field).asText().isEmpty(), field);
        }
        assertTrue(json.path("limits").path("openFilesSoft").asLong() > 0, json.path("limits").toString());
        assertTrue(json.path("limits").path("maxMapCount").asLong() > 1000, json.path("limits").toString());
        assertEquals(kafka ? 2 : 1, json.path("brokers").size());
        for (final JsonNode b : json.path("brokers"))
        {
            final String who = b.path("label").asText();
            assertTrue(b.path("startMs").asLong() > 0, who + " started");
            assertEquals(20, b.path("partitionsCreated").asInt(), who + ": " + b.path("problems"));
            for (final String step : new String[] {"create", "produce", "consume", "consumeAfterKill"})
            {
                assertEquals(20, b.path(step).path("done").asInt(), who + " " + step + ": " + b.path(step));
                assertFalse(b.path(step).has("error"), who + " " + step + ": " + b.path(step));
                assertTrue(b.path(step).path("ms").asLong() >= 0, who + " " + step);
            }
            assertEquals(PHASES.length, b.path("snapshots").size(), who);
            for (int i = 0; i < PHASES.length; i++)
            {
                final JsonNode s = b.path("snapshots").get(i);
                assertEquals(PHASES[i], s.path("phase").asText());
                assertTrue(s.path("alive").asBoolean(), who + " " + s);
                // every counter was read: -1 means it could not be
                for (final String f : new String[] {"openFiles", "mappings", "rssBytes", "rssAnonBytes", "rssFileBytes"})
                {
                    assertTrue(s.path(f).asLong() > 0, who + " " + f + " " + s);
                }
                for (final String f : new String[] {"openFilesInDataDir", "mappingsOfDataDir", "diskAllocatedBytes",
                    "diskApparentBytes", "dataFiles"})
                {
                    assertTrue(s.path(f).asLong() >= 0, who + " " + f + " " + s);
                }
            }
            // 20 partitions were written: each broker holds files for them open and on disk
            final JsonNode loaded = b.path("snapshots").get(2);
            assertTrue(loaded.path("openFilesInDataDir").asLong() >= 20, who + " " + loaded);
            assertTrue(loaded.path("dataFiles").asLong() >= 20, who + " " + loaded);
            assertTrue(loaded.path("diskAllocatedBytes").asLong() > 0, who + " " + loaded);
            assertEquals(2, b.path("restarts").size(), who);
            for (final JsonNode r : b.path("restarts"))
            {
                assertFalse(r.has("error"), who + " " + r);
                assertTrue(r.path("stopMs").asLong() >= 0, who + " " + r);
                assertTrue(r.path("firstProduceMs").asLong() > 0, who + " " + r);
                assertTrue(r.path("allPartitionsMs").asLong() >= r.path("firstProduceMs").asLong(), who + " " + r);
                assertEquals(20, r.path("partitionsWritable").asInt(), who + " " + r);
            }
            assertEquals("SIGTERM", b.path("restarts").get(0).path("signal").asText());
            assertEquals("SIGKILL", b.path("restarts").get(1).path("signal").asText());
        }

        final String rendered = Files.readString(markdown);
        assertEquals(PartitionScaleReport.renderDirectory(dir), rendered);
        assertTrue(rendered.contains("| open files per partition (after produce and consume) |"), rendered);
        assertTrue(rendered.contains("| SIGKILL: start to first acknowledged produce, s |"), rendered);
        assertTrue(rendered.contains("| after SIGKILL and start | Ferrite |"), rendered);
        assertFalse(rendered.contains("| n/a | n/a |"), "a figure is missing for both brokers:\n" + rendered);
    }

    @Test
    void committedMarkdownIsGeneratedFromTheJson() throws Exception
    {
        final Path dir = Path.of("..", "jmh-results", "partition-scale");
        final Path markdown = Path.of("..", "jmh-results", "partition-scale.md");
        if (!Files.exists(markdown))
        {
            return; // nothing recorded yet
        }
        assertEquals(PartitionScaleReport.renderDirectory(dir), Files.readString(markdown),
            "jmh-results/partition-scale.md differs from what its JSON gives: regenerate it with perf/bin/partition-scale");
    }
}
