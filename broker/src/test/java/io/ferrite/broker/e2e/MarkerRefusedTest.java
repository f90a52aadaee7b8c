package io.ferrite.broker.e2e;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.ProducerState;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
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
 * later producer epoch) or TRANSACTION_COORDINATOR_FENCED (a later coordinator epoch) — while the partition
 * has no transaction of the producer open any more is completed without that partition's marker rather
 * than left prepared for ever (on one node no other coordinator would end it, and its id would answer
 * CONCURRENT_TRANSACTIONS from then on). The later epochs come from a client's WriteTxnMarkers (what
 * {@code kafka-transactions.sh abort} sends) while the transaction is open. The producer's next transaction,
 * open again on a partition that fences the coordinator's epoch, gets its marker with the partition's epoch.
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

    private static long latest(final Admin admin, final IsolationLevel isolation) throws Exception
    {
        return admin.listOffsets(Map.of(TP, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(TP).get().offset();
    }

    /** Waits until nothing is open on the partition any more: its last stable offset is its end. */
    private static void awaitStable(final Admin admin, final String what)
    {
        Await.await(() -> latest(admin, IsolationLevel.READ_COMMITTED) == latest(admin, IsolationLevel.READ_UNCOMMITTED),
            Duration.ofSeconds(30), what);
    }

    /**
     * Opens a transaction on the partition, has a client's marker give the partition a later epoch, then commits; with
     * {@code again}, the same producer's next transaction then commits on that partition too.
     */
    private void commitAfterALaterEpoch(final String transactionalId, final int producerEpochAhead, final int coordinatorEpoch,
        final boolean again) throws Exception
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
            awaitStable(admin, "the client's ABORT ended the partition's transaction: its last stable offset is its end");
            if (!again)
            {
                return;
            }

            // the partition keeps coordinator epoch 5 for the producer; its next transaction opens there again, and
            // the coordinator's COMMIT must end it there rather than drop the partition as a moot marker's
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, null, "second".getBytes(StandardCharsets.UTF_8))).get();
            producer.commitTransaction();
            Await.awaitValue(() -> admin.describeTransactions(List.of(transactionalId)).description(transactionalId).get().state(),
                TransactionState.COMPLETE_COMMIT::equals, Duration.ofSeconds(30), "the second transaction completed");
            awaitStable(admin, "the second transaction's COMMIT ended it on the partition: its last stable offset is its end");
            assertEquals(List.of("second"), IsolatedReads.readAll(broker, List.of(TP), IsolationLevel.READ_COMMITTED, 1));
        }
    }

    @Test
    void aMarkerRefusedInvalidProducerEpochEndsTheTransaction() throws Exception
    {
        commitAfterALaterEpoch("epoch-ahead", 5, 0, false); // the producer itself is fenced on the partition from then on
    }

    @Test
    void aMarkerRefusedTransactionCoordinatorFencedEndsTheTransactionAndTheNextOneCommits() throws Exception
    {
        commitAfterALaterEpoch("coordinator-ahead", 0, 5, true);
    }
}
