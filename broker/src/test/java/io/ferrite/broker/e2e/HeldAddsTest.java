package io.ferrite.broker.e2e;

import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client's adds right after its EndTxn (answered once Prepare* is written, while the markers are still
 * being written): a transaction version 1 client's AddPartitionsToTxn v3 and AddOffsetsToTxn v3, and a
 * transaction version 2 client's TxnOffsetCommit v5, meet CONCURRENT_TRANSACTIONS, which Kafka 4.4 answers
 * at once (its {@code TransactionCoordinator.handleAddPartitionsToTransaction} holds nothing; javap) and the
 * client retries; only a produce's own add is held by the broker ({@code ProduceVerificationTest}). The
 * commit marker's fsync is held back (fsync durability, {@link FlushLock}) so the transaction is certainly
 * still PrepareCommit when the add asks; {@code add.partitions.to.txn.retry.backoff.max.ms} is raised to
 * 600 s so that an add held by it could not be answered while the marker is held.
 */
class HeldAddsTest
{
    private static final String GROUP = "held-group";

    @TempDir
    Path dir;

    @FunctionalInterface
    private interface WhileHeld
    {
        /** With the producer id and epoch (unchanged by a version 1 commit); returns what the test keeps. */
        List<String> run(long producerId, short epoch) throws Exception;
    }

