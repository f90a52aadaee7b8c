package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Collection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions with kafka-clients 4.4's producer, consumer and Admin against the transaction
 * coordinator: commit, abort, commit — a read_committed consumer sees exactly the committed records,
 * a read_uncommitted one all of them; a second producer with the same transactional id fences the
 * first, whose commit then fails as against Kafka, and whose next send fails with an old epoch;
 * Admin describes and lists the transactions. The clients speak transaction version 2 (Ferrite
 * finalizes it, as Kafka 4.4 does): produce v12+ adds each partition, EndTxn v5 bumps the epoch.
 */
class TransactionsTest
{
    private static final String TOPIC = "fills";
    private static final List<TopicPartition> PARTITIONS = List.of(new TopicPartition(TOPIC, 0), new TopicPartition(TOPIC, 1));

    @TempDir
    Path dir;

    private static KafkaProducer<byte[], byte[]> transactional(final RunningBroker broker, final String id)
    {
        return broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id, ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true,
            ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000));
    }

    private static ProducerRecord<byte[], byte[]> record(final int partition, final String value)
    {
        return new ProducerRecord<>(TOPIC, partition, null, value.getBytes(StandardCharsets.UTF_8));
    }


    @Test
    void commitAbortCommitIsReadAsCommittedUnderReadCommitted() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            try (KafkaProducer<byte[], byte[]> producer = transactional(broker, "desk-1"))
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(record(0, "c1"));
                producer.send(record(1, "c2"));
                producer.commitTransaction();

                producer.beginTransaction();
                producer.send(record(0, "a1"));
                producer.send(record(1, "a2"));
                producer.flush();
                producer.abortTransaction();

                producer.beginTransaction();
                producer.send(record(1, "c3"));
                producer.commitTransaction();

                // Complete* is written once the markers are: after commitTransaction returned
                final TransactionDescription[] d = new TransactionDescription[1];
                await(() ->
                {
                    d[0] = admin.describeTransactions(List.of("desk-1")).description("desk-1").get();
                    return d[0].state() == TransactionState.COMPLETE_COMMIT;
                }, Duration.ofSeconds(20), "desk-1 CompleteCommit");
                // transaction version 2: every EndTxn (v5) bumped the epoch InitProducerId gave (0)
                assertEquals(3, d[0].producerEpoch(), d[0].toString());
                final Collection<TransactionListing> listed = admin.listTransactions().all().get();
                assertEquals(1, listed.size(), listed.toString());
            }
            assertEquals(new TreeSet<>(List.of("c1", "c2", "c3")), new TreeSet<>(IsolatedReads.readAll(broker, PARTITIONS, IsolationLevel.READ_COMMITTED, 3)));
            assertEquals(new TreeSet<>(List.of("c1", "c2", "a1", "a2", "c3")), new TreeSet<>(IsolatedReads.readAll(broker, PARTITIONS, IsolationLevel.READ_UNCOMMITTED, 5)));
        }
    }

    @Test
    void aSecondProducerWithTheSameIdFencesTheFirst() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            try (KafkaProducer<byte[], byte[]> zombie = transactional(broker, "desk-2");
                 KafkaProducer<byte[], byte[]> successor = transactional(broker, "desk-2"))
            {
                zombie.initTransactions();
                zombie.beginTransaction();
                zombie.send(record(0, "zombie")).get();
                successor.initTransactions(); // fences the zombie and aborts its open transaction
                successor.beginTransaction();
                successor.send(record(0, "successor"));
                successor.commitTransaction();
                final KafkaException failed = assertThrows(KafkaException.class, zombie::commitTransaction);
                assertTrue(failed instanceof ProducerFencedException || failed.getCause() instanceof ProducerFencedException,
                    "fenced: " + failed);
            }
            assertEquals(new TreeSet<>(List.of("successor")), new TreeSet<>(IsolatedReads.readAll(broker, PARTITIONS, IsolationLevel.READ_COMMITTED, 1)));
        }
    }

    @Test
    void aFencedProducersNextSendFailsWithAnOldEpochAndItsCommitFencedAsAgainstKafka() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin())
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get();
            try (KafkaProducer<byte[], byte[]> zombie = transactional(broker, "desk-3");
                 KafkaProducer<byte[], byte[]> successor = transactional(broker, "desk-3"))
            {
                zombie.initTransactions();
                zombie.beginTransaction();
                zombie.send(record(0, "zombie")).get();
                successor.initTransactions(); // its fence aborts the zombie's transaction: the abort marker's epoch is above the zombie's
                // Kafka 4.4 (transaction version 2) answers exactly these: the partition refuses the old epoch
                final ExecutionException late = assertThrows(ExecutionException.class, () -> zombie.send(record(0, "late")).get());
                assertInstanceOf(InvalidProducerEpochException.class, late.getCause(), late.toString());
                assertThrows(InvalidProducerEpochException.class, zombie::commitTransaction);
                successor.beginTransaction();
                successor.send(record(1, "successor"));
                successor.commitTransaction();
            }
            assertEquals(List.of("successor"), IsolatedReads.readAll(broker, PARTITIONS, IsolationLevel.READ_COMMITTED, 1));
        }
    }
}
