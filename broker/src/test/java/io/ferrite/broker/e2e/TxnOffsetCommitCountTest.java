package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.management.MBeanServer;
import javax.management.ObjectName;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;

/**
 * Review metrics-review1 L1: TxnOffsetCommit's offsets are counted in {@code offset-commit-count}, as Kafka 4.4's
 * {@code commitTransactionalOffset} counts them (at the request: an aborted transaction's offsets too). A kafka-clients
 * transactional producer sends 2 offsets in a committed transaction and 1 in an aborted one: the count is 3.
 */
class TxnOffsetCommitCountTest
{
    private static final String TOPIC = "counted";
    private static final Duration DEADLINE = Duration.ofSeconds(60);
    private static final MBeanServer JMX = ManagementFactory.getPlatformMBeanServer();

    @TempDir
    Path dir;

    @Test
    void transactionalOffsetsAreCountedAsCommitsCommittedOrAborted() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 2, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                "counting-txn")))
            {
                producer.initTransactions();
                producer.beginTransaction();
                producer.send(new ProducerRecord<>(TOPIC, 0, null, new byte[] {1})).get(30, TimeUnit.SECONDS);
                producer.sendOffsetsToTransaction(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(1),
                    new TopicPartition(TOPIC, 1), new OffsetAndMetadata(0)), new ConsumerGroupMetadata("counting"));
                producer.commitTransaction();
                producer.beginTransaction();
                producer.sendOffsetsToTransaction(Map.of(new TopicPartition(TOPIC, 0), new OffsetAndMetadata(1)),
                    new ConsumerGroupMetadata("counting"));
                producer.abortTransaction();
            }
            final ObjectName coordinator = new ObjectName("kafka.server:type=group-coordinator-metrics");
            final Object[] seen = {null};
            await(() ->
            {
                seen[0] = JMX.isRegistered(coordinator) ? JMX.getAttribute(coordinator, "offset-commit-count") : "(not registered)";
                return Double.valueOf(3.0).equals(seen[0]);
            }, DEADLINE, () -> "offset-commit-count == 3.0, was " + seen[0]);
        }
    }
}
