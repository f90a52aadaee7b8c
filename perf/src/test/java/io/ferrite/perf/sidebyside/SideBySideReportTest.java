package io.ferrite.perf.sidebyside;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The report's judgements that are not a ratio to Kafka's: Ferrite's own range, and a run taken under load. */
class SideBySideReportTest
{
    @Test
    void ownRangeIsJudgedOnFerritesFigure()
    {
        final double[] range = SideBySideTargets.ownRange("consumer of the transactional log (100 per transaction), "
            + "read_committed / read_uncommitted");
        assertEquals(0.9, range[0]);
        assertEquals(1.1, range[1]);
        assertEquals("met", SideBySideReport.ownVerdict(0.95, range));
        assertEquals("met", SideBySideReport.ownVerdict(1.1, range));
        assertEquals("missed: Ferrite's 0.806 is outside 0.9–1.1", SideBySideReport.ownVerdict(0.806, range));
        assertEquals("missed: Ferrite's 1.200 is outside 0.9–1.1", SideBySideReport.ownVerdict(1.2, range));
        assertEquals("not measured", SideBySideReport.ownVerdict(Double.NaN, range));
    }

    @Test
    void aRunWhoseLoadPassedTwiceTheCoresSaysItWasTakenUnderLoad()
    {
        assertEquals(34.26, SideBySideReport.peakLoad(List.of("Kafka round 1 14.78 -> 24.04", "Ferrite round 1 23.64 -> 34.26")));
        assertTrue(render("Kafka round 1 14.78 -> 24.04", "Ferrite round 1 23.64 -> 34.26").contains("**taken under load**: "
            + "the 1-minute load average reached 34.26 on 2 cores"));
        assertFalse(render("Kafka round 1 0.27 -> 2.20", "Ferrite round 1 2.20 -> 2.69").contains("under load"));
    }

    private static String render(final String... load)
    {
        final ObjectNode run = new ObjectMapper().createObjectNode();
        run.put("kind", SideBySideReport.KIND);
        run.putObject("meta").put("cores", "2");
        final var array = run.putArray("load");
        for (final String l : load)
        {
            array.add(l);
        }
        return SideBySideReport.render("test", run);
    }
}
