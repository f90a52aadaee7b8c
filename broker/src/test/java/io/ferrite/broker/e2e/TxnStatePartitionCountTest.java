package io.ferrite.broker.e2e;

import io.ferrite.broker.config.BrokerConfig;
import io.ferrite.broker.coordinator.CoordinatorTopic;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.IsolationLevel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * One node: {@code __transaction_state} made with {@code transaction.state.log.num.partitions=3}, the broker restarted
 * with 7. As Kafka 4.4 (its transaction coordinator takes the existing topic's count at start), the topic keeps its 3
 * partitions and a transactional id stays where 3 places it: transactions of ids that 3 and 7 place apart still
 * commit after the restart, and the topic is not grown.
 */
final class TxnStatePartitionCountTest
{
    private static final String TOPIC = "counted";
    private static final String TXN_STATE = "__transaction_state";

    @TempDir
    Path dir;

    @Test
    void transactionsCommitAfterARestartWithAnotherPartitionCountSetting() throws Exception
    {
        final List<String> ids = new ArrayList<>();
        for (int i = 0; ids.size() < 3; i++)
        {
            final String id = "count-txn-" + i;
            if (CoordinatorTopic.partitionFor(id, 3) != CoordinatorTopic.partitionFor(id, 7))
            {
                ids.add(id);
            }
        }
        for (final String id : ids)
        {
            assertNotEquals(CoordinatorTopic.partitionFor(id, 3), CoordinatorTopic.partitionFor(id, 7), id);
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS, "3")))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            commitOneEach(broker, ids, "before");
            assertEquals(3, partitions(broker), TXN_STATE + "'s partitions");
        }
        try (RunningBroker broker = new RunningBroker(dir, Map.of(BrokerConfig.TRANSACTION_STATE_LOG_NUM_PARTITIONS, "7")))
        {
            commitOneEach(broker, ids, "after");
            assertEquals(3, partitions(broker), TXN_STATE + "'s partitions after the restart with 7");
            final int expected = 2 * ids.size();
            final List<String> read = new ArrayList<>();
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                IsolationLevel.READ_COMMITTED.toString().toLowerCase(java.util.Locale.ROOT))))
            {
                consumer.assign(List.of(new org.apache.kafka.common.TopicPartition(TOPIC, 0)));
                await(() ->
                {
                    consumer.poll(Duration.ofMillis(200)).forEach(r -> read.add(new String(r.value(), StandardCharsets.UTF_8)));
                    return read.size() >= expected;
                }, Duration.ofSeconds(60), () -> "the committed records: " + read);
            }
            assertEquals(expected, read.size(), "records read committed: " + read);
        }
    }

    /** A transaction of one record per id, committed (initTransactions finds the id's coordinator). */
    private static void commitOneEach(final RunningBroker broker, final List<String> ids, final String round)
    {
        for (final String id : ids)
        {
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG, id,
                ProducerConfig.MAX_BLOCK_MS_CONFIG, 30_000)))
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, null, (round + "-" + id).getBytes(StandardCharsets.UTF_8)));
                producer.commitTransaction();
            }
        }
    }

    private static int partitions(final RunningBroker broker) throws Exception
    {
        try (Admin admin = broker.admin())
        {
            final TopicDescription d = admin.describeTopics(List.of(TXN_STATE)).allTopicNames().get(30, TimeUnit.SECONDS).get(TXN_STATE);
            return d.partitions().size();
        }
    }
}
