package io.ferrite.broker.e2e;

import io.ferrite.broker.Errors;
import io.ferrite.broker.api.TxnVerifier;
import io.ferrite.broker.e2e.ProxiedBroker.Open;
import io.ferrite.broker.replica.FetcherSettings;
import io.ferrite.broker.txn.NodeRequests;
import io.ferrite.broker.txn.RemoteVerifier;
import io.ferrite.log.PartitionLog;
import io.ferrite.testing.Await;
import io.ferrite.wire.message.ApiKeys;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A produce v12's add whose coordinator is on another node, answered CONCURRENT_TRANSACTIONS (the transaction's EndTxn
 * answered at PrepareCommit, its markers still being written), is asked again by the leader's {@link RemoteVerifier}
 * every {@code add.partitions.to.txn.retry.backoff.ms} until {@code add.partitions.to.txn.retry.backoff.max.ms} has
 * passed, as Kafka 4.4's {@code ReplicaManager} retries what its {@code AddPartitionsToTxnManager} answers; a
 * TxnOffsetCommit's add ({@link TxnVerifier#forOffsetCommits}) is answered at once, as Kafka retries only a produce's.
 * A real broker in fsync durability stands in for the coordinator's node; the commit marker's fsync is held back
 * ({@link FlushLock}) so that the transaction is certainly PrepareCommit while the questions are asked; the
 * AddPartitionsToTxn requests are counted by its request metrics (its kafka-clients producer, at transaction version 2,
 * sends none).
 */
class RemoteVerifierRetryTest
{
    private static final String TOPIC = "retried-adds";
    private static final String TXN_ID = "retried-adds-txn";

    @TempDir
    Path dir;

    @Test
    void aProducesAddMeetingTheEndOfTheLastTransactionIsAskedAgainUntilItCompletes() throws Exception
    {
        try (ProxiedBroker node = ProxiedBroker.start(dir, TOPIC, 2, Map.of("ferrite.log.durability", "fsync")))
        {
            final RemoteVerifier held = verifier(node, new RemoteVerifier.Retries(20, 600_000));
            final RemoteVerifier bounded = verifier(node, new RemoteVerifier.Retries(20, 300));
            final KafkaProducer<String, String> producer = node.producer(TXN_ID);
            producer.beginTransaction();
            producer.send(new ProducerRecord<>(TOPIC, 0, "k", "first")).get(30, TimeUnit.SECONDS);
            final PartitionLog log = node.broker.broker.topics().topic(TOPIC).partitions[0].log;
            assertTrue(log.config().fsyncDurability, "fsync durability");
            final TxnVerifier.Verification retried;
            synchronized (FlushLock.of(log)) // no fsync of partition 0 completes while held: its commit marker is not answered
            {
                producer.commitTransaction(); // EndTxn v5, answered once PrepareCommit is written; the epoch bumped
                final Open next = node.describe(TXN_ID);
                assertEquals(TransactionState.PREPARE_COMMIT, state(node));

                final long before = node.received(ApiKeys.ADD_PARTITIONS_TO_TXN);
                final TxnVerifier.Verification offsets = add(held.forOffsetCommits(), next);
                Await.await(offsets::done, Duration.ofSeconds(30), "a TxnOffsetCommit's add answered");
                assertEquals(Errors.CONCURRENT_TRANSACTIONS, offsets.error(0), "a TxnOffsetCommit's add: answered at once");
                assertEquals(1, node.received(ApiKeys.ADD_PARTITIONS_TO_TXN) - before, "asked once, never again");

                final long beforeBounded = node.received(ApiKeys.ADD_PARTITIONS_TO_TXN);
                final TxnVerifier.Verification ended = add(bounded, next);
                Await.await(ended::done, Duration.ofSeconds(30), "the retries' bound (300 ms)");
                assertEquals(Errors.CONCURRENT_TRANSACTIONS, ended.error(0), "the last answer once the retries end");
                Await.await(() -> node.received(ApiKeys.ADD_PARTITIONS_TO_TXN) - beforeBounded >= 2, Duration.ofSeconds(30),
                    "asked again before the bound (backoff 20 ms, bound 300 ms), not answered at the first answer (review L5)");
                assertEquals(TransactionState.PREPARE_COMMIT, state(node), "the transaction still ending meanwhile");

                final long asked = node.received(ApiKeys.ADD_PARTITIONS_TO_TXN);
                retried = add(held, next);
                Await.await(() -> node.received(ApiKeys.ADD_PARTITIONS_TO_TXN) - asked >= 3, Duration.ofSeconds(30),
                    "the add asked again while the transaction ends (before the fix: answered CONCURRENT_TRANSACTIONS at once)");
                assertFalse(retried.done(), "not answered while the transaction ends: " + (retried.done() ? retried.error(0) : -1));
                assertEquals(TransactionState.PREPARE_COMMIT, state(node), "the transaction still ending meanwhile");
            }
            Await.await(retried::done, Duration.ofSeconds(30), "the add answered once the commit completed");
            assertEquals(Errors.NONE, retried.error(0), "partition 1 added to the next transaction");
            final TransactionDescription d = node.admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS);
            assertEquals(TransactionState.ONGOING, d.state(), "the next transaction");
            assertEquals(Set.of(new TopicPartition(TOPIC, 1)), d.topicPartitions(), "with the partition the retried add added");
        }
    }

    private static TransactionState state(final ProxiedBroker node) throws Exception
    {
        return node.admin.describeTransactions(List.of(TXN_ID)).description(TXN_ID).get(30, TimeUnit.SECONDS).state();
    }

    /** A produce v12's add of partition 1 to {@code txn}'s transaction, asked of {@code verifier}. */
    private static TxnVerifier.Verification add(final TxnVerifier verifier, final Open txn)
    {
        return verifier.verify(txn.id(), txn.producerId(), txn.epoch(), new String[] {TOPIC}, new int[] {1}, 1, true, () -> { });
    }

    /** A verifier that asks {@code node} directly about every transactional id, retrying as {@code retries} says; closed with it. */
    private static RemoteVerifier verifier(final ProxiedBroker node, final RemoteVerifier.Retries retries)
    {
        final var coordinator = node.direct();
        return node.closing(new RemoteVerifier(ProxiedBroker.NOT_HERE, id -> coordinator, 1,
            new NodeRequests(FetcherSettings.KAFKA_DEFAULTS, "verify-retries-test", 64 * 1024), retries));
    }
}
