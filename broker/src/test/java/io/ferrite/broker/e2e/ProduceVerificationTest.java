package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.ApiVersionsRequestData;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.message.ProduceResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.SimpleRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.log.PartitionLog;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka 4.4's produce verification (KIP-890 part 1) and transaction version 2 over raw requests:
 * ApiVersions advertises {@code transaction.version} as a 4.4 node does, and a transactional
 * produce is answered by produce version as Kafka 4.4 answers it (each row checked against a Kafka
 * 4.4 node): up to v10 a partition not in the transaction is INVALID_TXN_STATE, v11
 * TRANSACTION_ABORTABLE, v12+ (transaction version 2) adds it; a fenced epoch is
 * INVALID_PRODUCER_EPOCH, an unknown transactional id INVALID_PRODUCER_ID_MAPPING; and a late
 * write after the transaction's commit marker (transaction version 1: same epoch) is refused as a
 * partition not in a transaction, never opening one nobody would end.
 */
class ProduceVerificationTest
{
    @TempDir
    Path dir;

    @Test
    void apiVersionsAdvertisesTransactionVersionTwoAsKafkaDoes() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            for (final short version : new short[] {3, 4})
            {
                final ApiVersionsResponseData r = new ApiVersionsResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.API_VERSIONS,
                    version, new ApiVersionsRequestData().setClientSoftwareName("raw-test").setClientSoftwareVersion("1"))), version);
                assertTrue(r.finalizedFeaturesEpoch() >= 0, "epoch " + r.finalizedFeaturesEpoch());
                assertEquals("[FinalizedFeatureKey(name='transaction.version', maxVersionLevel=2, minVersionLevel=2)]",
                    r.finalizedFeatures().toString());
                // below v4 Kafka leaves out the supported features whose minimum is 0
                assertEquals(version < 4 ? "[]" : "[SupportedFeatureKey(name='eligible.leader.replicas.version', minVersion=0, maxVersion=0), "
                    + "SupportedFeatureKey(name='group.version', minVersion=0, maxVersion=0), "
                    + "SupportedFeatureKey(name='kraft.version', minVersion=0, maxVersion=0), "
                    + "SupportedFeatureKey(name='share.version', minVersion=0, maxVersion=0), "
                    + "SupportedFeatureKey(name='streams.version', minVersion=0, maxVersion=0), "
                    + "SupportedFeatureKey(name='transaction.version', minVersion=0, maxVersion=2)]",
                    r.supportedFeatures().toString(), "v" + version);
                assertEquals(13, r.apiKeys().find(ApiKeys.PRODUCE.id).maxVersion());
                assertEquals(5, r.apiKeys().find(ApiKeys.END_TXN.id).maxVersion());
            }
        }
    }

    @Test
    void aTransactionalProduceIsVerifiedAndAnsweredByProduceVersionAsKafkaAnswersIt() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final List<String> rows = new ArrayList<>();
            for (final short version : new short[] {9, 10, 11, 12})
            {
                rows.add(row(admin, raw, version));
            }
            // columns: added partition | partition not added | epoch above the coordinator's | unknown id | late write after commit
            assertEquals(List.of(
                "v9 NONE INVALID_TXN_STATE INVALID_PRODUCER_EPOCH INVALID_PRODUCER_ID_MAPPING INVALID_TXN_STATE",
                "v10 NONE INVALID_TXN_STATE INVALID_PRODUCER_EPOCH INVALID_PRODUCER_ID_MAPPING INVALID_TXN_STATE",
                "v11 NONE TRANSACTION_ABORTABLE INVALID_PRODUCER_EPOCH INVALID_PRODUCER_ID_MAPPING TRANSACTION_ABORTABLE",
                "v12 NONE NONE INVALID_PRODUCER_EPOCH INVALID_PRODUCER_ID_MAPPING NONE"), rows);
        }
    }

    /**
     * A transaction version 2 client's first send of its next transaction, right after its EndTxn v5
     * (answered once PrepareCommit is written, while the markers are still being written): the
     * partition's add meets CONCURRENT_TRANSACTIONS, which the broker retries (Kafka 4.4:
     * {@code add.partitions.to.txn.retry.backoff.max.ms}, here raised so it outlasts the held fsync)
     * instead of answering NOT_ENOUGH_REPLICAS at once, on which kafka-clients backs off. The commit
     * marker's fsync is held back (fsync durability) until the produce waits on the coordinators'
     * agent, so the transaction is certainly still PrepareCommit when the produce asks; once the
     * fsync runs, CompleteCommit is written and the retried add answers NONE.
     */
    @Test
    void theNextTransactionsFirstProduceWaitsForTheCommitToCompleteInsteadOfNotEnoughReplicas() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("ferrite.log.durability", "fsync",
            "add.partitions.to.txn.retry.backoff.max.ms", "600000")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final int produced = commitHoldingTheMarkersFsync(broker, admin, raw, "next", (pid, epoch) ->
            {
                final int id = raw.send(ApiKeys.PRODUCE, (short)12, produceRequest("next", "next", 0, pid, epoch, 0));
                final CoordinatorAgent agent = broker.broker.groups().agent();
                await(() -> raw.answered() || agent.call(broker.broker.groups(), (g, nowMs) -> agent.waiting()).get() > 0,
                    Duration.ofSeconds(20), "the produce answered, or waiting on the coordinators' agent");
                return id;
            });
            assertEquals("NONE", produceError(raw.receive(ApiKeys.PRODUCE, (short)12, produced), (short)12),
                "the next transaction's first produce, retried until CommitComplete");
        }
    }

    /**
     * The same produce when the retries end before the markers' fsync: v12+ is answered
     * CONCURRENT_TRANSACTIONS as Kafka 4.4 answers it after its retries (100 ms by default); v11 and
     * below (verify only, never retried) NOT_ENOUGH_REPLICAS, as Kafka.
     */
    @Test
    void aProduceStillMeetingTheEndingTransactionIsAnsweredByVersionAsKafkaAnswersIt() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("ferrite.log.durability", "fsync")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final List<String> answers = new ArrayList<>();
            commitHoldingTheMarkersFsync(broker, admin, raw, "ending", (pid, epoch) ->
            {
                for (final short version : new short[] {11, 12})
                {
                    answers.add("v" + version + " " + produceError(raw.exchange(ApiKeys.PRODUCE, version,
                        produceRequest("ending", "ending", 0, pid, epoch, 0)), version));
                }
                return 0;
            });
            assertEquals(List.of("v11 NOT_ENOUGH_REPLICAS", "v12 CONCURRENT_TRANSACTIONS"), answers);
        }
    }

    /**
     * Transactional batches of two producers in one request: Kafka 4.4's ReplicaManager looks at every
     * transactional batch of the request before appending or verifying anything and fails the whole
     * request INVALID_PRODUCER_ID_MAPPING ("Transactional records contained more than one producer
     * ID") — also the partition where the first producer's transaction is already open, whose batch
     * needs no verification and is not appended either.
     */
    @Test
    void aRequestWithTransactionalBatchesOfTwoProducersIsRefusedWholeAsKafkaRefusesIt() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            admin.createTopics(List.of(new NewTopic("two", 2, (short)1))).all().get();
            final InitProducerIdResponseData a = init(raw, "two-a");
            final InitProducerIdResponseData b = init(raw, "two-b");
            assertEquals("NONE", produce(raw, (short)12, "two-a", "two", 0, a.producerId(), a.producerEpoch(), 0),
                "two-a's transaction opened on partition 0");
            final ProduceRequestData both = produceRequest("two-a", "two", 0, a.producerId(), a.producerEpoch(), 1);
            both.topicData().iterator().next().partitionData().add(new ProduceRequestData.PartitionProduceData().setIndex(1)
                .setRecords(MemoryRecords.withTransactionalRecords(Compression.NONE, b.producerId(), b.producerEpoch(), 0,
                    new SimpleRecord("b".getBytes(StandardCharsets.UTF_8)))));
            final ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.PRODUCE,
                (short)12, both)), (short)12);
            final List<String> answers = new ArrayList<>();
            for (final ProduceResponseData.PartitionProduceResponse r : response.responses().iterator().next().partitionResponses())
            {
                answers.add(r.index() + " " + Errors.forCode(r.errorCode()) + " " + r.errorMessage());
            }
            assertEquals(List.of("0 INVALID_PRODUCER_ID_MAPPING Transactional records contained more than one producer ID",
                "1 INVALID_PRODUCER_ID_MAPPING Transactional records contained more than one producer ID"), answers);
            assertEquals(1, broker.broker.topics().topic("two").partitions[0].log.logEndOffset(), "nothing appended to partition 0");
            assertEquals(0, broker.broker.topics().topic("two").partitions[1].log.logEndOffset(), "nothing appended to partition 1");
        }
    }

    /**
     * InitProducerId v5 for {@code transactionalId}, retried while the answer is COORDINATOR_NOT_AVAILABLE or
     * COORDINATOR_LOAD_IN_PROGRESS (as kafka-clients retries them: the first one makes {@code __transaction_state},
     * which a test holding the admin agent's creations delays), at most 30 s; any other error fails the test.
     */
    static InitProducerIdResponseData init(final RawClient raw, final String transactionalId) throws IOException
    {
        final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true)
        {
            final InitProducerIdResponseData init = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(
                ApiKeys.INIT_PRODUCER_ID, (short)5, new InitProducerIdRequestData().setTransactionalId(transactionalId)
                    .setTransactionTimeoutMs(60_000).setProducerId(-1).setProducerEpoch((short)-1))), (short)5);
            final boolean retriable = init.errorCode() == Errors.COORDINATOR_NOT_AVAILABLE.code()
                || init.errorCode() == Errors.COORDINATOR_LOAD_IN_PROGRESS.code();
            if (!retriable || System.nanoTime() - deadline > 0)
            {
                assertEquals(0, init.errorCode());
                return init;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(20_000_000L); // kafka-clients backs off between retries too
        }
    }

    @FunctionalInterface
    private interface WhileHeld
    {
        /** With the producer id and the epoch EndTxn v5 gave for the next transaction. */
        int run(long producerId, short epoch) throws Exception;
    }

    /**
     * Topic {@code id} (1 partition), a transaction of {@code id} (produce v12 adds the partition)
     * committed with EndTxn v5, with partition 0's fsync held back from before the EndTxn until
     * {@code whileHeld} returns: the commit marker is appended but not durable, so the transaction
     * stays PrepareCommit meanwhile. Returns what {@code whileHeld} returned.
     */
    private static int commitHoldingTheMarkersFsync(final RunningBroker broker, final Admin admin, final RawClient raw,
        final String id, final WhileHeld whileHeld) throws Exception
    {
        admin.createTopics(List.of(new NewTopic(id, 1, (short)1))).all().get();
        final InitProducerIdResponseData init = init(raw, id);
        assertEquals("NONE", produceError(raw.exchange(ApiKeys.PRODUCE, (short)12,
            produceRequest(id, id, 0, init.producerId(), init.producerEpoch(), 0)), (short)12), "the first transaction's produce");
        final PartitionLog log = broker.broker.topics().topic(id).partitions[0].log;
        assertTrue(log.config().fsyncDurability, "fsync durability");
        synchronized (FlushLock.of(log)) // no fsync of the partition completes while held: the marker is not answered
        {
            final EndTxnResponseData ended = new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, (short)5,
                new EndTxnRequestData().setTransactionalId(id).setProducerId(init.producerId()).setProducerEpoch(init.producerEpoch())
                    .setCommitted(true))), (short)5);
            assertEquals(0, ended.errorCode());
            assertEquals(init.producerEpoch() + 1, ended.producerEpoch(), "EndTxn v5 bumps the epoch");
            assertEquals(TransactionState.PREPARE_COMMIT, admin.describeTransactions(List.of(id)).description(id).get().state());
            return whileHeld.run(ended.producerId(), ended.producerEpoch());
        }
    }

    /** One transaction of {@code raw-V} on topic {@code vV} (4 partitions), each case's produce error. */
    private static String row(final Admin admin, final RawClient raw, final short version) throws Exception
    {
        final String topic = "v" + version;
        final String id = "raw-" + version;
        admin.createTopics(List.of(new NewTopic(topic, 4, (short)1))).all().get();
        final InitProducerIdResponseData init = new InitProducerIdResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.INIT_PRODUCER_ID, (short)4, new InitProducerIdRequestData().setTransactionalId(id).setTransactionTimeoutMs(60_000)
                .setProducerId(-1).setProducerEpoch((short)-1))), (short)4);
        assertEquals(0, init.errorCode());
        final long pid = init.producerId();
        final short epoch = init.producerEpoch();
        final AddPartitionsToTxnRequestData add = new AddPartitionsToTxnRequestData().setV3AndBelowTransactionalId(id)
            .setV3AndBelowProducerId(pid).setV3AndBelowProducerEpoch(epoch);
        add.v3AndBelowTopics().add(new AddPartitionsToTxnRequestData.AddPartitionsToTxnTopic().setName(topic).setPartitions(List.of(0)));
        final AddPartitionsToTxnResponseData added = new AddPartitionsToTxnResponseData(new ByteBufferAccessor(raw.exchange(
            ApiKeys.ADD_PARTITIONS_TO_TXN, (short)3, add)), (short)3);
        assertEquals(0, added.resultsByTopicV3AndBelow().iterator().next().resultsByPartition().iterator().next().partitionErrorCode());

        final StringBuilder row = new StringBuilder("v" + version);
        row.append(' ').append(produce(raw, version, id, topic, 0, pid, epoch, 0));
        row.append(' ').append(produce(raw, version, id, topic, 1, pid, epoch, 0));
        row.append(' ').append(produce(raw, version, id, topic, 2, pid, (short)(epoch + 1), 0));
        row.append(' ').append(produce(raw, version, "nobody-" + version, topic, 3, pid, epoch, 0));

        final EndTxnResponseData ended = new EndTxnResponseData(new ByteBufferAccessor(raw.exchange(ApiKeys.END_TXN, (short)3,
            new EndTxnRequestData().setTransactionalId(id).setProducerId(pid).setProducerEpoch(epoch).setCommitted(true))), (short)3);
        assertEquals(0, ended.errorCode());
        await(() -> admin.describeTransactions(List.of(id)).description(id).get().state() == TransactionState.COMPLETE_COMMIT,
            Duration.ofSeconds(20), id + " CompleteCommit (its markers written)");
        // the same epoch (transaction version 1's EndTxn bumps none), the next sequence: a late write of the ended transaction
        row.append(' ').append(produce(raw, version, id, topic, 0, pid, epoch, 1));
        return row.toString();
    }

    private static String produce(final RawClient raw, final short version, final String transactionalId, final String topic,
        final int partition, final long pid, final short epoch, final int sequence) throws IOException
    {
        return produceError(raw.exchange(ApiKeys.PRODUCE, version, produceRequest(transactionalId, topic, partition, pid, epoch,
            sequence)), version);
    }

    /** A produce of one transactional batch of one record, {@code acks=-1}. */
    static ProduceRequestData produceRequest(final String transactionalId, final String topic, final int partition, final long pid,
        final short epoch, final int sequence)
    {
        final MemoryRecords records = MemoryRecords.withTransactionalRecords(Compression.NONE, pid, epoch, sequence,
            new SimpleRecord(("r" + sequence).getBytes(StandardCharsets.UTF_8)));
        final ProduceRequestData request = new ProduceRequestData().setTransactionalId(transactionalId).setAcks((short)-1)
            .setTimeoutMs(30_000);
        request.topicData().add(new ProduceRequestData.TopicProduceData().setName(topic).setPartitionData(new ArrayList<>(List.of(
            new ProduceRequestData.PartitionProduceData().setIndex(partition).setRecords(records)))));
        return request;
    }

    /** The error of a produce response's first partition. */
    static String produceError(final ByteBuffer body, final short version)
    {
        final ProduceResponseData response = new ProduceResponseData(new ByteBufferAccessor(body), version);
        return Errors.forCode(response.responses().iterator().next().partitionResponses().get(0).errorCode()).name();
    }
}
