package io.ferrite.broker.group;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.topic.TopicRegistry;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The replay ({@link GroupReplay}) of offsets committed inside transactions and found outside their
 * group's partition (strays: {@code __consumer_offsets} written with another partition count):
 * transactional batches and their markers in the stray partition, committed, aborted and still open,
 * as Kafka's replay of that partition alone would take them, and placed before every record of the
 * group's own partition. Before, transactional strays were skipped (and counted live, so the
 * migration deleted them: the offsets were lost), and a stray's record offset (its partition's
 * numbering) was compared with the group's own partition's.
 */
class TxnStraysReplayTest
{
    private static final int PARTITIONS = 4;
    private static final String GROUP = "billing";
    private static final int HOME = CoordinatorTopic.partitionFor(GROUP, PARTITIONS);
    private static final int STRAY = (HOME + 1) % PARTITIONS;
    private static final long T = 1_700_000_000_000L;

    @TempDir
    Path dir;

    private LogManager logs;
    private TopicRegistry topics;
    private final int[] sequences = new int[16];

    @BeforeEach
    void open() throws Exception
    {
        logs = LogManager.open(LogManagerConfig.of(dir));
        topics = new TopicRegistry(logs, 1);
        topics.load(); // this thread is the topics' writer and each log's
        topics.create(GroupCoordinator.OFFSETS_TOPIC, PARTITIONS, Map.of());
    }

    @AfterEach
    void close() throws Exception
    {
        logs.close();
    }

    private static Group.TopicPartition tp(final int partition)
    {
        return new Group.TopicPartition("orders", partition);
    }

    @Test
    void transactionalStraysEndWithTheMarkersOfTheirPartitionAndComeBeforeTheGroupsOwnRecords()
    {
        // the stray partition, in log order
        plain(STRAY, 4, 3);                      // tp4: a plain stray; its record offset (0) is the stray partition's
        txn(STRAY, 1, 0, 5);                     // tp0 = 5 in producer 1's transaction ...
        marker(STRAY, 1, true);                  // ... committed
        txn(STRAY, 2, 0, 6);                     // tp0 = 6 in producer 2's ...
        marker(STRAY, 2, false);                 // ... aborted
        plain(STRAY, 2, 4);                      // tp2: a plain commit, then producer 4's transaction,
        txn(STRAY, 4, 2, 7);
        plain(STRAY, 2, 8);                      // a plain commit after that transaction's record,
        marker(STRAY, 4, true);                  // its COMMIT: the later plain commit wins (Kafka's rule), in the stray's numbering
        txn(STRAY, 3, 1, 9);                     // tp1 = 9 in producer 3's transaction, open at the load
        // the group's own partition: a transaction whose record offset (0) is below every stray's above
        txn(HOME, 5, 4, 11);
        marker(HOME, 5, true);

        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        final GroupReplay.Loaded loaded = GroupReplay.load(topics, groups, pending, T);

        final Map<Group.TopicPartition, Long> committed = offsets(groups);
        assertEquals(5L, committed.get(tp(0)), "the committed transaction's stray offset; the aborted one's dropped");
        assertEquals(8L, committed.get(tp(2)), "the plain commit written after the transaction's record");
        assertEquals(11L, committed.get(tp(4)), "the group's own partition's transaction, later than every stray");
        assertNull(committed.get(tp(1)), "an open transaction's offset is not committed");
        assertTrue(pending.isPending(GROUP, tp(1)), "pending, for its marker");

        assertEquals(Set.of(GROUP), loaded.strays().keySet());
        assertEquals(Set.of(STRAY), loaded.strays().get(GROUP).keySet());
        assertEquals(Set.of("orders-0", "orders-1", "orders-2", "orders-4"), keys(loaded.strays().get(GROUP).get(STRAY)),
            "live: the committed transactional stray, the plain ones and the open transaction's (to delete once it ended), "
                + "not the aborted one's alone");

        // the open transaction's marker comes where the transaction is: the stray partition
        assertEquals(0, pending.complete(3, true, HOME, g -> true, groups, T), "not the group's partition's marker");
        assertEquals(1, pending.complete(3, true, STRAY, g -> true, groups, T));
        assertEquals(9L, offsets(groups).get(tp(1)), "committed: the group's own partition has no later record of it");
        assertFalse(pending.isPending(GROUP));
    }

