package io.ferrite.perf.soak;

import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The soak's checker fails when it should: three replicas of one partition written as real segment files (Kafka's
 * RecordBatch v2, read back by {@link ReplicaReader}) with a lost acknowledged record, a duplicate, a reorder, a
 * divergent replica, a consumer going backwards and a consumed record that disappeared, each alone; a replica short
 * of the high watermark is reported as behind (not as lost or divergent), an acknowledgement without an offset is
 * checked by value; and it passes a clean history.
 */
class CheckerTest
{
    private static final int PARTITION = 0;

    /** p1-0, p1-1, p1-2, p2-0, p2-1 at offsets 0..4, one batch of one record each. */
    private static List<String> clean()
    {
        return List.of("p1-0", "p1-1", "p1-2", "p2-0", "p2-1");
    }

    private static List<Checker.Ack> acks(final List<String> log)
    {
        final List<Checker.Ack> acks = new ArrayList<>();
        for (int offset = 0; offset < log.size(); offset++)
        {
            final String[] f = log.get(offset).substring(1).split("-");
            acks.add(new Checker.Ack(Integer.parseInt(f[0]), Integer.parseInt(f[1]), PARTITION, offset));
        }
        return acks;
    }

    private static List<Checker.Seen> seen(final List<String> log)
    {
        final List<Checker.Seen> seen = new ArrayList<>();
        for (int offset = 0; offset < log.size(); offset++)
        {
            seen.add(new Checker.Seen(1, PARTITION, offset, log.get(offset)));
        }
        return seen;
    }

    /** A replica of node {@code node} holding {@code values} at offsets 0, 1, ..., written to a segment file and read back. */
    private static Checker.Replica replica(final Path dir, final int node, final List<String> values) throws Exception
    {
        return replica(dir, node, values, values.size());
    }

    /** As above, read up to the high watermark {@code hw}. */
    private static Checker.Replica replica(final Path dir, final int node, final List<String> values, final long hw)
        throws Exception
    {
        final Path partition = Files.createDirectories(dir.resolve("node-" + node).resolve("soak-0"));
        final ByteBuffer file = ByteBuffer.allocate(64 * 1024);
        for (int offset = 0; offset < values.size(); offset++)
        {
            final MemoryRecords batch = MemoryRecords.withRecords(offset, Compression.NONE, 3,
                new SimpleRecord(values.get(offset).getBytes(StandardCharsets.UTF_8)));
            file.put(batch.buffer());
        }
        // a preallocated segment's zeroed tail follows the batches
        Files.write(partition.resolve("00000000000000000000.log"), file.array());
        return ReplicaReader.read(node, PARTITION, partition, hw);
    }

    private static Checker.Result check(final Path dir, final List<String> acknowledged, final List<Checker.Seen> seen,
        final List<String> node1, final List<String> node2, final List<String> node3) throws Exception
    {
        final long hw = Math.min(node1.size(), Math.min(node2.size(), node3.size()));
        return Checker.check(acks(acknowledged), seen, Map.of(PARTITION, hw),
            List.of(replica(dir, 1, node1), replica(dir, 2, node2), replica(dir, 3, node3)));
    }

    @Test
    void aCleanHistoryPasses(@TempDir final Path dir) throws Exception
    {
        final Checker.Result r = check(dir, clean(), seen(clean()), clean(), clean(), clean());
        assertTrue(r.ok(), r.toJson().toString());
        assertEquals(5, r.acknowledged);
        assertEquals(5, r.consumed);
    }

    @Test
    void anAcknowledgedRecordMissingFromEveryReplicaIsLost(@TempDir final Path dir) throws Exception
    {
        final List<String> log = List.of("p1-0", "p1-1", "p9-9", "p2-0", "p2-1"); // p1-2 acknowledged at 2, not there
        final Checker.Result r = check(dir, clean(), List.of(), log, log, log);
        assertFalse(r.ok());
        assertEquals(1, r.lost, r.toJson().toString());
        assertEquals(0, r.divergentPartitions);
    }

    @Test
    void aRecordTwiceInAReplicaIsADuplicate(@TempDir final Path dir) throws Exception
    {
        final List<String> log = List.of("p1-0", "p1-1", "p1-2", "p1-2", "p2-0", "p2-1");
        final Checker.Result r = check(dir, List.of("p1-0", "p1-1", "p1-2"), List.of(), log, log, log);
        assertFalse(r.ok());
        assertEquals(3, r.duplicated, "once per replica: " + r.toJson());
        assertEquals(0, r.lost);
        assertEquals(0, r.reordered);
    }

    @Test
    void aProducersRecordAfterALaterOneIsAReorder(@TempDir final Path dir) throws Exception
    {
        final List<String> log = List.of("p1-0", "p1-2", "p1-1", "p2-0", "p2-1");
        final Checker.Result r = check(dir, List.of("p1-0"), List.of(), log, log, log);
        assertFalse(r.ok());
        assertEquals(3, r.reordered, "once per replica: " + r.toJson());
        assertEquals(0, r.duplicated);
    }

