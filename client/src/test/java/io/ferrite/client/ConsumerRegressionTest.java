package io.ferrite.client;

import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Regression tests of review 1's findings on the consumer (issue 15), against an in-process Ferrite: assigning while
 * a Fetch is in flight (H1), a seek while the partition's ListOffsets is in flight (H2), a batch that does not
 * decode and a malformed record (H4, M1: the partition stops with CORRUPT_MESSAGE naming it, the others go on). The
 * races are staged on the partition's own state ({@link Consumer#assignedPosition}), read, not written.
 */
class ConsumerRegressionTest
{
    private static final long DEADLINE_NS = 60_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void assignWhileAFetchIsInFlightReadsBothPartitions() throws Exception
    {
        try (FerriteFixture ferrite = new FerriteFixture(dir))
        {
            ferrite.createTopic("assign", 2);
            produce(ferrite, "assign", 10, 0, 1);
            try (Consumer consumer = new Consumer(new ConsumerConfig().bootstrapServers(ferrite.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).fetchMaxWaitMs(500)))
            {
                consumer.assign("assign", 0);
                final int[] read = new int[2];
                final FetchPosition p0 = consumer.assignedPosition("assign", 0);
                run(consumer, read, () -> read[0] == 10 && p0.fetchNode >= 0, "partition 0 read, its next Fetch in flight");
                consumer.assign("assign", 1); // the Fetch in flight names only partition 0
                run(consumer, read, () -> read[1] == 10, "partition 1 read");
                assertEquals(10, read[0]);
            }
        }
    }

