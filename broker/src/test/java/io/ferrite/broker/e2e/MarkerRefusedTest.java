package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.WriteTxnMarkersRequestData;
import org.apache.kafka.common.message.WriteTxnMarkersResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A transaction whose marker a partition refuses for good — INVALID_PRODUCER_EPOCH (the partition knows a
 * later producer epoch) or TRANSACTION_COORDINATOR_FENCED (a later coordinator epoch) — is completed
 * without that partition's marker rather than left prepared for ever (on one node no other coordinator
 * would end it, and its id would answer CONCURRENT_TRANSACTIONS from then on). The later epochs come from
 * a client's WriteTxnMarkers (what {@code kafka-transactions.sh abort} sends) while the transaction is open.
 */
class MarkerRefusedTest
{
    private static final String TOPIC = "refusing";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);

    @TempDir
    Path dir;

    private static Errors marker(final RawClient raw, final long producerId, final short epoch, final int coordinatorEpoch,
        final byte transactionVersion) throws Exception
    {
        final short version = 2;
        final WriteTxnMarkersRequestData request = new WriteTxnMarkersRequestData().setMarkers(List.of(
            new WriteTxnMarkersRequestData.WritableTxnMarker().setProducerId(producerId).setProducerEpoch(epoch).setTransactionResult(false)
                .setCoordinatorEpoch(coordinatorEpoch).setTransactionVersion(transactionVersion)
                .setTopics(List.of(new WriteTxnMarkersRequestData.WritableTxnMarkerTopic().setName(TOPIC).setPartitionIndexes(List.of(0))))));
        final WriteTxnMarkersResponseData response = new WriteTxnMarkersResponseData(
            new ByteBufferAccessor(raw.exchange(ApiKeys.WRITE_TXN_MARKERS, version, request)), version);
        return Errors.forCode(response.markers().get(0).topics().get(0).partitions().get(0).errorCode());
    }

    /** Opens a transaction on the partition, has a client's marker give the partition a later epoch, then commits. */
    private void commitAfterALaterEpoch(final String transactionalId, final int producerEpochAhead, final int coordinatorEpoch)
        throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            RawClient raw = new RawClient(broker.broker.address().getPort());
            KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "open".getBytes(StandardCharsets.UTF_8))).get();
            final ProducerState open = admin.describeProducers(List.of(TP)).partitionResult(TP).get().activeProducers().get(0);
            assertEquals(Errors.NONE, marker(raw, open.producerId(), (short)(open.producerEpoch() + producerEpochAhead), coordinatorEpoch,
                (byte)(producerEpochAhead > 0 ? 2 : 0)));

            producer.commitTransaction(); // answered once PrepareCommit is written; the partition then refuses its marker
            Await.awaitValue(() -> admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get().state(),
                TransactionState.COMPLETE_COMMIT::equals, Duration.ofSeconds(30),
                "the transaction completed without the refused partition's marker");
        }
    }

    @Test
    void aMarkerRefusedInvalidProducerEpochEndsTheTransaction() throws Exception
    {
        commitAfterALaterEpoch("epoch-ahead", 5, 0);
    }

    @Test
    void aMarkerRefusedTransactionCoordinatorFencedEndsTheTransaction() throws Exception
    {
        commitAfterALaterEpoch("coordinator-ahead", 0, 5);
    }
}