    private static AddPartitionsToTxnRequestData addPartition(final String id, final long pid, final short epoch)
    {
        final AddPartitionsToTxnRequestData add = new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(id)
            .setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch(epoch);
        add.v3AndBelowTopics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(id).setPartitions(List.of(0)));
        return add;
    }

    private static AddOffsetsToTxnRequestData addOffsets(final String id, final long pid, final short epoch)
    {
        return new AddOffsetsToTxnRequestData().setTransactionalId(id).setProducerId(pid).setProducerEpoch(epoch).setGroupId(GROUP);
    }

    /** The error an answer of {@code api} (AddPartitionsToTxn or AddOffsetsToTxn) v3 carries. */
    private static String error(final ApiKeys api, final ByteBuffer body)
    {
        if (api == ApiKeys.ADD_OFFSETS_TO_TXN)
        {
            return Errors.forCode(new AddOffsetsToTxnResponseData(new ByteBufferAccessor(body), (short)3).errorCode()).name();
        }
        return Errors.forCode(new AddPartitionsToTxnResponseData(new ByteBufferAccessor(body), (short)3).resultsByTopicV3AndBelow()
            .iterator().next().resultsByPartition().iterator().next().partitionErrorCode()).name();
    }

    /**
     * Topic {@code id} (1 partition), a version 1 transaction of {@code id} (AddPartitionsToTxn v3, produce v11)
     * committed with EndTxn v4, with partition 0's fsync held back from before the EndTxn until {@code whileHeld}
     * returns: the commit marker is appended but not durable, so the transaction stays PrepareCommit meanwhile.
     */
    private static List<String> commitHoldingTheMarkersFsync(final RunningBroker broker, final Admin admin, final RawClient raw,
        final String id, final WhileHeld whileHeld) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(id, 1, (short)1))).all().get();
        final InitProducerIdResponseData init = ProduceVerificationTest.init(raw, id);
        final long pid = init.producerId();
        final short epoch = init.producerEpoch();
        assertEquals("NONE", error(ApiKeys.ADD_PARTITIONS_TO_TXN, raw.exchange(ApiKeys.ADD_PARTITIONS_TO_TXN, (short)3,
            addPartition(id, pid, epoch))), "the first transaction's add");
        assertEquals("NONE", ProduceVerificationTest.produceError(raw.exchange(ApiKeys.PRODUCE, (short)11,
            ProduceVerificationTest.produceRequest(id, id, 0, pid, epoch, 0)), (short)11), "the first transaction's produce");
        final PartitionLog log = broker.broker.topics().topic(id).partitions[0].log;
        assertTrue(log.config().fsyncDurability, "fsync durability");
        synchronized (FlushLock.of(log)) // no fsync of the partition completes while held: the marker is not answered
        {
            final EndTxnResponseData ended = new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, (short)4,
                new EndTxnRequestData().setTransactionalId(id).setProducerId(pid).setProducerEpoch(epoch).setCommitted(true))), (short)4);
            assertEquals(0, ended.errorCode());
            assertEquals(TransactionState.PREPARE_COMMIT, admin.describeTransactions(List.of(id)).description(id).get().state());
            return whileHeld.run(pid, epoch);
        }
    }

    /**
     * AddPartitionsToTxn v3 and AddOffsetsToTxn v3 sent while the last transaction's commit marker cannot be durable:
     * each answered CONCURRENT_TRANSACTIONS at once (before, Ferrite held them on the coordinators' agent until the
     * bound, 600 s here, and the exchange timed out), the transaction still PrepareCommit (nothing written for them);
     * sent again once CompleteCommit is written, NONE, in the next transaction.
     */
    @Test
    void aClientsAddRightAfterItsCommitIsAnsweredConcurrentTransactionsAtOnce() throws Exception
    {
        for (final ApiKeys api : List.of(ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.ADD_OFFSETS_TO_TXN))
        {
            final String id = "ending-" + api.id;
            try (RunningBroker broker = new RunningBroker(dir.resolve(id), Map.of("ferrite.log.durability", "fsync",
                "add.partitions.to.txn.retry.backoff.max.ms", "600000")); Admin admin = broker.admin();
                RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final long[] producer = new long[2];
                final List<String> answered = commitHoldingTheMarkersFsync(broker, admin, raw, id, (pid, epoch) ->
                {
                    producer[0] = pid;
                    producer[1] = epoch;
                    final String error = error(api, raw.exchange(api, (short)3, add(api, id, pid, epoch)));
                    return List.of(error, admin.describeTransactions(List.of(id)).description(id).get().state().toString());
                });
                assertEquals(List.of("CONCURRENT_TRANSACTIONS", TransactionState.PREPARE_COMMIT.toString()), answered,
                    api + " answered at once while the last transaction completes, nothing added");
                await(() -> admin.describeTransactions(List.of(id)).description(id).get().state() == TransactionState.COMPLETE_COMMIT,
                    Duration.ofSeconds(20), "CompleteCommit once the marker is durable");
                assertEquals("NONE", error(api, raw.exchange(api, (short)3, add(api, id, producer[0], (short)producer[1]))),
                    api + " sent again");
                assertEquals(TransactionState.ONGOING, admin.describeTransactions(List.of(id)).description(id).get().state(),
                    "the next transaction");
            }
        }
    }

    private static ApiMessage add(final ApiKeys api, final String id, final long pid, final short epoch)
    {
        return api == ApiKeys.ADD_OFFSETS_TO_TXN ? addOffsets(id, pid, epoch) : addPartition(id, pid, epoch);
    }

    /**
     * A transaction version 2 client's TxnOffsetCommit (v5: it adds the group's {@code __consumer_offsets}
     * partition itself, kafka-clients 4.4's sendOffsetsToTransaction) right after its EndTxn v5, the commit
     * marker on that partition not durable yet: answered CONCURRENT_TRANSACTIONS at once, whatever {@code
     * add.partitions.to.txn.retry.backoff.max.ms} (here 600 s), as Kafka 4.4 answers it (its group coordinator's
     * verification, {@code ReplicaManager.maybeSendPartitionToTransactionCoordinator}, holds nothing: only a produce's
     * add is held; javap), and nothing written; sent again once CompleteCommit is written, NONE, in the next
     * transaction. Before, Ferrite held it on the agent until CompleteCommit and answered NONE.
     */
    @Test
    void aTxnOffsetCommitV5RightAfterTheCommitIsAnsweredConcurrentTransactionsAtOnce() throws Exception
    {
        final String id = "held-offsets";
        try (RunningBroker broker = new RunningBroker(dir, Map.of("ferrite.log.durability", "fsync",
            "add.partitions.to.txn.retry.backoff.max.ms", "600000")); Admin admin = broker.admin();
            RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic(id, 1, (short)1))).all().get();
            final InitProducerIdResponseData init = ProduceVerificationTest.init(raw, id);
            final RawTxn txn = new RawTxn(raw);
            assertEquals(Errors.NONE, txn.commit((short)5, id, new RawTxn.Producer(init.producerId(), init.producerEpoch()), GROUP, id, 0, 1),
                "the first transaction's offset (its partition added by the commit)");
            final PartitionLog log = broker.broker.topics().topic("__consumer_offsets")
                .partitions[broker.broker.groups().agent().call(broker.broker.groups(), (g, nowMs) -> g.offsetsPartitionOf(GROUP)).get()].log;
            assertTrue(log.config().fsyncDurability, "fsync durability");
            final RawTxn.Producer next;
            synchronized (FlushLock.of(log)) // no fsync of the group's partition completes while held: the marker is not answered
            {
                final EndTxnResponseData ended = new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, (short)5,
                    new EndTxnRequestData().setTransactionalId(id).setProducerId(init.producerId()).setProducerEpoch(init.producerEpoch())
                        .setCommitted(true))), (short)5);
                assertEquals(0, ended.errorCode());
                next = new RawTxn.Producer(ended.producerId(), ended.producerEpoch());
                assertEquals(TransactionState.PREPARE_COMMIT, admin.describeTransactions(List.of(id)).description(id).get().state());
                final long end = log.logEndOffset();
                // answered while the marker cannot be durable: the transaction is certainly still PrepareCommit
                assertEquals(Errors.CONCURRENT_TRANSACTIONS, txn.commit((short)5, id, next, GROUP, id, 0, 2),
                    "answered at once while the last transaction completes");
                assertEquals(end, log.logEndOffset(), "nothing written for it");
            }
            await(() -> admin.describeTransactions(List.of(id)).description(id).get().state() == TransactionState.COMPLETE_COMMIT,
                Duration.ofSeconds(20), "CompleteCommit once the marker is durable");
            assertEquals(Errors.NONE, txn.commit((short)5, id, next, GROUP, id, 0, 2), "sent again: added to the next transaction");
            assertEquals(TransactionState.ONGOING, admin.describeTransactions(List.of(id)).description(id).get().state(),
                "the next transaction");
        }
    }

    /**
     * kafka-clients 4.4 (transaction version 2: its sendOffsetsToTransaction is a TxnOffsetCommit v5 that adds the group's
     * partition) commits, then begins its next transaction while the commit marker cannot be durable: its
     * sendOffsetsToTransaction is answered CONCURRENT_TRANSACTIONS and sent again (counted by the broker's request
     * metrics, the transaction still PrepareCommit: each of them met the ending transaction), then goes through once the
     * marker is durable; the next transaction's record and offset are committed.
     */
    @Test
    void aKafkaClientsProducersNextTransactionRetriesConcurrentTransactionsAndCommits() throws Exception
    {
        final String id = "clients-next";
        final TopicPartition tp = new TopicPartition(id, 0);
        try (RunningBroker broker = new RunningBroker(dir, Map.of("ferrite.log.durability", "fsync",
            "add.partitions.to.txn.retry.backoff.max.ms", "600000")); Admin admin = broker.admin();
            KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 60_000)))
        {
            admin.createTopics(List.of(new NewTopic(id, 1, (short)1))).all().get();
            producer.initTransactions();
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(id, 0, null, "first".getBytes(StandardCharsets.UTF_8))).get();
            producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(1)), new ConsumerGroupMetadata(GROUP));
            final PartitionLog log = broker.broker.topics().topic(id).partitions[0].log;
            assertTrue(log.config().fsyncDurability, "fsync durability");
            final CompletableFuture<Void> offsets;
            synchronized (FlushLock.of(log)) // no fsync of the partition completes while held: the marker is not answered
            {
                producer.commitTransaction(); // EndTxn v5, answered once PrepareCommit is written
                assertEquals(TransactionState.PREPARE_COMMIT, admin.describeTransactions(List.of(id)).description(id).get().state());
                final long before = RequestCounts.of(broker.dir, ApiKeys.TXN_OFFSET_COMMIT.id);
                producer.beginTransaction();
                offsets = CompletableFuture.runAsync(() ->
                    producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(2)), new ConsumerGroupMetadata(GROUP)));
                await(() -> RequestCounts.of(broker.dir, ApiKeys.TXN_OFFSET_COMMIT.id) - before >= 2, Duration.ofSeconds(20),
                    "the client's TxnOffsetCommit answered and sent again");
                assertEquals(TransactionState.PREPARE_COMMIT, admin.describeTransactions(List.of(id)).description(id).get().state(),
                    "every one of them met the ending transaction");
            }
            offsets.get();
            producer.send(new ProducerRecord<>(id, 0, null, "second".getBytes(StandardCharsets.UTF_8))).get();
            producer.commitTransaction();
            assertEquals(List.of("first", "second"), IsolatedReads.readAll(broker, List.of(tp), IsolationLevel.READ_COMMITTED, 2));
            await(() ->
            {
                final OffsetAndMetadata committed = admin.listConsumerGroupOffsets(GROUP).partitionsToOffsetAndMetadata().get().get(tp);
                return committed != null && committed.offset() == 2;
            }, Duration.ofSeconds(20), "the next transaction's offset committed");
        }
    }
}