    @Test
    void aSeekWhileTheResetIsInFlightWins() throws Exception
    {
        try (FerriteFixture ferrite = new FerriteFixture(dir))
        {
            ferrite.createTopic("seek", 1);
            produce(ferrite, "seek", 20, 0);
            try (Consumer consumer = new Consumer(new ConsumerConfig().bootstrapServers(ferrite.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).fetchMaxWaitMs(100)))
            {
                consumer.assign("seek", 0);
                final FetchPosition p = consumer.assignedPosition("seek", 0);
                final long deadline = System.nanoTime() + DEADLINE_NS;
                while (p.state != FetchPosition.State.RESETTING)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "a ListOffsets in flight within 60 s");
                    consumer.doWork();
                }
                consumer.seek("seek", 0, 5); // the ListOffsets (EARLIEST) in flight is answered after this
                final List<Long> offsets = new ArrayList<>();
                while (offsets.size() < 15)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "15 records within 60 s: " + offsets);
                    consumer.doWork();
                    consumer.poll((t, part, r) -> offsets.add(r.offset()), 100);
                }
                assertEquals(5L, offsets.get(0), "the first record after seek(5)");
                assertEquals(19L, offsets.get(14));

                // the second case: seekToBeginning while a LATEST reset is in flight ends at the beginning
                consumer.seekToEnd("seek", 0);
                while (p.state != FetchPosition.State.RESETTING)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "a ListOffsets in flight within 60 s");
                    consumer.doWork();
                }
                consumer.seekToBeginning("seek", 0);
                while (consumer.position("seek", 0) < 0)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "a position within 60 s");
                    consumer.doWork();
                }
                assertEquals(0L, consumer.position("seek", 0), "seekToBeginning after seekToEnd");
            }
        }
    }

    /**
     * Partition 0's second batch has a negative record count (its records cannot be read: H4), partition 1's claims
     * more records than it holds (a malformed record: M1), partition 2 is whole. Both bad ones are rewritten in the
     * segment file with their CRC recomputed, as a broker that does not decompress would serve them.
     */
    @Test
    void aBatchThatDoesNotDecodeStopsOnlyItsPartition() throws Exception
    {
        try (FerriteFixture ferrite = new FerriteFixture(dir))
        {
            ferrite.createTopic("bad", 3);
            produce(ferrite, "bad", 3, 0, 1, 2); // a first batch per partition
            produce(ferrite, "bad", 3, 0, 1, 2); // the second
            rewriteRecordCount(ferrite, "bad", 0, count -> -1);
            rewriteRecordCount(ferrite, "bad", 1, count -> count + 5);
            try (Consumer consumer = new Consumer(new ConsumerConfig().bootstrapServers(ferrite.bootstrap())
                .autoOffsetReset(ConsumerConfig.OffsetReset.EARLIEST).fetchMaxWaitMs(100)))
            {
                for (int p = 0; p < 3; p++)
                {
                    consumer.assign("bad", p);
                }
                final int[] read = new int[3];
                final List<ConsumerException> errors = new ArrayList<>();
                final long deadline = System.nanoTime() + DEADLINE_NS;
                while (read[2] < 6 || errors.size() < 2)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "partition 2 read and two partitions stopped");
                    consumer.doWork();
                    try
                    {
                        consumer.poll((t, part, r) -> read[part]++, 100);
                    }
                    catch (final ConsumerException e)
                    {
                        errors.add(e);
                    }
                }
                assertEquals(2, errors.size());
                for (int i = 0; i < 2; i++)
                {
                    assertEquals("bad", errors.get(i).topic());
                    assertEquals(i, errors.get(i).partition(), "the partitions in assignment order");
                    assertEquals(ClientErrors.CORRUPT_MESSAGE, errors.get(i).errorCode());
                }
                assertEquals(3, read[0], "partition 0's first batch");
                assertEquals(6, read[2]);
                assertEquals(-1, consumer.position("bad", 0), "stopped");
                assertEquals(-1, consumer.position("bad", 1), "stopped");
                for (int i = 0; i < 10; i++)
                {
                    consumer.doWork();
                    consumer.poll((t, part, r) -> read[part]++, 100); // reported once: no second throw
                }
                assertEquals(6, read[2]);
            }
        }
    }

    private interface CountRewrite
    {
        int apply(int count);
    }

    /** Rewrites the record count of the batch at offset 3 in the partition's first segment, with its CRC recomputed. */
    private static void rewriteRecordCount(final FerriteFixture ferrite, final String topic, final int partition,
        final CountRewrite rewrite) throws IOException
    {
        final Path file = ferrite.broker.topics().topic(topic).partitions[partition].log.dir()
            .resolve("00000000000000000000.log");
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final ByteBuffer head = ByteBuffer.allocate(RecordBatchDescriptor.LOG_OVERHEAD);
            int second = 0;
            while (true) // to the batch at offset 3
            {
                head.clear();
                ch.read(head, second);
                if (head.getLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET) == 3)
                {
                    break;
                }
                assertTrue(head.getLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET) < 3, "a batch starts at offset 3");
                second += RecordBatchDescriptor.LOG_OVERHEAD + head.getInt(RecordBatchDescriptor.BATCH_LENGTH_OFFSET);
            }
            final int size = RecordBatchDescriptor.LOG_OVERHEAD + head.getInt(RecordBatchDescriptor.BATCH_LENGTH_OFFSET);
            final ByteBuffer bytes = ByteBuffer.allocate(size);
            ch.read(bytes, second);
            final UnsafeBuffer b = new UnsafeBuffer(bytes.array());
            final int count = b.getInt(RecordBatchDescriptor.RECORD_COUNT_OFFSET, java.nio.ByteOrder.BIG_ENDIAN);
            assertEquals(3, count, "the second batch, whole (one flush, linger.ms longer than the test)");
            b.putInt(RecordBatchDescriptor.RECORD_COUNT_OFFSET, rewrite.apply(count), java.nio.ByteOrder.BIG_ENDIAN);
            final RecordBatch batch = new RecordBatch();
            batch.wrap(b, 0);
            b.putInt(RecordBatchDescriptor.CRC_OFFSET, batch.computeCrc(), java.nio.ByteOrder.BIG_ENDIAN);
            ch.write(ByteBuffer.wrap(bytes.array()), second);
        }
    }

    /** {@code count} records to each of {@code partitions}, flushed: one batch per partition (nothing goes before the flush). */
    private static void produce(final FerriteFixture ferrite, final String topic, final int count, final int... partitions)
        throws Exception
    {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(Map.of("bootstrap.servers", ferrite.bootstrap(),
            "key.serializer", ByteArraySerializer.class, "value.serializer", ByteArraySerializer.class, "linger.ms", 60_000)))
        {
            for (int i = 0; i < count; i++)
            {
                for (final int p : partitions)
                {
                    producer.send(new ProducerRecord<>(topic, p, null, new byte[] {(byte)i}));
                }
            }
            producer.flush();
        }
    }

    /** Runs the duty cycle and polls, counting the records per partition, until {@code done} (60 s at most). */
    private static void run(final Consumer consumer, final int[] read, final BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + DEADLINE_NS;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() - deadline < 0, what + " within 60 s: " + read[0] + ", " + read[1]);
            consumer.doWork();
            consumer.poll((t, p, r) -> read[p]++, 100);
        }
    }
}
