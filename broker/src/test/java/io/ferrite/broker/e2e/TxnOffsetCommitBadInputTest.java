package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.TxnOffsetCommitRequestData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.utils.Utils;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * TxnOffsetCommit's refusals over the wire, each as Kafka 4.4 answers it, and nothing written to
 * {@code __consumer_offsets} for any of them: an empty group id, an unknown transactional id, another
 * producer id, another epoch, the group's partition not in the transaction (v0-3 INVALID_TXN_STATE, v4
 * TRANSACTION_ABORTABLE), an unknown topic (or topic id, v6), a generation for a group that does not
 * exist. v5 (transaction version 2) adds the group's partition to the transaction itself. Every
 * expected answer here (and OffsetFetch's UNSTABLE_OFFSET_COMMIT, -1, -1, "" at v7 and v8) was checked
 * against a live Kafka 4.4.0 node (kafka-ref) sent the same requests.
 */
class TxnOffsetCommitBadInputTest
{
    private static final String IN = "orders";

    @TempDir
    Path dir;

    /** Every record of {@code __consumer_offsets} (0 while it does not exist). */
    private static long offsetsRecords(final RunningBroker broker)
    {
        final Topic topic = broker.broker.topics().topic("__consumer_offsets");
        long end = 0;
        for (final Partition p : topic == null ? new Partition[0] : topic.partitions)
        {
            end += p.log.logEndOffset();
        }
        return end;
    }

    @Test
    void refusalsAnswerKafkasErrorsAndWriteNothing() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 1, (short)1))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("bad-1");
            for (short v = 0; v <= 4; v++)
            {
                assertEquals(v <= 3 ? Errors.INVALID_TXN_STATE : Errors.TRANSACTION_ABORTABLE,
                    txn.commit(v, "bad-1", p, "sorters", IN, 0, 5), "v" + v + ": the group's partition not in the transaction");
            }
            assertEquals(Errors.INVALID_GROUP_ID, txn.commit((short)3, "bad-1", p, "", IN, 0, 5), "empty group id");
            assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING, txn.commit((short)3, "unknown-id", p, "sorters", IN, 0, 5));
            assertEquals(Errors.INVALID_PRODUCER_ID_MAPPING,
                txn.commit((short)3, "bad-1", new RawTxn.Producer(p.id() + 1000, p.epoch()), "sorters", IN, 0, 5), "another producer id");
            assertEquals(Errors.NONE, txn.addOffsets("bad-1", p, "sorters"));
            for (short v = 0; v <= 5; v++)
            {
                assertEquals(Errors.INVALID_PRODUCER_EPOCH,
                    txn.commit(v, "bad-1", new RawTxn.Producer(p.id(), (short)(p.epoch() + 1)), "sorters", IN, 0, 5), "v" + v + ": another epoch");
            }
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, txn.commit((short)3, "bad-1", p, "sorters", "no-such-topic", 0, 5));
            assertEquals(Errors.UNKNOWN_TOPIC_OR_PARTITION, txn.commit((short)3, "bad-1", p, "sorters", IN, 7, 5), "no such partition");
            final TxnOffsetCommitRequestData unknownId = RawTxn.request("bad-1", p, "sorters", "", 0, 5);
            unknownId.topics().get(0).setTopicId(Uuid.randomUuid());
            assertEquals(Errors.UNKNOWN_TOPIC_ID, txn.commit((short)6, unknownId));
            final TxnOffsetCommitRequestData generation = RawTxn.request("bad-1", p, "sorters", IN, 0, 5).setGenerationIdOrMemberEpoch(4)
                .setMemberId("m-1");
            assertEquals(Errors.ILLEGAL_GENERATION, txn.commit((short)5, generation), "a generation of a group that does not exist");
            assertEquals(Errors.GROUP_ID_NOT_FOUND, txn.commit((short)6, generation.setTopics(List.of(
                new TxnOffsetCommitRequestData.TxnOffsetCommitRequestTopic().setTopicId(topicId(admin)).setPartitions(
                    generation.topics().get(0).partitions())))), "v6");
            assertEquals(0, offsetsRecords(broker), "nothing written to __consumer_offsets");

            assertEquals(Errors.NONE, txn.commit((short)3, "bad-1", p, "sorters", IN, 0, 5), "the same, right");
            assertTrue(offsetsRecords(broker) > 0, "written");
        }
    }

    private static Uuid topicId(final Admin admin) throws Exception
    {
        return admin.describeTopics(List.of(IN)).allTopicNames().get().get(IN).topicId();
    }

    @Test
    void version5AddsTheGroupsPartitionToTheTransactionAndVersion6NamesTopicsById() throws Exception
    {
        // the production count: "packers" hashes negative, and under 50 Kafka's Utils.abs places it in 9 where a mask
        // of the sign bit gives 39 (under the test brokers' 5 both give 4, which would not tell them apart)
        try (RunningBroker broker = new RunningBroker(dir, Map.of("offsets.topic.num.partitions", "50")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(IN, 1, (short)1))).all().get();
            final RawTxn txn = new RawTxn(raw);
            final RawTxn.Producer p = txn.initProducerId("tv2-1");
            assertEquals(Errors.NONE, txn.commit((short)5, "tv2-1", p, "packers", IN, 0, 3), "no AddOffsetsToTxn before it");
            final TransactionDescription d = admin.describeTransactions(List.of("tv2-1")).description("tv2-1").get();
            final int offsetsPartition = Utils.abs("packers".hashCode()) % 50;
            assertEquals(List.of(new TopicPartition("__consumer_offsets", offsetsPartition)), List.copyOf(d.topicPartitions()));
            final TxnOffsetCommitRequestData byId = RawTxn.request("tv2-1", p, "packers", "", 0, 4);
            byId.topics().get(0).setTopicId(topicId(admin));
            assertEquals(Errors.NONE, txn.commit((short)6, byId), "v6: the topic by its id");
            assertEquals(new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), txn.fetch("packers", IN, 0, true));
            assertEquals(new RawTxn.Fetched(-1, Errors.UNSTABLE_OFFSET_COMMIT), txn.fetchV7("packers", IN, 0), "OffsetFetch v7");
            assertEquals(Errors.NONE, txn.endTxn("tv2-1", p, true));
            txn.awaitCommitted("packers", IN, 0, 4, "the last offset of the transaction committed");
            final var advertised = raw.apiVersions().apiKeys().find(ApiKeys.TXN_OFFSET_COMMIT.id);
            assertEquals(List.of((short)0, (short)6), List.of(advertised.minVersion(), advertised.maxVersion()), "advertised as Kafka 4.4");
        }
    }
}
