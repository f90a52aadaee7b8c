package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A small topic is served once its CreateTopics is answered: an offset commit to it right after the answer — kafka-clients'
 * Admin {@code alterConsumerGroupOffsets}, which does not retry UNKNOWN_TOPIC_OR_PARTITION, succeeds, as it does on Kafka
 * 4.4, whose broker has a committed topic within milliseconds. (The consumer's {@code commitSync} after it shows the offsets
 * are stored, not the window: kafka-clients retries its UNKNOWN_TOPIC_OR_PARTITION until the timeout, so it passes with the
 * window too.) Before,
 * the answer came once the creation was journaled and the files after it, and a commit in between failed (the default
 * build failed once in CI on it). The client as it is ({@link RunningBroker#plainAdmin}: no wait for the topic).
 */
class CreateThenCommitTest
{
    private static final int ROUNDS = 30; // before the fix a run failed at the first or second round; 200 cost the build 12-30 s

    @TempDir
    Path dir;

    @Test
    void offsetsCommittedRightAfterASmallTopicsCreationAreAccepted() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin();
             KafkaConsumer<byte[], byte[]> consumer = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "by-consumer",
                 "group.protocol", "classic")))
        {
            final Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
            for (int round = 0; round < ROUNDS; round++)
            {
                final String topic = "made-" + round;
                final int partitions = round == ROUNDS - 1 ? 100 : 1 + round % 3; // 1-3, the last a whole chunk
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short)1))).all().get(30, TimeUnit.SECONDS);
                final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (int p = 0; p < partitions; p++)
                {
                    offsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(round + p));
                }
                admin.alterConsumerGroupOffsets("by-admin", offsets).all().get(30, TimeUnit.SECONDS); // threw UnknownTopicOrPartition
                consumer.commitSync(offsets);
                committed.putAll(offsets);
            }
            assertEquals(committed, admin.listConsumerGroupOffsets("by-admin").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS));
            assertEquals(committed, admin.listConsumerGroupOffsets("by-consumer").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS));
        }
    }

    /**
     * One CreateTopics of two small topics over a chunk together (60 + 60 partitions), then at once an Admin commit to
     * both: served once answered (review of buildtime, M1, its probe: before, only requests whose unpublished topics came
     * to a chunk at most were made before the answer, and the commit failed).
     */
    @Test
    void offsetsCommittedRightAfterSeveralSmallTopicsOverAChunkAreAccepted() throws Exception
    {
        try (RunningBroker broker = new RunningBroker(dir, Map.of()); Admin admin = broker.plainAdmin())
        {
            admin.listConsumerGroupOffsets("by-admin").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS); // the coordinator found
            final Map<TopicPartition, OffsetAndMetadata> committed = new HashMap<>();
            for (int round = 0; round < 5; round++)
            {
                final List<String> names = List.of("in-" + round, "out-" + round);
                admin.createTopics(names.stream().map(n -> new NewTopic(n, 60, (short)1)).toList()).all().get(30, TimeUnit.SECONDS);
                final Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
                for (final String topic : names)
                {
                    for (int p = 0; p < 60; p++)
                    {
                        offsets.put(new TopicPartition(topic, p), new OffsetAndMetadata(round + p));
                    }
                }
                admin.alterConsumerGroupOffsets("by-admin", offsets).all().get(30, TimeUnit.SECONDS); // threw UnknownTopicOrPartition
                committed.putAll(offsets);
            }
            assertEquals(committed, admin.listConsumerGroupOffsets("by-admin").partitionsToOffsetAndMetadata().get(30, TimeUnit.SECONDS));
        }
    }
}