    /**
     * A group whose only stray is an open transaction's offset: the strays are replayed so that the
     * offset is pending, for its marker in the stray partition, and its key is live: the group moves
     * home once that marker came, and the stray is deleted then (a COMMIT after the load would
     * otherwise leave it the offset's only record, which a tombstone written home cannot outlive).
     */
    @Test
    void anOpenTransactionalStrayAloneIsPendingAfterTheLoadAndLive()
    {
        plain(HOME, 0, 2);
        txn(STRAY, 3, 1, 9);
        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        final GroupReplay.Loaded loaded = GroupReplay.load(topics, groups, pending, T);
        assertEquals(Set.of(GROUP), loaded.strays().keySet());
        assertEquals(Set.of(STRAY), loaded.strays().get(GROUP).keySet());
        assertEquals(Set.of("orders-1"), keys(loaded.strays().get(GROUP).get(STRAY)), "the open transaction's key, to delete once moved");
        assertEquals(Map.of(tp(0), 2L), offsets(groups));
        assertTrue(pending.isPending(GROUP, tp(1)));
        assertEquals(1, pending.complete(3, true, STRAY, g -> true, groups, T));
        assertEquals(Map.of(tp(0), 2L, tp(1), 9L), offsets(groups));
    }

    /**
     * Two transactions open at the load with the same key in one stray partition, the first's record
     * before the second's: committed after the load in that order, the second's offset is the group's,
     * as Kafka's replay of that partition takes it (the later record). Before, both were placed at one
     * value and the second COMMIT lost to the first's (a rollback).
     */
    @Test
    void openStrayTransactionsOfOneKeyKeepTheirPartitionsOrder()
    {
        txn(STRAY, 1, 0, 5);
        txn(STRAY, 2, 0, 6);
        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        GroupReplay.load(topics, groups, pending, T);
        assertEquals(1, pending.complete(1, true, STRAY, g -> true, groups, T));
        assertEquals(Map.of(tp(0), 5L), offsets(groups));
        assertEquals(1, pending.complete(2, true, STRAY, g -> true, groups, T));
        assertEquals(Map.of(tp(0), 6L), offsets(groups), "the later record's");
    }

    /**
     * An open stray transaction whose record is before a plain commit of the same key in that
     * partition: its COMMIT after the load leaves the plain commit, the later record; one whose record
     * is after it wins. A record of the group's own partition beats both.
     */
    @Test
    void anOpenStrayTransactionBeforeAPlainStrayCommitLosesToIt()
    {
        txn(STRAY, 1, 0, 5);
        plain(STRAY, 0, 6);
        plain(STRAY, 1, 2);
        txn(STRAY, 2, 1, 3);
        txn(STRAY, 3, 2, 8);
        plain(HOME, 2, 9);
        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        GroupReplay.load(topics, groups, pending, T);
        for (final long producerId : new long[] {1, 2, 3})
        {
            assertEquals(1, pending.complete(producerId, true, STRAY, g -> true, groups, T));
        }
        assertEquals(Map.of(tp(0), 6L, tp(1), 3L, tp(2), 9L), offsets(groups));
    }

    /**
     * Strays in two partitions: each partition's keys are live in their partition; between the two,
     * the one replayed last (the higher index) wins, and an open transaction in the first, committed
     * after the load, beats a plain commit of the first but not one of the second (the partitions'
     * order: which was written last is not known, GroupReplay's doc).
     */
    @Test
    void strayTwoPartitions()
    {
        final int second = (STRAY + 1) % PARTITIONS == HOME ? (STRAY + 2) % PARTITIONS : (STRAY + 1) % PARTITIONS;
        final int first = Math.min(STRAY, second);
        final int last = Math.max(STRAY, second);
        plain(first, 0, 1);
        plain(last, 0, 2);
        plain(first, 1, 3);
        txn(first, 1, 1, 4);
        plain(last, 2, 5);
        txn(first, 2, 2, 6);
        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        final GroupReplay.Loaded loaded = GroupReplay.load(topics, groups, pending, T);
        assertEquals(Set.of(first, last), loaded.strays().get(GROUP).keySet());
        assertEquals(Set.of("orders-0", "orders-1", "orders-2"), keys(loaded.strays().get(GROUP).get(first)));
        assertEquals(Set.of("orders-0", "orders-2"), keys(loaded.strays().get(GROUP).get(last)));
        assertEquals(Map.of(tp(0), 2L, tp(1), 3L, tp(2), 5L), offsets(groups));
        assertEquals(1, pending.complete(1, true, first, g -> true, groups, T));
        assertEquals(1, pending.complete(2, true, first, g -> true, groups, T));
        assertEquals(Map.of(tp(0), 2L, tp(1), 4L, tp(2), 5L), offsets(groups), "tp1 committed; tp2's later partition's plain commit kept");
    }

