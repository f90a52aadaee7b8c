package io.ferrite.broker.e2e;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A partition whose log carries a leader epoch above 0, as a Kafka that was ever restarted leaves it (issue 19: a
 * single-node KRaft restart bumps the epoch): batches 0-4 in epoch 0, 5-9 in epoch 5, and the
 * {@code leader-epoch-checkpoint} as Kafka writes it. A kafka-clients consumer commits with the epoch of the records
 * it read (5); the next consumer of the group waits for Metadata at least that new, so it resumes only if the
 * partition is answered in the log's epoch, not 0. The answers that report the epoch (ListOffsets) and the epoch
 * stamped on a new batch are the log's too, and the checkpoint gets no new entry for it.
 */
class MigratedLeaderEpochTest
{
    private static final String TOPIC = "moved";
    private static final int RECORDS = 10;
    private static final int EPOCH_FROM = 5;
    private static final int EPOCH = 5;
    private static final String CHECKPOINT = "0\n2\n0 0\n" + EPOCH + " " + EPOCH_FROM + "\n";
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @TempDir
    Path dir;

    @Test
    void aGroupCommittedInTheLogsEpochResumes() throws Exception
    {
        final List<Long> timestamps = new ArrayList<>();
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (Admin admin = broker.admin())
            {
                admin.createTopics(List.of(new NewTopic(TOPIC, 1, (short)1))).all().get(30, TimeUnit.SECONDS);
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
            {
                for (int i = 0; i < RECORDS; i++) // one batch each
                {
                    timestamps.add(producer.send(new ProducerRecord<>(TOPIC, 0, 1_000_000L + i, null, bytes("r" + i)))
                        .get(20, TimeUnit.SECONDS).timestamp());
                }
            }
        }
        final Path partition = dir.resolve(TOPIC + "-0");
        setEpochFrom(partition.resolve("00000000000000000000.log"), EPOCH_FROM, EPOCH);
        Files.writeString(partition.resolve("leader-epoch-checkpoint"), CHECKPOINT, StandardCharsets.UTF_8);

        final TopicPartition tp = new TopicPartition(TOPIC, 0);
        try (RunningBroker broker = new RunningBroker(dir, Map.of()))
        {
            try (KafkaConsumer<byte[], byte[]> first = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g",
                ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 7)))
            {
                first.subscribe(List.of(TOPIC));
                final List<ConsumerRecord<byte[], byte[]>> seen = poll(first, 7, "the first consumer reading 7 records");
                assertEquals(Optional.of(0), seen.get(0).leaderEpoch(), "offset 0's batch epoch");
                assertEquals(Optional.of(EPOCH), seen.get(6).leaderEpoch(), "offset 6's batch epoch");
                first.commitSync();
            }
            try (Admin admin = broker.admin())
            {
                final OffsetAndMetadata committed = admin.listConsumerGroupOffsets("g").partitionsToOffsetAndMetadata()
                    .get(30, TimeUnit.SECONDS).get(tp);
                assertEquals(7, committed.offset());
                assertEquals(Optional.of(EPOCH), committed.leaderEpoch(), "the commit names the epoch of the records read");
            }
            try (KafkaConsumer<byte[], byte[]> second = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g")))
            {
                second.subscribe(List.of(TOPIC));
                final List<ConsumerRecord<byte[], byte[]>> seen = poll(second, RECORDS - 7, "the group resuming at 7");
                assertEquals(7, seen.get(0).offset(), "where the group committed");
                second.commitSync();
            }
            try (Admin admin = broker.admin())
            {
                // ListOffsets (v4+) as Kafka answers: the log start's epoch, the current one for the latest, the batch's
                assertEquals(Optional.of(0), listed(admin, tp, OffsetSpec.earliest()).leaderEpoch());
                assertEquals(Optional.of(EPOCH), listed(admin, tp, OffsetSpec.latest()).leaderEpoch());
                final ListOffsetsResult.ListOffsetsResultInfo third = listed(admin, tp, OffsetSpec.forTimestamp(timestamps.get(2)));
                assertEquals(2, third.offset());
                assertEquals(Optional.of(0), third.leaderEpoch());
                final ListOffsetsResult.ListOffsetsResultInfo eighth = listed(admin, tp, OffsetSpec.forTimestamp(timestamps.get(8)));
                assertEquals(8, eighth.offset());
                assertEquals(Optional.of(EPOCH), eighth.leaderEpoch());
            }
            try (KafkaProducer<byte[], byte[]> producer = broker.producer(Map.of(ProducerConfig.ACKS_CONFIG, "1")))
            {
                producer.send(new ProducerRecord<>(TOPIC, 0, null, bytes("after"))).get(20, TimeUnit.SECONDS);
            }
            try (KafkaConsumer<byte[], byte[]> third = broker.consumer(Map.of(ConsumerConfig.GROUP_ID_CONFIG, "g")))
            {
                third.subscribe(List.of(TOPIC));
                final ConsumerRecord<byte[], byte[]> next = poll(third, 1, "the group resuming at 10").get(0);
                assertEquals(RECORDS, next.offset());
                assertEquals(Optional.of(EPOCH), next.leaderEpoch(), "a new batch is stamped with the log's epoch");
            }
        }
        assertEquals(CHECKPOINT, Files.readString(partition.resolve("leader-epoch-checkpoint"), StandardCharsets.UTF_8),
            "no new entry: the epoch did not change");
    }

    private static List<ConsumerRecord<byte[], byte[]>> poll(final KafkaConsumer<byte[], byte[]> consumer, final int count,
        final String what)
    {
        final List<ConsumerRecord<byte[], byte[]>> seen = new ArrayList<>();
        await(() ->
        {
            consumer.poll(Duration.ofMillis(100)).forEach(seen::add);
            return seen.size() >= count;
        }, DEADLINE, () -> what + ", read " + seen.size());
        return seen;
    }

    private static ListOffsetsResult.ListOffsetsResultInfo listed(final Admin admin, final TopicPartition tp, final OffsetSpec spec)
        throws Exception
    {
        return admin.listOffsets(Map.of(tp, spec)).partitionResult(tp).get(30, TimeUnit.SECONDS);
    }

    /**
     * Sets the partition leader epoch of every batch from offset {@code from} on to {@code epoch}: the field is outside
     * the CRC (a leader stamps it after the producer computed the CRC), so the batches stay valid as Kafka's would be.
     */
    private static void setEpochFrom(final Path segment, final long from, final int epoch) throws Exception
    {
        try (FileChannel file = FileChannel.open(segment, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final ByteBuffer header = ByteBuffer.allocate(12);
            int changed = 0;
            for (long position = 0; position < file.size(); )
            {
                header.clear();
                file.read(header, position);
                final long baseOffset = header.getLong(0);
                final int length = header.getInt(8); // the batch from the partition leader epoch on (offset 12)
                if (length <= 0)
                {
                    break; // the file's preallocated end, if any
                }
                if (baseOffset >= from)
                {
                    file.write(ByteBuffer.allocate(4).putInt(0, epoch), position + 12);
                    changed++;
                }
                position += 12 + length;
            }
            assertEquals(RECORDS - from, changed, "one batch per record from " + from);
            file.force(true);
        }
    }

    private static byte[] bytes(final String s)
    {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
