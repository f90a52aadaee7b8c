package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Utils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A TxnOffsetCommit (kafka-clients 4.4: v5, the offsets partition added implicitly) adds to the
 * transaction the {@code __consumer_offsets} partition its batch is written to: the one the group
 * coordinator places the group in by the topic's own partition count, which is not
 * {@code offsets.topic.num.partitions} when the topic was made with another. Here, with 3 configured, a
 * CreateTopics made it with one partition: the group's partition by the setting (not 0) does not
 * exist, the batch goes to partition 0, and the transaction's marker there commits it.
 */
class TxnOffsetsPartitionTest
{
    private static final String IN = "orders";
    private static final String GROUP = "shipper";

    @TempDir
    Path dir;

    @Test
    void theTransactionHoldsThePartitionTheOffsetsAreWrittenTo() throws Exception
    {
        assertNotEquals(0, Utils.abs(GROUP.hashCode()) % 3, "by the setting the group is not in partition 0");
        try (RunningBroker broker = new RunningBroker(dir, Map.of("offsets.topic.num.partitions", "3")); Admin admin = broker.admin();
             KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, "shipper-1",
                 ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000)))
        {
            admin.createTopics(List.of(new NewTopic(IN, 1, (short)1), new NewTopic("__consumer_offsets", 1, (short)1))).all().get();
            assertEquals(1, admin.describeTopics(List.of("__consumer_offsets")).allTopicNames().get().get("__consumer_offsets")
                .partitions().size(), "made with one partition");
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(IN, 0, null, "x".getBytes(StandardCharsets.UTF_8)));
            producer.sendOffsetsToTransaction(Map.of(new TopicPartition(IN, 0), new OffsetAndMetadata(5)), new ConsumerGroupMetadata(GROUP));
            producer.commitTransaction();
            await(() ->
            {
                final OffsetAndMetadata o = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get()
                    .get(new TopicPartition(IN, 0));
                return o != null && o.offset() == 5;
            }, Duration.ofSeconds(20), "the transaction's offset committed");
        }
    }

    /**
     * The same for a transaction version 1 client (librdkafka, KafkaJS): AddOffsetsToTxn adds the
     * partition the group coordinator writes the group's batch to, so its TxnOffsetCommit v3 finds it in
     * the transaction (it was INVALID_TXN_STATE while AddOffsetsToTxn placed the group by the setting).
     */
    @Test
    void addOffsetsToTxnAddsThePartitionTheOffsetsAreWrittenTo() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("offsets.topic.num.partitions", "3")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 1, (short)1), new NewTopic("__consumer_offsets", 1, (short)1))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("shipper-v1");
            assertEquals(org.apache.kafka.common.protocol.Errors.NONE, txn.sendOffsets("shipper-v1", p, GROUP, IN, 0, 7),
                "AddOffsetsToTxn v3, TxnOffsetCommit v3");
            assertEquals(org.apache.kafka.common.protocol.Errors.NONE, txn.endTxn("shipper-v1", p, true));
            txn.awaitCommitted(GROUP, IN, 0, 7, "the transaction's offset committed");
        }
    }
}
