package io.ferrite.client;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A seek made while the OffsetFetch for the partition's first position is in flight wins over its answer (as
 * kafka-clients applies a committed offset only to a partition still without a position), against an in-process
 * Ferrite. Staged on the consumer's own state: the partition's state and whether the OffsetFetch is in flight.
 */
class GroupOffsetsRaceTest
{
    private static final long DEADLINE_NS = 60_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void aSeekWhileTheCommittedOffsetIsAskedForWins() throws Exception
    {
        try (FerriteFixture ferrite = new FerriteFixture(dir))
        {
            ferrite.createTopic("race", 1);
            try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", ferrite.bootstrap(),
                "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class)))
            {
                for (int i = 0; i < 20; i++)
                {
                    producer.send(new ProducerRecord<>("race", 0, null, new byte[] {(byte)i}));
                }
                producer.flush();
            }
            final ConsumerConfig config = new ConsumerConfig().bootstrapServers(ferrite.bootstrap()).fetchMaxWaitMs(100)
                .groupId("race-group").enableAutoCommit(false);
            try (Consumer committer = new Consumer(config))
            {
                committer.assign("race", 0);
                committer.commitOffset("race", 0, 10);
                committer.commitSync(30_000);
            }
            try (Consumer consumer = new Consumer(config))
            {
                consumer.assign("race", 0);
                final FetchPosition p = consumer.assignedPosition("race", 0);
                final long deadline = System.nanoTime() + DEADLINE_NS;
                while (p.state != FetchPosition.State.FETCHING_COMMITTED)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "an OffsetFetch in flight within 60 s");
                    consumer.doWork();
                }
                consumer.seek("race", 0, 5);
                while (consumer.committedPositionsInFlight())
                {
                    assertTrue(System.nanoTime() - deadline < 0, "the OffsetFetch answered within 60 s");
                    consumer.doWork();
                }
                assertEquals(5, consumer.position("race", 0), "the committed offset (10) came after the seek");
                final List<Long> offsets = new ArrayList<>();
                while (offsets.size() < 15)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "15 records within 60 s: " + offsets);
                    consumer.doWork();
                    consumer.poll((t, part, r) -> offsets.add(r.offset()), 15 - offsets.size());
                }
                assertEquals(5L, offsets.get(0));
                assertEquals(19L, offsets.get(14));
                assertEquals(10, consumer.committed("race", 0, 30_000));
            }
        }
    }
}
