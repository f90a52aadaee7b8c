package io.ferrite.perf.sidebyside;

import io.ferrite.perf.sidebyside.BrokerProcess.Kind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 3-node runner's failover figures come from the latest kill-the-leader record (the last file name: they are
 * named by their UTC start), its acks=all cases only, those with a first acknowledgement after the kill; and the
 * issue's goals judge the 3-node measures.
 */
class FailoverRecordTest
{
    @TempDir
    Path dir;

    @Test
    void theLatestRecordsAcksAllCasesGiveTheFailoverSeconds() throws Exception
    {
        write("20261206T033207Z.json", "1111", "2222");
        write("20261206T045326Z.json", "11106", "9740");
        Files.writeString(dir.resolve("20261207T000000Z.meta.json"), "{\"date\": \"not a run\"}"); // no kill-the-leader kind

        final FailoverRecord r = FailoverRecord.latest(dir);
        assertEquals("20261206T045326Z.json", r.file());
        assertEquals(List.of(11.106, 12.5), r.seconds().get(Kind.KAFKA), "acks=1 and a case without an acknowledgement left out");
        assertEquals(List.of(9.74, 12.5), r.seconds().get(Kind.FERRITE));
        assertTrue(r.describe().contains("jmh-results/kill-the-leader/20261206T045326Z.json (2026-12-06T04:53:28Z, commit "
            + "1a6a6f8, 1000 records/s for 20 s, 2 round(s); 1-, 5-, 15-minute load averages Kafka 16.71 16.98 17.09 -> "
            + "31.45 29.72 23.08; Ferrite 1.00 2.00 3.00 -> 4.00 5.00 6.00;"), r.describe());
    }

    @Test
    void noFolderOrNoRecordGivesNone() throws Exception
    {
        assertNull(FailoverRecord.latest(dir.resolve("absent")));
        Files.writeString(dir.resolve("side-by-side.json"), "{\"kind\": \"ferrite-side-by-side\"}");
        assertNull(FailoverRecord.latest(dir));
    }

    @Test
    void theIssuesGoalsJudgeTheThreeNodeMeasures()
    {
        assertEquals(2.0, SideBySideTargets.of(ThreeNodePerf.PREFIX + "producer throughput acks=all none", "MB/s"));
        assertNull(SideBySideTargets.of(ThreeNodePerf.PREFIX + "producer throughput acks=all none",
            "broker CPU ms per MB (the 3 nodes summed)"), "the single-node CPU target is not issue 14's");
        assertEquals(0.2, SideBySideTargets.of(ThreeNodePerf.PREFIX + "latency at 5000 records/s (acks=all, intended send "
            + "time to ack)", "p99 us"));
        assertNull(SideBySideTargets.of(ThreeNodePerf.PREFIX + "latency at 5000 records/s (acks=all, intended send time to ack)",
            "p50 us"));
        assertEquals(0.2, SideBySideTargets.of(ThreeNodePerf.PREFIX + "failover, leader SIGKILL to the first acks=all "
            + "acknowledgement (kill-the-leader/20261206T045326Z.json)", "s"));
        assertNull(SideBySideTargets.of(ThreeNodePerf.PREFIX + "start-up, spawn of the first node to DescribeCluster listing the 3", "s"),
            "not the single-node start-up target");
    }

    /** A kill-the-leader record with two rounds: per system acks=1 (ignored), acks=all at {@code ms}, one without a first ack, acks=all at 12.5 s. */
    private void write(final String file, final String kafkaMs, final String ferriteMs) throws Exception
    {
        Files.writeString(dir.resolve(file), """
            {"kind": "ferrite-kill-the-leader",
             "meta": {"date": "2026-12-06T04:53:28Z", "commit": "1a6a6f8", "rate": 1000, "seconds": 20, "rounds": 2},
             "systems": [
              {"system": "kafka", "label": "Kafka", "load": "16.71 16.98 17.09 -> 31.45 29.72 23.08", "cases": [
                {"acks": "1", "killToFirstAckMs": 12737}, {"acks": "all", "killToFirstAckMs": %s},
                {"acks": "all", "killToFirstAckMs": -1}, {"acks": "all", "killToFirstAckMs": 12500}]},
              {"system": "ferrite", "label": "Ferrite", "load": "1.00 2.00 3.00 -> 4.00 5.00 6.00", "cases": [
                {"acks": "1", "killToFirstAckMs": 9668}, {"acks": "all", "killToFirstAckMs": %s},
                {"acks": "all"}, {"acks": "all", "killToFirstAckMs": 12500}]}]}
            """.formatted(kafkaMs, ferriteMs));
    }
}