    /** A stray transaction ended by an ABORT, and one whose key a later tombstone deleted: neither is live, nor committed. */
    @Test
    void anAbortedOrTombstonedTransactionalStrayIsNotLive()
    {
        txn(STRAY, 1, 0, 5);
        marker(STRAY, 1, false);
        txn(STRAY, 2, 1, 6);
        tombstone(STRAY, 1);
        marker(STRAY, 2, true);
        final Map<String, Group> groups = new HashMap<>();
        final TxnOffsets pending = new TxnOffsets();
        final GroupReplay.Loaded loaded = GroupReplay.load(topics, groups, pending, T);
        assertEquals(Map.of(), loaded.strays());
        assertTrue(groups.get(GROUP) == null || groups.get(GROUP).offsets.isEmpty(), String.valueOf(groups));
        assertFalse(pending.isPending(GROUP));
    }

    private static Map<Group.TopicPartition, Long> offsets(final Map<String, Group> groups)
    {
        final Map<Group.TopicPartition, Long> offsets = new HashMap<>();
        groups.get(GROUP).offsets.forEach((tp, o) -> offsets.put(tp, o.offset()));
        return offsets;
    }

    private static Set<String> keys(final List<byte[]> keys)
    {
        final Set<String> names = new TreeSet<>();
        for (final byte[] key : keys)
        {
            final io.ferrite.wire.message.OffsetCommitKeyDecoder k = new io.ferrite.wire.message.OffsetCommitKeyDecoder();
            k.wrap(new org.agrona.concurrent.UnsafeBuffer(key), 2, key.length, (short)0);
            names.add(k.topic() + "-" + k.partition());
        }
        return names;
    }

    private void plain(final int partition, final int tp, final long committed)
    {
        append(partition, new RecordBatchBuilder(), tp, committed);
    }

    private void tombstone(final int partition, final int tp)
    {
        append(partition, new RecordBatchBuilder(), tp, -1);
    }

    /** An offset in producer {@code producerId}'s transaction (epoch 0), as the coordinator writes TxnOffsetCommit's batch. */
    private void txn(final int partition, final int producerId, final int tp, final long committed)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        append(partition, builder, tp, committed, producerId);
    }

    private void append(final int partition, final RecordBatchBuilder builder, final int tp, final long committed)
    {
        append(partition, builder, tp, committed, -1);
    }

    private void append(final int partition, final RecordBatchBuilder builder, final int tp, final long committed, final int producerId)
    {
        final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(256);
        builder.wrap(batch, 0);
        if (producerId >= 0)
        {
            builder.producer(producerId, (short)0, sequences[producerId]++).transactional(true);
        }
        builder.appendRecord(T, GroupRecords.offsetKey(GROUP, "orders", tp),
            committed < 0 ? null : GroupRecords.offsetValue(new Group.Offset(committed, -1, "", T)));
        final AppendResult result = new AppendResult();
        final PartitionLog log = log(partition);
        log.append(batch, 0, builder.build(), result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    private void marker(final int partition, final int producerId, final boolean commit)
    {
        final AppendResult result = new AppendResult();
        log(partition).transactions().appendMarker(producerId, (short)0, 0, commit, false, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
    }

    private PartitionLog log(final int partition)
    {
        final PartitionLog log = topics.topic(GroupCoordinator.OFFSETS_TOPIC).partitions[partition].log;
        log.claimWriter();
        return log;
    }
}
