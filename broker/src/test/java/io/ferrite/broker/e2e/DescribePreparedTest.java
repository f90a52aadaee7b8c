package io.ferrite.broker.e2e;

import io.ferrite.broker.coordinator.CoordinatorTopic;
import io.ferrite.broker.topic.Partition;
import io.ferrite.broker.topic.Topic;
import io.ferrite.broker.txn.TxnCoordinator;
import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * DescribeTransactions of a transaction in PrepareCommit lists, as Kafka 4.4's coordinator does (each partition
 * leaves the transaction's {@code topicPartitions} once its marker is written), only the partitions still without
 * their marker. The transaction is held in PrepareCommit by holding the log thread of one of its partitions (not the
 * one of its {@code __transaction_state} partition): that partition's marker waits, the other's is written.
 */
class DescribePreparedTest
{
    private static final String TOPIC = "prepared";
    private static final String ID = "held-in-prepare";

    @TempDir
    Path dir;

    private static TransactionDescription describe(final Admin admin) throws Exception
    {
        return admin.describeTransactions(List.of(ID)).description(ID).get();
    }

    @Test
    void prepareCommitListsOnlyThePartitionsStillWithoutTheirMarker() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.admin();
            KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, ID)))
        {
            admin.createTopics(List.of(new NewTopic(TOPIC, 4, (short)1))).all().get();
            producer.initTransactions();
            final Topic state = broker.broker.topics().topic(TxnCoordinator.TOPIC);
            final int stateOwner = state.partition(CoordinatorTopic.partitionFor(ID, state.partitions.length)).owner;
            final Partition[] partitions = broker.broker.topics().topic(TOPIC).partitions;
            Partition written = null;
            Partition held = null;
            for (final Partition p : partitions)
            {
                if (p.owner == stateOwner && written == null)
                {
                    written = p;
                }
                else if (p.owner != stateOwner && held == null)
                {
                    held = p;
                }
            }
            assertNotEquals(null, written, "a partition on the __transaction_state partition's log thread");
            assertNotEquals(null, held, "a partition on another log thread");
            final TopicPartition writtenTp = new TopicPartition(TOPIC, written.index);
            final TopicPartition heldTp = new TopicPartition(TOPIC, held.index);

            producer.beginTransaction();
            for (final TopicPartition tp : List.of(writtenTp, heldTp))
            {
                producer.send(new ProducerRecord<>(TOPIC, tp.partition(), null, "r".getBytes(StandardCharsets.UTF_8))).get();
            }
            assertEquals(Set.of(writtenTp, heldTp), describe(admin).topicPartitions());

            final CountDownLatch release = new CountDownLatch(1);
            try
            {
                broker.holdLogThread(held.owner, release);
                producer.commitTransaction(); // answered once PrepareCommit is written
                final TransactionDescription prepared = Await.awaitValue(() -> describe(admin),
                    d -> d.state() == TransactionState.PREPARE_COMMIT && d.topicPartitions().equals(Set.of(heldTp)),
                    Duration.ofSeconds(30), "PrepareCommit listing only the partition whose marker is held");
                assertEquals(Set.of(heldTp), prepared.topicPartitions());
            }
            finally
            {
                release.countDown();
            }
            final TransactionDescription complete = Await.awaitValue(() -> describe(admin),
                d -> d.state() == TransactionState.COMPLETE_COMMIT, Duration.ofSeconds(30), "CompleteCommit once the held marker is written");
            assertEquals(Set.of(), complete.topicPartitions());
        }
    }
}
