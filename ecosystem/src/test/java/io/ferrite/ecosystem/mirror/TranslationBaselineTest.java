package io.ferrite.ecosystem.mirror;

import io.ferrite.testing.BrokerNode;

import io.ferrite.testing.Await;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.connect.mirror.MirrorMaker;
import org.apache.kafka.connect.mirror.OffsetSync;
import org.apache.kafka.connect.mirror.RemoteClusterUtils;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The offset translation of Kafka -> Ferrite against its baseline, Kafka -> Kafka, in one controlled run:
 * one Kafka 4.4 source, its topic and consumer group mirrored by one MirrorMaker at once to two targets, a
 * Ferrite and a second Kafka 4.4. MirrorMaker runs first; the records are produced while it mirrors, and the
 * group consumes and commits as they come until it stops at {@link #COMMITTED} of {@link #RECORDS}.
 * Each translation must be one its own offset syncs allow (at most the group's offset: one past a sync at or
 * before it), every sync must pair equal offsets (the remote topic keeps the source's offsets), and the
 * checkpoint history of each target is printed beside its syncs and the times they were written, for the
 * comparison (ecosystem/README.md). A third broker and a live producer make it the longer test: {@code -Plong}.
 */
@EnabledIfSystemProperty(named = "ferrite.mirror.baseline", matches = "true", disabledReason = "a third broker: -Plong or -Dferrite.mirror.baseline=true")
class TranslationBaselineTest
{
    private static final int RECORDS = 1000;
    private static final long COMMITTED = 500;
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final String TOPIC = "events";
    private static final String GROUP = "events-app";

    @TempDir
    Path dir;

    @Test
    void kafkaToFerriteTranslatesAsKafkaToKafka() throws Exception
    {
        try (BrokerNode kafka = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka", dir.resolve("kafka"));
            BrokerNode ferrite = BrokerNode.spawn(BrokerNode.Kind.FERRITE, "ferrite", dir.resolve("ferrite"));
            BrokerNode kafka2 = BrokerNode.spawn(BrokerNode.Kind.KAFKA, "kafka2", dir.resolve("kafka2")))
        {
            kafka.awaitReady();
            ferrite.awaitReady();
            kafka2.awaitReady();
            MirrorFlow.createTopic(kafka, TOPIC, 1);
            final MirrorFlow toFerrite = new MirrorFlow(kafka, ferrite, TOPIC);
            final MirrorFlow toKafka2 = new MirrorFlow(kafka, kafka2, TOPIC);
            final MirrorMaker mirrorMaker = new MirrorMaker(MirrorMakerTest.mirrorMakerConfig(toFerrite, toKafka2));
            mirrorMaker.start();
            try
            {
                for (final BrokerNode target : new BrokerNode[] {ferrite, kafka2})
                {
                    try (Admin admin = Admin.create(target.clientConfig()))
                    {
                        Await.await(() -> admin.listTopics().names().get().contains(toFerrite.remoteTopic()), DEADLINE,
                            toFerrite.remoteTopic() + " created on " + target.name);
                    }
                }
                produceWhileConsuming(kafka);
                final Map<String, Long> translated = new HashMap<>();
                for (final MirrorFlow flow : new MirrorFlow[] {toFerrite, toKafka2})
                {
                    translated.put(flow.target.name, translation(flow));
                }
                System.out.println("translated " + COMMITTED + ": " + translated);
            }
            finally
            {
                mirrorMaker.stop();
            }
        }
    }

    /** Produces {@link #RECORDS} in bursts of 50 while the group reads and commits after each poll, up to {@link #COMMITTED}. */
    private static void produceWhileConsuming(final BrokerNode kafka) throws Exception
    {
        final TopicPartition partition = new TopicPartition(TOPIC, 0);
        final Map<String, Object> consumerConfig = new HashMap<>(kafka.clientConfig());
        consumerConfig.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerConfig.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class);
        consumerConfig.put(ConsumerConfig.GROUP_ID_CONFIG, GROUP);
        consumerConfig.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        consumerConfig.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        consumerConfig.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 20);
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(MirrorFlow.producerConfig(kafka));
            KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(consumerConfig))
        {
            consumer.assign(List.of(partition));
            long committed = 0;
            final List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++)
            {
                sent.add(producer.send(new ProducerRecord<>(TOPIC, 0, null, ("record " + i).getBytes(StandardCharsets.UTF_8))));
                if (i % 50 == 49)
                {
                    producer.flush();
                    while (committed < Math.min(COMMITTED, i + 1))
                    {
                        final List<ConsumerRecord<byte[], byte[]>> read = consumer.poll(Duration.ofMillis(500)).records(partition);
                        if (!read.isEmpty())
                        {
                            committed = Math.min(COMMITTED, read.get(read.size() - 1).offset() + 1);
                            consumer.commitSync(Map.of(partition, new OffsetAndMetadata(committed)));
                            consumer.seek(partition, committed);
                        }
                    }
                }
            }
            for (final java.util.concurrent.Future<?> f : sent)
            {
                f.get();
            }
        }
    }

    /**
     * Waits until the sync of the last record is written and {@code flow}'s group has a checkpoint, checks that the
     * checkpoint is one MirrorMaker's syncs allow (at most the group's offset, one past a sync at or before it),
     * and prints the syncs and every checkpoint emitted.
     */
    private static long translation(final MirrorFlow flow)
    {
        final TopicPartition remote = new TopicPartition(flow.remoteTopic(), 0);
        final List<OffsetSync>[] syncs = new List[1];
        Await.await(() ->
        {
            syncs[0] = flow.offsetSyncs();
            return syncs[0].stream().anyMatch(s -> s.topicPartition().topic().equals(TOPIC) && s.upstreamOffset() == RECORDS - 1);
        }, DEADLINE, () -> "the offset sync of the last record for " + flow.target.name + ", saw " + syncs[0]);
        final OffsetAndMetadata[] seen = new OffsetAndMetadata[1];
        Await.await(() ->
        {
            seen[0] = RemoteClusterUtils.translateOffsets(flow.target.clientConfig(), flow.source.name, GROUP, Duration.ofSeconds(10)).get(remote);
            return seen[0] != null;
        }, DEADLINE, () -> flow.target.name + ": a checkpoint of " + GROUP);
        System.out.println(flow.source.name + " -> " + flow.target.name + ": checkpoints of " + GROUP + " " + flow.checkpointHistory() + ", offset syncs "
            + flow.offsetSyncTimeline());
        final long translated = seen[0].offset();
        assertTrue(translated <= COMMITTED, () -> flow.target.name + " translated past the group's offset: " + translated);
        boolean explained = false;
        for (final OffsetSync sync : syncs[0])
        {
            assertEquals(sync.upstreamOffset(), sync.downstreamOffset(), () -> "offset sync " + sync + " for " + flow.target.name);
            if (sync.topicPartition().topic().equals(TOPIC) && sync.upstreamOffset() <= COMMITTED)
            {
                explained |= translated == sync.downstreamOffset() + (sync.upstreamOffset() == COMMITTED ? 0 : 1);
            }
        }
        assertTrue(explained, () -> flow.target.name + ": " + translated + " is given by no offset sync of " + syncs[0]);
        return translated;
    }
}
