package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * AddPartitionsToTxn in its batched form (v4-5, a broker's: the add or the verification of a produce)
 * naming a partition that does not exist: as Kafka's KafkaApis does for every version, that transaction's
 * answer is UNKNOWN_TOPIC_OR_PARTITION for the unknown partition and OPERATION_NOT_ATTEMPTED for its
 * others, and nothing is added; another transaction of the same request is handled as usual. Ferrite
 * checked topics for v0-3 only: v5 added the existing partition and answered the unknown one NONE. A client's v3
 * request naming one of Kafka's internal topics is refused on a broker without an authorizer too.
 */
class AddPartitionsUnknownTopicTest
{
    @TempDir
    Path dir;

    private static AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction transaction(final String id,
        final InitProducerIdResponseData init, final boolean verifyOnly, final Map<String, Integer> partitions)
    {
        final AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction t = new AddPartitionsToTxnRequestData.AddPartitionsToTxnTransaction()
            .setTransactionalId(id).setProducerId(init.producerId()).setProducerEpoch(init.producerEpoch()).setVerifyOnly(verifyOnly);
        partitions.forEach((topic, p) -> t.topics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic()
            .setName(topic).setPartitions(List.of(p))));
        return t;
    }

    /** transactional id -> "topic-partition=ERROR" in name order. */
    private static Map<String, Map<String, String>> answers(final AddPartitionsToTxnResponseData response)
    {
        final Map<String, Map<String, String>> byId = new TreeMap<>();
        response.resultsByTransaction().forEach(r -> r.topicResults().forEach(t -> t.resultsByPartition().forEach(p ->
            byId.computeIfAbsent(r.transactionalId(), k -> new TreeMap<>())
                .put(t.name() + "-" + p.partitionIndex(), Errors.forCode(p.partitionErrorCode()).name()))));
        return byId;
    }

    @Test
    void aTransactionNamingAnUnknownTopicIsAnsweredPerPartitionAndNothingIsAdded() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("known", 2, (short)1))).all().get();
            final InitProducerIdResponseData a = ProduceVerificationTest.init(raw, "txn-a");
            final InitProducerIdResponseData b = ProduceVerificationTest.init(raw, "txn-b");
            final InitProducerIdResponseData c = ProduceVerificationTest.init(raw, "txn-c");
            final AddPartitionsToTxnRequestData request = new AddPartitionsToTxnRequestData();
            request.transactions().add(transaction("txn-a", a, false, Map.of("known", 0, "missing", 0)));
            request.transactions().add(transaction("txn-b", b, false, Map.of("known", 1)));
            request.transactions().add(transaction("txn-c", c, true, Map.of("known", 0, "known-not", 3)));
            final AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.ADD_PARTITIONS_TO_TXN, (short)5, request)), (short)5);
            assertEquals(0, response.errorCode());
            assertEquals(Map.of(
                    "txn-a", Map.of("known-0", "OPERATION_NOT_ATTEMPTED", "missing-0", "UNKNOWN_TOPIC_OR_PARTITION"),
                    "txn-b", Map.of("known-1", "NONE"),
                    "txn-c", Map.of("known-0", "OPERATION_NOT_ATTEMPTED", "known-not-3", "UNKNOWN_TOPIC_OR_PARTITION")),
                answers(response));
            final Map<String, TransactionDescription> described = admin.describeTransactions(List.of("txn-a", "txn-b")).all().get();
            assertTrue(described.get("txn-a").topicPartitions().isEmpty(), "nothing of txn-a added: " + described.get("txn-a"));
            assertEquals(1, described.get("txn-b").topicPartitions().size(), "txn-b's partition added: " + described.get("txn-b"));
        }
    }

    /**
     * A client's v3 add naming {@code __consumer_offsets} on a broker without an authorizer: Kafka 4.4's KafkaApis drops
     * {@code Topic.isInternal} names before {@code AuthHelper.filterByAuthorized} (which, with no authorizer, passes every
     * name it is given), so the internal topic is answered TOPIC_AUTHORIZATION_FAILED and the request's other partitions
     * OPERATION_NOT_ATTEMPTED; nothing is added to the transaction.
     */
    @Test
    void aClientAddNamingAnInternalTopicIsRefusedWithoutAnAuthorizer() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("known", 1, (short)1))).all().get();
            final InitProducerIdResponseData init = ProduceVerificationTest.init(raw, "txn-internal");
            final AddPartitionsToTxnRequestData request = new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId("txn-internal")
                .setV3AndBelowProducerId(init.producerId()).setV3AndBelowProducerEpoch(init.producerEpoch());
            for (final String topic : List.of("__consumer_offsets", "known"))
            {
                request.v3AndBelowTopics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(topic).setPartitions(List.of(0)));
            }
            final AddPartitionsToTxnResponseData response = new AddPartitionsToTxnResponseData(new ByteBufferAccessor(
                raw.exchange(ApiKeys.ADD_PARTITIONS_TO_TXN, (short)3, request)), (short)3);
            final Map<String, String> answers = new TreeMap<>();
            response.resultsByTopicV3AndBelow().forEach(t -> t.resultsByPartition().forEach(p ->
                answers.put(t.name() + "-" + p.partitionIndex(), Errors.forCode(p.partitionErrorCode()).name())));
            assertEquals(Map.of("__consumer_offsets-0", "TOPIC_AUTHORIZATION_FAILED", "known-0", "OPERATION_NOT_ATTEMPTED"), answers);
            final TransactionDescription described = admin.describeTransactions(List.of("txn-internal")).description("txn-internal").get();
            assertTrue(described.topicPartitions().isEmpty(), "nothing added: " + described);
        }
    }
}
