package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.testing.TestInternalTopics;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An exactly-once application's offsets (kafka-clients 4.4's sendOffsetsToTransaction: TxnOffsetCommit
 * v5 in transactional batches, ended by the transaction's markers) written before {@code
 * __consumer_offsets} grew: at the next start they are strays (the grown count places the group in
 * another partition). The committed transaction's offsets are the group's, an aborted one's are not,
 * one open across the restart stays pending until its transaction ends (here: aborted as the
 * application's next producer starts, its ABORT written to the partition the offsets are in), and
 * then the group is moved to its partition, its strays deleted. Before, the transactional strays were
 * skipped yet counted live: the migration deleted them and the group lost its offsets.
 */
class TxnOffsetStraysTest
{
    /** The test brokers' count ({@link TestInternalTopics}): the topic is grown from it. */
    private static final int PARTITIONS = TestInternalTopics.OFFSETS_PARTITIONS;
    private static final int GROWN = PARTITIONS + 10;
    private static final String TOPIC = "orders";
    private static final String TXN_ID = "stray-app";
    private static final TopicPartition TP0 = new TopicPartition(TOPIC, 0);
    private static final TopicPartition TP1 = new TopicPartition(TOPIC, 1);

    @TempDir
    Path dir;

    /** A group id the grown count places in another partition, neither of them the group "other"'s. */
    private static String strayGroup(final String prefix)
    {
        for (int i = 0; ; i++)
        {
            final String id = prefix + i;
            final int was = CoordinatorTopic.partitionFor(id, PARTITIONS);
            final int is = CoordinatorTopic.partitionFor(id, GROWN);
            if (was != is && was != CoordinatorTopic.partitionFor("other", PARTITIONS) && is != CoordinatorTopic.partitionFor("other", GROWN))
            {
                return id;
            }
        }
    }

    @Test
    void transactionalOffsetsWrittenBeforeTheTopicGrewAreKeptAndMovedHome() throws Exception
    {
        final String group = strayGroup("eos-");
        final int before = CoordinatorTopic.partitionFor(group, PARTITIONS);
        final int after = CoordinatorTopic.partitionFor(group, GROWN);
        final long strayEnd;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            admin.alterConsumerGroupOffsets("other", Map.of(TP0, new OffsetAndMetadata(1))).all().get(); // makes __consumer_offsets
            admin.createPartitions(Map.of("__consumer_offsets", NewPartitions.increaseTo(GROWN))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = producer(broker))
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.sendOffsetsToTransaction(Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(8)),
                    new ConsumerGroupMetadata(group));
                producer.commitTransaction();
                producer.beginTransaction();
                producer.sendOffsetsToTransaction(Map.of(TP0, new OffsetAndMetadata(6)), new ConsumerGroupMetadata(group));
                producer.abortTransaction();
                producer.beginTransaction();
                producer.sendOffsetsToTransaction(Map.of(TP1, new OffsetAndMetadata(9)), new ConsumerGroupMetadata(group));
                // left open: the broker stops with the transaction ongoing
                await(() -> offsets(admin, group).equals(Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(8))),
                    Duration.ofSeconds(20), "the first transaction's offsets committed");
                producer.close(Duration.ZERO);
            }
            assertEquals(0, endOffset(admin, after), "written where the count the coordinator started with places the group");
            strayEnd = endOffset(admin, before);
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertEquals(Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(8)), offsets(admin, group),
                "the committed transaction's stray offsets, not the aborted one's nor the open one's");
            try (KafkaProducer<byte[], byte[]> producer = producer(broker))
            {
                producer.initTransactions(); // aborts the transaction left open: its ABORT goes to the stray partition
            }
            await(() -> endOffset(admin, before) == strayEnd + 3, Duration.ofSeconds(20),
                "the ABORT, then the migration's two tombstones in __consumer_offsets-" + before);
            assertEquals(Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(8)), offsets(admin, group));
            assertEquals(2, endOffset(admin, after), "the group's two offsets, moved home");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertEquals(Map.of(TP0, new OffsetAndMetadata(5), TP1, new OffsetAndMetadata(8)), offsets(admin, group),
                "from the group's partition now");
        }
    }

    /**
     * A group whose only stray is a transaction's offset open across the restart, committed after it
     * (raw TxnOffsetCommit v5 and EndTxn v5): its COMMIT goes to the stray partition, then the group
     * moves home and that stray is tombstoned. Before, an open stray was not among the keys to delete:
     * the group stayed out of the migration and the committed offset's only record was the stray, which
     * a quiet partition keeps after the group's own tombstone went with its segment.
     */
    @Test
    void anOpenStrayCommittedAfterTheRestartIsMovedHomeAndTombstoned() throws Exception
    {
        final String group = strayGroup("open-eos-");
        final int before = CoordinatorTopic.partitionFor(group, PARTITIONS);
        final int after = CoordinatorTopic.partitionFor(group, GROWN);
        final RawTxn.Producer p;
        final long strayEnd;
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            admin.alterConsumerGroupOffsets("other", Map.of(TP0, new OffsetAndMetadata(1))).all().get(); // makes __consumer_offsets
            admin.createPartitions(Map.of("__consumer_offsets", NewPartitions.increaseTo(GROWN))).all().get();
            final RawTxn txn = new RawTxn(raw);
            p = txn.initProducerId("open-stray");
            assertEquals(Errors.NONE, txn.commit((short)5, "open-stray", p, group, TOPIC, 0, 7), "left open: the broker stops");
            strayEnd = endOffset(admin, before);
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final RawTxn txn = new RawTxn(raw);
            assertEquals(new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), txn.fetch(group, TOPIC, 0, true), "pending after the load");
            assertEquals(Errors.NONE, Errors.forCode(txn.endTxnV5("open-stray", p, true).errorCode()));
            await(() -> endOffset(admin, before) == strayEnd + 2, Duration.ofSeconds(20),
                "the COMMIT, then the migration's tombstone of the stray in __consumer_offsets-" + before);
            assertEquals(Map.of(TP0, new OffsetAndMetadata(7)), offsets(admin, group));
            assertEquals(1, endOffset(admin, after), "the committed offset, moved home");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            assertEquals(Map.of(TP0, new OffsetAndMetadata(7)), offsets(admin, group), "from the group's partition now");
        }
    }

    private static KafkaProducer<byte[], byte[]> producer(final RunningBroker broker)
    {
        return broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, TXN_ID, ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000));
    }

    private static Map<TopicPartition, OffsetAndMetadata> offsets(final Admin admin, final String group) throws Exception
    {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
    }

    private static long endOffset(final Admin admin, final int partition) throws Exception
    {
        final TopicPartition tp = new TopicPartition("__consumer_offsets", partition);
        return admin.listOffsets(Map.of(tp, OffsetSpec.latest())).all().get().get(tp).offset();
    }
}
