package io.ferrite.broker.group;

import io.ferrite.broker.Broker;
import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.log.AppendResult;
import io.ferrite.log.LogManager;
import io.ferrite.log.LogManagerConfig;
import io.ferrite.log.PartitionLog;
import io.ferrite.testing.Await;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.RecordsToDelete;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.GroupState;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Which partition of {@code __consumer_offsets} a group's records go to: Kafka 4.4's
 * ({@code Utils.abs(groupId.hashCode()) % partitions}, taken from kafka-clients here as the oracle),
 * also for group ids whose hash is negative, where a mask of the sign bit picks another partition.
 * And records of a group found outside its partition (an older Ferrite's placement) are replayed
 * before those in it, whatever the partitions' order, so the group's last commit wins.
 */
class GroupPartitionsTest
{
    private static final int PARTITIONS = 50;
    /** RecordBatch v2: where the CRC and the attributes are, the control bit. */
    private static final int CRC_OFFSET = 17;
    private static final int ATTRIBUTES_OFFSET = 21;
    private static final int CONTROL_FLAG = 0x20;

    @TempDir
    Path dir;

    private Broker start() throws Exception
    {
        final Map<String, String> values = new HashMap<>();
        values.put(BrokerConfig.LISTENERS, "PLAINTEXT://127.0.0.1:0");
        values.put(BrokerConfig.LOG_DIR, dir.toString());
        return Broker.start(BrokerConfig.of(values));
    }

    private static Admin admin(final Broker broker)
    {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, "127.0.0.1:" + broker.address().getPort(),
            AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "20000", AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "10000"));
    }

    /** Group ids whose hash is negative and for which masking the sign bit gives another partition than Kafka's. */
    private static List<String> negativeHashGroups(final int count)
    {
        final List<String> ids = new ArrayList<>();
        for (int i = 0; ids.size() < count; i++)
        {
            final String id = "group-" + i;
            final int hash = id.hashCode();
            if (hash < 0 && (hash & 0x7fffffff) % PARTITIONS != Utils.abs(hash) % PARTITIONS)
            {
                ids.add(id);
            }
        }
        return ids;
    }

    @Test
    void aGroupsOffsetsGoToThePartitionKafkaPutsThemIn() throws Exception
    {
        final List<String> groups = negativeHashGroups(4);
        groups.add("billing");
        final Set<Integer> expected = new TreeSet<>();
        for (final String g : groups)
        {
            expected.add(Utils.abs(g.hashCode()) % PARTITIONS);
            assertEquals(Utils.abs(g.hashCode()) % PARTITIONS, CoordinatorTopic.partitionFor(g, PARTITIONS));
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            createOrders(admin, 2);
            for (final String g : groups)
            {
                admin.alterConsumerGroupOffsets(g, Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(7))).all().get();
            }
            final Map<TopicPartition, OffsetSpec> ask = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++)
            {
                ask.put(new TopicPartition(GroupCoordinator.OFFSETS_TOPIC, p), OffsetSpec.latest());
            }
            final Set<Integer> written = new TreeSet<>();
            for (final Map.Entry<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> e : admin.listOffsets(ask).all().get().entrySet())
            {
                if (e.getValue().offset() > 0)
                {
                    written.add(e.getKey().partition());
                }
            }
            assertEquals(expected, written, "the partitions of __consumer_offsets holding records");
        }
    }

    @Test
    void recordsOutsideTheGroupsPartitionAreReplayedBeforeThoseInIt() throws Exception
    {
        // a group whose old placement (sign bit masked) is a later partition than Kafka's: replayed in
        // partition order, the old commit would be read last and win
        String group = null;
        for (final String g : negativeHashGroups(100))
        {
            if ((g.hashCode() & 0x7fffffff) % PARTITIONS > Utils.abs(g.hashCode()) % PARTITIONS)
            {
                group = g;
                break;
            }
        }
        assertTrue(group != null);
        final int stray = (group.hashCode() & 0x7fffffff) % PARTITIONS;
        final TopicPartition tp = new TopicPartition("orders", 0);
        final TopicPartition tp2 = new TopicPartition("orders", 1);
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            createOrders(admin, 2);
            // makes __consumer_offsets (another group, in its own partition)
            admin.alterConsumerGroupOffsets("other", Map.of(tp, new OffsetAndMetadata(1))).all().get();
        }
        // what an older Ferrite wrote for the group: two commits in the other partition
        plant(stray, offset(group, "orders", 0, 5), offset(group, "orders", 1, 8));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(tp, new OffsetAndMetadata(5), tp2, new OffsetAndMetadata(8)),
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(), "the strays alone are the group");
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(10))).all().get();
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(tp, new OffsetAndMetadata(10), tp2, new OffsetAndMetadata(8)),
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(),
                "the commit in the group's partition is later than the strays");
        }
    }

    /**
     * A group with strays only (an offset and its group record, in its old partition) is moved home at
     * the start: its state written to its partition, then tombstones in the old one. Deleted with
     * DeleteGroups, it stays deleted after its partition lost the tombstone (DeleteRecords up to its
     * end, as time-based deletion of the old segments would): the strays are tombstones now. Before,
     * the strays stayed live and the group came back with its offset.
     */
    @Test
    void aGroupOfStraysDeletedStaysDeletedAfterItsPartitionLostTheTombstone() throws Exception
    {
        final String group = movedGroup();
        final int stray = oldPartition(group);
        makeOffsetsTopic();
        plant(stray, offset(group, "orders", 0, 5), groupRecord(group, "consumer", 3));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            awaitStrayTombstones(admin, stray, 2, 2);
            assertEquals(Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(5)),
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
            admin.deleteConsumerGroups(List.of(group)).all().get();
            deleteRecordsBefore(admin, home(group), endOffset(admin, home(group)));
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertFalse(admin.listGroups().all().get().stream().anyMatch(l -> l.groupId().equals(group)), "the deleted group is back");
            assertEquals(Map.of(), admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
        }
    }

    /**
     * OffsetDelete of a stray offset: it does not come back once the group's partition lost the
     * tombstone (what the group committed since is all it has). Before, the stray came back.
     */
    @Test
    void anOffsetOfStraysDeletedStaysDeletedAfterItsPartitionLostTheTombstone() throws Exception
    {
        final String group = movedGroup();
        final int stray = oldPartition(group);
        final TopicPartition tp = new TopicPartition("orders", 0);
        final TopicPartition tp2 = new TopicPartition("orders", 1);
        makeOffsetsTopic();
        plant(stray, offset(group, "orders", 0, 5), offset(group, "orders", 1, 8));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            awaitStrayTombstones(admin, stray, 2, 2);
            admin.deleteConsumerGroupOffsets(group, Set.of(tp)).all().get();
            final long before = endOffset(admin, home(group));
            admin.alterConsumerGroupOffsets(group, Map.of(tp2, new OffsetAndMetadata(9))).all().get();
            deleteRecordsBefore(admin, home(group), before);
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(tp2, new OffsetAndMetadata(9)), admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get(),
                "the deleted offset is back");
        }
    }

    /**
     * A group known by a stray group record alone (no offsets) is moved home too: after its stray is
     * a tombstone it is still there at the next start, Empty.
     */
    @Test
    void aStrayGroupRecordIsMovedHomeBeforeItsStrayIsDeleted() throws Exception
    {
        final String group = movedGroup();
        final int stray = oldPartition(group);
        makeOffsetsTopic();
        plant(stray, groupRecord(group, "consumer", 4));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            awaitStrayTombstones(admin, stray, 1, 1);
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            final ConsumerGroupDescription d = admin.describeConsumerGroups(List.of(group)).all().get().get(group);
            assertEquals(GroupState.EMPTY, d.groupState(), "the group of the migrated record");
            assertEquals(2, endOffset(admin, stray), "migrated once: the start after the migration finds no live stray");
        }
    }

    /** "polygenelubricants".hashCode() is Integer.MIN_VALUE, whose Utils.abs is 0 (Math.abs would stay negative). */
    @Test
    void aGroupWhoseHashIsMinValueGoesWhereUtilsAbsPutsIt() throws Exception
    {
        final String group = "polygenelubricants";
        assertEquals(Integer.MIN_VALUE, group.hashCode());
        assertEquals(Utils.abs(group.hashCode()) % PARTITIONS, CoordinatorTopic.partitionFor(group, PARTITIONS));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            createOrders(admin, 1);
            admin.alterConsumerGroupOffsets(group, Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(3))).all().get();
            assertEquals(1, endOffset(admin, Utils.abs(group.hashCode()) % PARTITIONS));
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(3)),
                admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
        }
    }

    /**
     * Transaction markers (a COMMIT and an ABORT control batch, as Kafka's files hold once offsets were
     * committed in transactions) in {@code __consumer_offsets} do not stop the start, and the groups
     * load around them. Before, the replay read a marker's key as an offset key and threw
     * (BufferUnderflowException): the broker did not start.
     */
    @Test
    void transactionMarkersInTheOffsetsTopicDoNotStopTheStart() throws Exception
    {
        final String group = "billing";
        final int home = home(group);
        makeOffsetsTopic();
        plant(home, offset(group, "orders", 0, 5));
        plantMarker(home, true);
        plantMarker(home, false);
        plant(home, offset(group, "orders", 1, 6));
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            assertEquals(Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(5), new TopicPartition("orders", 1),
                new OffsetAndMetadata(6)), admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
        }
    }

    /**
     * CreatePartitions may grow {@code __consumer_offsets} (Kafka 4.4 allows it: checked on a Kafka 4.4
     * node), but the groups stay placed by the count the coordinator started with, as Kafka's
     * coordinator fixes it at start-up: a commit after the growth goes to the partition it went to
     * before. At the next start the grown count places the group elsewhere and its records are moved
     * there. Before, the commit went to the partition of the grown count at once.
     */
    @Test
    void growingTheOffsetsTopicMovesNoGroupUntilTheNextStart() throws Exception
    {
        final int grown = PARTITIONS + 10;
        String group = null;
        for (int i = 0; group == null; i++)
        {
            final String id = "grown-" + i;
            final int was = CoordinatorTopic.partitionFor(id, PARTITIONS);
            final int is = CoordinatorTopic.partitionFor(id, grown);
            if (was != is && was != home("other") && is != home("other"))
            {
                group = id;
            }
        }
        final int before = CoordinatorTopic.partitionFor(group, PARTITIONS);
        final int after = CoordinatorTopic.partitionFor(group, grown);
        final TopicPartition tp = new TopicPartition("orders", 0);
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            makeOffsetsTopic(admin);
            admin.createPartitions(Map.of(GroupCoordinator.OFFSETS_TOPIC, NewPartitions.increaseTo(grown))).all().get();
            admin.alterConsumerGroupOffsets(group, Map.of(tp, new OffsetAndMetadata(4))).all().get();
            assertEquals(1, endOffset(admin, before), "the partition of the count the coordinator started with");
            assertEquals(0, endOffset(admin, after));
        }
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            awaitStrayTombstones(admin, before, 1, 1);
            assertEquals(Map.of(tp, new OffsetAndMetadata(4)), admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get());
            assertEquals(1, endOffset(admin, after), "moved to the grown count's partition");
        }
    }

    /** A group whose old placement (the sign bit masked) is not Kafka's. */
    private static String movedGroup()
    {
        final int other = home("other"); // makeOffsetsTopic's group, which must not share its partitions
        for (final String g : negativeHashGroups(10))
        {
            if (oldPartition(g) != other && home(g) != other)
            {
                return g;
            }
        }
        throw new IllegalStateException("no group found");
    }

    private static int oldPartition(final String group)
    {
        return (group.hashCode() & 0x7fffffff) % PARTITIONS;
    }

    private static int home(final String group)
    {
        return Utils.abs(group.hashCode()) % PARTITIONS;
    }

    /** Starts a broker that makes {@code __consumer_offsets} (a commit of another group) and the topic "orders". */
    private void makeOffsetsTopic() throws Exception
    {
        try (Broker broker = start(); Admin admin = admin(broker))
        {
            makeOffsetsTopic(admin);
        }
    }

    private static void makeOffsetsTopic(final Admin admin) throws Exception
    {
        createOrders(admin, 2);
        admin.alterConsumerGroupOffsets("other", Map.of(new TopicPartition("orders", 0), new OffsetAndMetadata(1))).all().get();
    }

    /**
     * Creates the topic "orders": served once answered, as a topic of a chunk's partitions or fewer with nothing pending
     * before it is made before its CreateTopics is answered (a commit right after it was UNKNOWN_TOPIC_OR_PARTITION
     * before: failed once in CI; CreateThenCommitTest).
     */
    private static void createOrders(final Admin admin, final int partitions) throws Exception
    {
        admin.createTopics(List.of(new NewTopic("orders", partitions, (short)1))).all().get();
    }

    private static byte[][] offset(final String group, final String topic, final int partition, final long committed)
    {
        return new byte[][] {GroupRecords.offsetKey(group, topic, partition),
            GroupRecords.offsetValue(new Group.Offset(committed, -1, "", System.currentTimeMillis()))};
    }

    private static byte[][] groupRecord(final String groupId, final String protocolType, final int generation)
    {
        final Group g = new Group(groupId);
        g.protocolType = protocolType;
        g.generationId = generation;
        g.stateTimestamp = System.currentTimeMillis();
        return new byte[][] {GroupRecords.groupKey(groupId), GroupRecords.groupValue(g)};
    }

    /** Appends the records (key, value pairs) as one batch to {@code partition} of {@code __consumer_offsets}, the broker stopped. */
    private void plant(final int partition, final byte[][]... records) throws Exception
    {
        append(partition, builder ->
        {
            for (final byte[][] r : records)
            {
                builder.appendRecord(System.currentTimeMillis(), r[0], r[1]);
            }
        });
    }

    /**
     * Appends a transaction marker (a control batch) to {@code partition} of {@code __consumer_offsets},
     * the broker stopped. The log refuses a control batch from its writer (only a coordinator writes
     * markers, which Ferrite has not yet), so the marker goes in as a transactional batch of the same
     * bytes, and the file is then changed as Kafka's would hold it: the control bit set, the CRC made again.
     */
    private void plantMarker(final int partition, final boolean commit) throws Exception
    {
        final long offset = append(partition, builder -> builder.producer(commit ? 1000 : 1001, (short)0, 0).transactional(true)
            .appendEndTxnMarker(System.currentTimeMillis(), commit, 0));
        final Path segment = dir.resolve(GroupCoordinator.OFFSETS_TOPIC + "-" + partition).resolve("00000000000000000000.log");
        try (FileChannel file = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final ByteBuffer header = ByteBuffer.allocate(12);
            long position = 0;
            while (true)
            {
                header.clear();
                file.read(header, position);
                final int length = header.getInt(8);
                if (header.getLong(0) == offset)
                {
                    final ByteBuffer batch = ByteBuffer.allocate(12 + length);
                    file.read(batch, position);
                    batch.rewind();
                    batch.putShort(ATTRIBUTES_OFFSET, (short)(batch.getShort(ATTRIBUTES_OFFSET) | CONTROL_FLAG));
                    batch.putInt(CRC_OFFSET, new RecordBatch().wrap(new UnsafeBuffer(batch), 0).computeCrc());
                    file.write(batch.rewind(), position);
                    file.force(true);
                    return;
                }
                position += 12 + length;
            }
        }
    }

    /** Appends the batch {@code records} builds to {@code partition} of {@code __consumer_offsets}, the broker stopped; returns its offset. */
    private long append(final int partition, final java.util.function.Consumer<RecordBatchBuilder> records) throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = logs.log(GroupCoordinator.OFFSETS_TOPIC, partition);
            final ExpandableDirectByteBuffer batch = new ExpandableDirectByteBuffer(256);
            final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(batch, 0);
            records.accept(builder);
            final AppendResult result = new AppendResult();
            log.claimWriter();
            log.append(batch, 0, builder.build(), result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            return result.firstOffset;
        }
    }

    private static long endOffset(final Admin admin, final int partition) throws Exception
    {
        final TopicPartition tp = new TopicPartition(GroupCoordinator.OFFSETS_TOPIC, partition);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
    }

    /** Waits until the stray partition holds the {@code planted} records and the migration's {@code tombstones} after them. */
    private static void awaitStrayTombstones(final Admin admin, final int partition, final int planted, final int tombstones)
        throws Exception
    {
        Await.await(() -> endOffset(admin, partition) == planted + tombstones, Duration.ofSeconds(20),
            "the migration's " + tombstones + " tombstones in " + GroupCoordinator.OFFSETS_TOPIC + "-" + partition);
    }

    /** DeleteRecords of a partition of {@code __consumer_offsets}: what time-based deletion of its old segments would do. */
    private static void deleteRecordsBefore(final Admin admin, final int partition, final long offset) throws Exception
    {
        admin.deleteRecords(Map.of(new TopicPartition(GroupCoordinator.OFFSETS_TOPIC, partition), RecordsToDelete.beforeOffset(offset)))
            .all().get();
    }
}
