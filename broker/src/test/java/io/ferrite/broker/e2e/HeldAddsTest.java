package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorAgent;
import io.ferrite.log.PartitionLog;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.common.message.AddOffsetsToTxnRequestData;
import org.apache.kafka.common.message.AddOffsetsToTxnResponseData;
import org.apache.kafka.common.message.AddPartitionsToTxnRequestData;
import org.apache.kafka.common.message.AddPartitionsToTxnResponseData;
import org.apache.kafka.common.message.EndTxnRequestData;
import org.apache.kafka.common.message.EndTxnResponseData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.message.TxnOffsetCommitResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transaction version 1 client's adds right after its EndTxn (answered once PrepareCommit is written,
 * while the markers are still being written): AddPartitionsToTxn v3 and AddOffsetsToTxn v3 meet
 * CONCURRENT_TRANSACTIONS, which Kafka 4.4 answers at once (the client retries after 20 ms). Ferrite
 * holds them on the coordinators' agent until {@code add.partitions.to.txn.retry.backoff.max.ms}, as it
 * holds a produce v12's add: once CompleteCommit is written they are answered NONE; if the bound comes
 * first, CONCURRENT_TRANSACTIONS, Kafka's answer. A TxnOffsetCommit v5's add is not held: answered at once, as
 * Kafka 4.4 answers it. The commit marker's fsync is held back (fsync durability, {@link FlushLock}) so the
 * transaction is certainly still PrepareCommit when the add asks.
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

    /** Sends {@code request} and waits until it is answered or waits on the coordinators' agent; returns its correlation id. */
    private static int sendHeld(final RunningBroker broker, final RawClient raw, final ApiKeys api, final ApiMessage request)
        throws Exception
    {
        final int id = raw.send(api, (short)3, request);
        final CoordinatorAgent agent = broker.broker.groups().agent();
        await(() -> raw.answered() || agent.call(broker.broker.groups(), (g, nowMs) -> agent.waiting()).get() > 0,
            Duration.ofSeconds(20), "the add answered, or waiting on the coordinators' agent");
        return id;
    }

    @Test
    void aClientsAddRightAfterItsCommitWaitsForTheCommitToComplete() throws Exception
    {
        for (final ApiKeys api : List.of(ApiKeys.ADD_PARTITIONS_TO_TXN, ApiKeys.ADD_OFFSETS_TO_TXN))
        {
            final String id = "held-" + api.id;
            try (RunningBroker broker = new RunningBroker(dir.resolve(id), Map.of("ferrite.log.durability", "fsync",
                "add.partitions.to.txn.retry.backoff.max.ms", "600000")); Admin admin = broker.admin();
                RawClient raw = new RawClient(broker.broker.address().getPort()))
            {
                final int[] sent = new int[1];
                commitHoldingTheMarkersFsync(broker, admin, raw, id, (pid, epoch) ->
                {
                    sent[0] = sendHeld(broker, raw, api, api == ApiKeys.ADD_OFFSETS_TO_TXN ? addOffsets(id, pid, epoch) :
                        addPartition(id, pid, epoch));
                    return List.of();
                });
                assertEquals("NONE", error(api, raw.receive(api, (short)3, sent[0])), api + " held until CompleteCommit");
                assertEquals(TransactionState.ONGOING, admin.describeTransactions(List.of(id)).description(id).get().state(),
                    "the next transaction");
            }
        }
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

    /** The same adds when the bound ({@code add.partitions.to.txn.retry.backoff.max.ms}, 100 ms by default) ends first: Kafka's answer. */
    @Test
    void anAddStillMeetingTheEndingTransactionAfterTheBoundIsAnsweredAsKafkaAnswersIt() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of("ferrite.log.durability", "fsync")); Admin admin = broker.admin();
             RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            final List<String> answers = commitHoldingTheMarkersFsync(broker, admin, raw, "ending", (pid, epoch) ->
            {
                final List<String> each = new ArrayList<>();
                each.add(error(ApiKeys.ADD_PARTITIONS_TO_TXN, raw.exchange(ApiKeys.ADD_PARTITIONS_TO_TXN, (short)3,
                    addPartition("ending", pid, epoch))));
                each.add(error(ApiKeys.ADD_OFFSETS_TO_TXN, raw.exchange(ApiKeys.ADD_OFFSETS_TO_TXN, (short)3,
                    addOffsets("ending", pid, epoch))));
                return each;
            });
            assertEquals(List.of("CONCURRENT_TRANSACTIONS", "CONCURRENT_TRANSACTIONS"), answers);
        }
    }
}