    @Test
    void aReplicaWithOtherBytesDiverges(@TempDir final Path dir) throws Exception
    {
        final List<String> other = List.of("p1-0", "p1-1", "p1-2", "p2-0", "p3-7"); // an unacknowledged record at 4
        final Checker.Result r = check(dir, clean().subList(0, 4), List.of(), clean(), other, clean());
        assertFalse(r.ok());
        assertEquals(1, r.divergentPartitions, r.toJson().toString());
        assertEquals(0, r.lost);
    }

    @Test
    void aReplicaShortOfTheHighWatermarkIsBehindNotLostOrDivergent(@TempDir final Path dir) throws Exception
    {
        // node 2 read before it caught up: it holds offsets 0..2 of 5; every record acknowledged and consumed
        final Checker.Replica shorter = replica(dir, 2, clean().subList(0, 3), 5);
        assertEquals(3, ReplicaReader.end(dir.resolve("node-2").resolve("soak-0"), 5));
        final Checker.Result r = Checker.check(acks(clean()), seen(clean()), Map.of(PARTITION, 5L),
            List.of(shorter, replica(dir, 1, clean()), replica(dir, 3, clean())));
        assertFalse(r.ok());
        assertEquals(1, r.behind, r.toJson().toString());
        assertEquals(0, r.lost, r.toJson().toString());
        assertEquals(0, r.divergentPartitions, r.toJson().toString());
        assertEquals(0, r.disappeared, r.toJson().toString());
        assertEquals(List.of("node 2 partition 0 holds up to offset 2, below the high watermark 5"), r.samples.get("behind"));
    }

    @Test
    void aReplicaBehindIsStillCheckedOnWhatItHolds(@TempDir final Path dir) throws Exception
    {
        // node 2 is behind and has another record at offset 1: divergent and lost there, behind besides
        final Checker.Replica shorter = replica(dir, 2, List.of("p1-0", "p9-9", "p1-2"), 5);
        final Checker.Result r = Checker.check(acks(clean()), List.of(), Map.of(PARTITION, 5L),
            List.of(replica(dir, 1, clean()), shorter, replica(dir, 3, clean())));
        assertEquals(1, r.behind, r.toJson().toString());
        assertEquals(1, r.lost, r.toJson().toString());
        assertEquals(1, r.divergentPartitions, r.toJson().toString());
    }

    @Test
    void anAcknowledgementWithoutAnOffsetIsCheckedByValue(@TempDir final Path dir) throws Exception
    {
        final List<Checker.Ack> acks = new ArrayList<>(acks(clean()));
        acks.add(new Checker.Ack(1, 1, PARTITION, Checker.UNKNOWN_OFFSET)); // held (at offset 1)
        final Checker.Result held = check(dir.resolve("held"), acks, clean(), clean(), clean());
        assertTrue(held.ok(), held.toJson().toString());
        assertEquals(1, held.acknowledgedOffsetUnknown);
        acks.add(new Checker.Ack(1, 7, PARTITION, Checker.UNKNOWN_OFFSET)); // p1-7: nowhere
        final Checker.Result missing = check(dir.resolve("missing"), acks, clean(), clean(), clean());
        assertFalse(missing.ok());
        assertEquals(2, missing.acknowledgedOffsetUnknown);
        assertEquals(1, missing.lost, missing.toJson().toString());
    }

    private static Checker.Result check(final Path dir, final List<Checker.Ack> acks, final List<String> node1,
        final List<String> node2, final List<String> node3) throws Exception
    {
        final long hw = Math.min(node1.size(), Math.min(node2.size(), node3.size()));
        return Checker.check(acks, List.of(), Map.of(PARTITION, hw),
            List.of(replica(dir, 1, node1), replica(dir, 2, node2), replica(dir, 3, node3)));
    }

    @Test
    void aConsumerReadingAnOffsetAgainWentBackwards(@TempDir final Path dir) throws Exception
    {
        final List<Checker.Seen> seen = new ArrayList<>(seen(clean()));
        seen.add(new Checker.Seen(1, PARTITION, 2, "p1-2"));
        final Checker.Result r = check(dir, clean(), seen, clean(), clean(), clean());
        assertFalse(r.ok());
        assertEquals(1, r.backwards, r.toJson().toString());
        assertEquals(0, r.disappeared);
    }

    @Test
    void aConsumedRecordNotInTheLogDisappeared(@TempDir final Path dir) throws Exception
    {
        final List<Checker.Seen> seen = List.of(new Checker.Seen(1, PARTITION, 0, "p1-0"), new Checker.Seen(2, PARTITION, 1, "p3-3"),
            new Checker.Seen(2, PARTITION, 7, "p1-7")); // another value at 1; 7 is beyond the high watermark
        final Checker.Result r = check(dir, clean(), seen, clean(), clean(), clean());
        assertFalse(r.ok());
        assertEquals(2, r.disappeared, r.toJson().toString());
        assertEquals(0, r.backwards);
    }
}
