package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * OffsetForLeaderEpoch answered from the partition's leader-epoch cache, with the answers a fresh
 * Kafka 4.4 node gives for the same requests (checked by hand against one: its partition at epoch 0
 * after creation), and a real consumer validating a position it was given with leader epoch 0.
 */
class OffsetForLeaderEpochTest
{
    @TempDir
    Path dir;

    @Test
    void answersAsKafkasLeaderAndAConsumerValidatesItsPosition() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); RawClient raw = new RawClient(broker.broker.address().getPort()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic("epochs", 1, (short)1))).all().get(20, TimeUnit.SECONDS);
            }
            // no batch yet: epoch 0 (the partition's, as a new Kafka leader assigned it at the log end) ends at 0
            assertAnswer(raw, 0, 0, Errors.NONE, 0, 0);
            assertAnswer(raw, 1, 0, Errors.NONE, -1, -1);
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of()))
            {
                for (int i = 0; i < 5; i++)
                {
                    producer.send(new ProducerRecord<>("epochs", 0, null, new byte[] {(byte)i})).get(20, TimeUnit.SECONDS);
                }
            }
            assertAnswer(raw, 0, 0, Errors.NONE, 0, 5);     // the latest epoch: the log end
            assertAnswer(raw, 0, -1, Errors.NONE, 0, 5);    // no current epoch given
            assertAnswer(raw, 1, 0, Errors.NONE, -1, -1);   // above the latest: unknown
            assertAnswer(raw, -1, 0, Errors.NONE, -1, -1);  // UNDEFINED_EPOCH asked
            assertAnswer(raw, 0, 1, Errors.UNKNOWN_LEADER_EPOCH, -1, -1); // a newer leader than this node's

            // a consumer given a position with leader epoch 0 validates it (OffsetForLeaderEpoch) and reads on from it
            try (KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of("auto.offset.reset", "none")))
            {
                final TopicPartition tp = new TopicPartition("epochs", 0);
                consumer.assign(List.of(tp));
                consumer.seek(tp, new OffsetAndMetadata(3, Optional.of(0), ""));
                int read = 0;
                long first = -1;
                final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (read < 2 && System.nanoTime() < deadline)
                {
                    final ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
                    if (first < 0 && !records.isEmpty())
                    {
                        first = records.iterator().next().offset();
                    }
                    read += records.count();
                }
                assertEquals(3, first);
                assertEquals(2, read);
                assertTrue(consumer.position(tp) == 5);
            }
        }
    }

    private static void assertAnswer(final RawClient raw, final int epoch, final int currentEpoch, final Errors error,
        final int answeredEpoch, final long endOffset) throws Exception
    {
        final OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection topics =
            new OffsetForLeaderEpochRequestData.OffsetForLeaderTopicCollection();
        topics.add(new OffsetForLeaderEpochRequestData.OffsetForLeaderTopic().setTopic("epochs").setPartitions(List.of(
            new OffsetForLeaderEpochRequestData.OffsetForLeaderPartition().setPartition(0).setLeaderEpoch(epoch)
                .setCurrentLeaderEpoch(currentEpoch))));
        final short v = 4;
        final OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData(new ByteBufferAccessor(
            raw.exchange(ApiKeys.OFFSET_FOR_LEADER_EPOCH, v, new OffsetForLeaderEpochRequestData().setReplicaId(-1).setTopics(topics))), v);
        final OffsetForLeaderEpochResponseData.EpochEndOffset answer = response.topics().iterator().next().partitions().get(0);
        final String what = "epoch " + epoch + " current " + currentEpoch + ": " + answer;
        assertEquals(error.code(), answer.errorCode(), what);
        assertEquals(answeredEpoch, answer.leaderEpoch(), what);
        assertEquals(endOffset, answer.endOffset(), what);
    }
}
