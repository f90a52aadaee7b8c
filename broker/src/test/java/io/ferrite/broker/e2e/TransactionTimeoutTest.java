package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidTxnStateException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.ferrite.testing.Await.awaitValue;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code transaction.timeout.ms} expiry: a transactional producer that begins, writes and stalls holds
 * the last stable offset back until the coordinator's timeout sweep (every 10 s by default, every
 * 500 ms here: {@code transaction.abort.timed.out.transaction.cleanup.interval.ms}) aborts its
 * transaction with a bumped epoch; then the LSO reaches the log end, a read_committed consumer reads
 * what another producer committed after the stalled write, and the stalled producer is a zombie: as
 * against Kafka 4.4 with transaction version 2 (what it and Ferrite finalize; checked on a Kafka 4.4
 * node), its commit fails InvalidTxnStateException (EndTxn v5 with the epoch before the bump is taken
 * for a retry, of an abort, by a commit). At transaction version 1 it failed ProducerFencedException.
 * The stall is not waited out: the coordinators' clock is stepped past the timeout once the checks made
 * while the transaction is open are done ({@link SteppedClock}).
 */
class TransactionTimeoutTest
{
    private static final String TOPIC = "quotes";
    private static final TopicPartition TP = new TopicPartition(TOPIC, 0);
    /**
     * The stalled producer's transaction.timeout.ms: the checks between its write and the LSO's (a describe, the other
     * producer's transaction, a ListOffsets) must come before the sweep aborts it, on a loaded machine too — in real
     * time, since the clock is stepped past it only after them.
     */
    private static final int STALL_MS = 60_000;

    @TempDir
    Path dir;

    private static KafkaProducer<byte[], byte[]> transactional(final RunningBroker broker, final String id, final int timeoutMs)
    {
        return broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
            ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, timeoutMs, ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000));
    }

    private static ProducerRecord<byte[], byte[]> record(final String value)
    {
        return new ProducerRecord<>(TOPIC, 0, null, value.getBytes(StandardCharsets.UTF_8));
    }

    private static long latest(final Admin admin, final IsolationLevel isolation) throws Exception
    {
        return admin.listOffsets(Map.of(TP, OffsetSpec.latest()), new ListOffsetsOptions(isolation)).partitionResult(TP).get().offset();
    }

    @Test
    void aStalledTransactionIsAbortedAtItsTimeoutAndTheLastStableOffsetMovesOn() throws Exception
    {
        // the sweep every 500 ms instead of Kafka's 10 s: the abort comes at the first sweep after the clock is stepped
        // past STALL_MS, which leaves the checks before it (describe, the other producer's commit, the LSO) time on a loaded machine
        final SteppedClock clock = new SteppedClock();
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.TRANSACTION_ABORT_TIMED_OUT_INTERVAL_MS, "500"), clock);
             Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get();
            try (KafkaProducer<byte[], byte[]> stalled = transactional(broker, "stalled", STALL_MS);
                 KafkaProducer<byte[], byte[]> other = transactional(broker, "other", 60_000))
            {
                stalled.initTransactions();
                other.initTransactions(); // before the stalled write: out of the time its timeout leaves the checks
                stalled.beginTransaction();
                assertEquals(0, stalled.send(record("stalled")).get().offset());
                final TransactionDescription ongoing = admin.describeTransactions(List.of("stalled")).description("stalled").get();
                assertEquals(TransactionState.ONGOING, ongoing.state());

                other.beginTransaction();
                other.send(record("after"));
                other.commitTransaction();
                // committed after the stalled write, so held back behind it while it is open
                assertEquals(0, latest(admin, IsolationLevel.READ_COMMITTED), "the LSO at the stalled transaction's first offset");
                assertEquals(TransactionState.ONGOING, admin.describeTransactions(List.of("stalled")).description("stalled").get().state(),
                    "still open before its timeout");

                clock.step(Duration.ofMillis(STALL_MS + 1));

                final TransactionDescription aborted = awaitValue(
                    () -> admin.describeTransactions(List.of("stalled")).description("stalled").get(),
                    d -> d.state() == TransactionState.COMPLETE_ABORT, Duration.ofMillis(STALL_MS / 2), // less than the stall: the step does it
                    "the timeout sweep aborts the stalled transaction");
                assertEquals(ongoing.producerId(), aborted.producerId());
                assertEquals(ongoing.producerEpoch() + 1, aborted.producerEpoch(), "aborted with the epoch bumped (fencing the producer)");
                assertTrue(aborted.topicPartitions().isEmpty(), aborted.toString());

                // record 0 stalled, 1 after, 2 other's commit marker, 3 the timeout's abort marker
                final long end = latest(admin, IsolationLevel.READ_UNCOMMITTED);
                assertEquals(4, end);
                awaitValue(() -> latest(admin, IsolationLevel.READ_COMMITTED), lso -> lso == end, Duration.ofSeconds(30),
                    "the LSO at the log end once the abort marker is written");
                assertEquals(List.of("after"), IsolatedReads.readAll(broker, List.of(TP), IsolationLevel.READ_COMMITTED, 1));

                // Kafka 4.4 (transaction.version 2) throws exactly this
                assertThrows(InvalidTxnStateException.class, stalled::commitTransaction);
                assertEquals(TransactionState.COMPLETE_ABORT,
                    admin.describeTransactions(List.of("stalled")).description("stalled").get().state(), "the failed commit changed nothing");
            }
        }
    }
}
