package io.ferrite.client;

import io.ferrite.testing.Await;
import io.ferrite.testing.DroppingProxy;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The idempotent producer through a {@link DroppingProxy} that cuts the connection after one Produce request in
 * ten, once the broker had time to append it: every answer in flight on that connection is lost, the producer
 * resends those batches with their sequences (the first unacknowledged first, then the rest in order), and the
 * broker keeps one copy. Every record is read back by kafka-clients' KafkaConsumer exactly once, in send order,
 * at the offset its completion named; up to 5 batches of a partition were in flight at once. A JUnit test interface:
 * the class that implements it starts the proxy before its broker (which advertises the proxy's port) and closes it
 * after; against Kafka 4.4 it runs in {@link KafkaInteropTest}, on the one Kafka node of the client's Kafka cases.
 */
interface IdempotentRetriesContract
{
    int IDEMPOTENT_PARTITIONS = 2;
    int IDEMPOTENT_RECORDS = 1_500;

    /** In front of the broker, which advertises its port; started before the broker, closed after it. */
    DroppingProxy proxy();

    /** A proxy that cuts the connection after one Produce request in ten and loses the answers in flight. */
    static DroppingProxy newProxy() throws java.io.IOException
    {
        return new DroppingProxy(15, 0.1, true);
    }

    private String proxiedBootstrap()
    {
        return "127.0.0.1:" + proxy().port();
    }

    void createTopic(String name, int partitions, Map<String, String> configs) throws Exception;

    @Test
    default void everyRecordExactlyOnceInOrderThroughDroppedAnswers() throws Exception
    {
        exactlyOnceInOrderThroughDroppedAnswers("idempotent-drops");
    }

    /** The case above on its own topic (a run of it again, to look for a rare failure, takes another). */
    default void exactlyOnceInOrderThroughDroppedAnswers(final String topic) throws Exception
    {
        createTopic(topic, IDEMPOTENT_PARTITIONS, Map.of());
        final long[] offsets = new long[IDEMPOTENT_RECORDS];
        final short[] errors = new short[IDEMPOTENT_RECORDS];
        Arrays.fill(errors, (short)-99);
        final ProducerConfig config = config();
        final int dropsBefore = proxy().dropped.get();
        int peak = 0;
        final long startNs = System.nanoTime();
        try (Producer producer = new Producer(config, (tag, t, partition, offset, error) ->
        {
            offsets[(int)tag] = offset;
            errors[(int)tag] = error;
        }))
        {
            assertTrue(producer.idempotent());
            assertEquals(IDEMPOTENT_PARTITIONS, producer.awaitPartitions(topic, 30_000));
            final UnsafeBuffer value = new UnsafeBuffer(new byte[0]);
            for (int i = 0; i < IDEMPOTENT_RECORDS; i++)
            {
                final byte[] bytes = value(i);
                value.wrap(bytes);
                // all sent before the duty cycle runs: the batches are sealed and wait, so up to 5 go out at once
                assertEquals(i % IDEMPOTENT_PARTITIONS, producer.send(topic, i % IDEMPOTENT_PARTITIONS, null, 0, -1, value, 0, bytes.length,
                    null, System.currentTimeMillis(), i));
            }
            FerriteFixture.drain(producer);
            for (int p = 0; p < IDEMPOTENT_PARTITIONS; p++)
            {
                peak = Math.max(peak, producer.partitionState(topic, p).peakInFlight);
            }
            assertEquals(0, producer.fatalError());
        }
        final long sentNs = System.nanoTime() - startNs;
        System.out.println("idempotent retries: " + (proxy().dropped.get() - dropsBefore) + " connections dropped, at most " +
            peak + " batches of a partition in flight, every record acknowledged in " + sentNs / 1_000_000 + " ms");
        assertTrue(proxy().dropped.get() > dropsBefore, "the proxy dropped connections with answers in flight");
        for (int i = 0; i < IDEMPOTENT_RECORDS; i++)
        {
            assertEquals(0, errors[i], "record " + i + "'s completion");
        }
        for (int p = 0; p < IDEMPOTENT_PARTITIONS; p++)
        {
            final List<ConsumerRecord<byte[], byte[]>> read = readAll(topic, p);
            assertEquals(IDEMPOTENT_RECORDS / IDEMPOTENT_PARTITIONS, read.size(), "records in partition " + p + " (a duplicate adds one)");
            for (int k = 0; k < read.size(); k++)
            {
                final int i = k * IDEMPOTENT_PARTITIONS + p;
                final ConsumerRecord<byte[], byte[]> r = read.get(k);
                assertEquals(k, r.offset());
                assertArrayEquals(value(i), r.value(), "record at offset " + k + " of partition " + p);
                assertEquals(k, offsets[i], "record " + i + "'s completion offset");
            }
        }
        assertEquals(5, peak, "the most batches of one partition in flight at once");
    }

    /**
     * A batch the broker refuses for good once it was sent (MESSAGE_TOO_LARGE: over the topic's
     * {@code max.message.bytes}) leaves a gap in the partition's sequences; the producer bumps its epoch and
     * the records after it start from sequence 0 under the new one and are written — without the bump the
     * broker would answer OUT_OF_ORDER_SEQUENCE_NUMBER to each of them until their delivery timeout.
     */
    @Test
    default void aBatchRefusedAfterItWasSentBumpsTheEpochAndTheRecordsAfterItAreWritten() throws Exception
    {
        final String topic = "idempotent-bump";
        createTopic(topic, 1, Map.of("max.message.bytes", "2048"));
        final int small = 20;
        final short[] errors = new short[2 * small + 1];
        Arrays.fill(errors, (short)-99);
        proxy().dropping(false); // this test is about the bump, not about lost answers: nothing is cut
        try (Producer producer = new Producer(config(), (tag, t, partition, offset, error) -> errors[(int)tag] = error))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            sendSmall(producer, topic, 0, small);
            final short epoch = producer.partitionState(topic, 0).producerEpoch;
            final UnsafeBuffer big = new UnsafeBuffer(new byte[4096]);
            assertEquals(0, producer.send(topic, 0, null, 0, -1, big, 0, big.capacity(), null, -1, small));
            FerriteFixture.drain(producer);
            assertEquals(ClientErrors.MESSAGE_TOO_LARGE, errors[small], "the record over max.message.bytes");
            sendSmall(producer, topic, small + 1, small);
            assertEquals(epoch + 1, producer.partitionState(topic, 0).producerEpoch, "the partition's epoch");
            assertEquals(0, producer.fatalError());
        }
        finally
        {
            proxy().dropping(true);
        }
        final List<ConsumerRecord<byte[], byte[]>> read = readAll(topic, 0);
        assertEquals(2 * small, read.size());
        for (int i = 0; i < 2 * small; i++)
        {
            final int tag = i < small ? i : i + 1;
            assertEquals(0, errors[tag], "record " + tag);
            assertArrayEquals(value(tag), read.get(i).value(), "record at offset " + i);
        }
    }

    /**
     * A batch the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER to every time, and which is not the one right after the
     * last acknowledged (so no epoch bump: an earlier batch might still arrive, kafka-clients' {@code canRetry}), is
     * retried only until its {@code delivery.timeout.ms}, then fails, as kafka-clients' {@code Sender.canRetry} stops at
     * {@code hasReachedDeliveryTimeout}; without that deadline it would be retried for ever and never complete. The
     * epoch is then bumped and the records after it are written. The gap is made by hand: the partition's next
     * sequence is moved 1 000 past what the broker holds, as if batches in between were sent and lost, which no broker
     * here can be made to do on demand. The timeouts (a 6 s delivery timeout, 5 s per request: the retries of an answer
     * that comes back in milliseconds fill them, and the case's time is the delivery timeout) leave room for a thread
     * or broker stalled for seconds on a loaded machine:
     * what the batch fails with (OUT_OF_ORDER_SEQUENCE_NUMBER, DELIVERY_TIMEOUT, REQUEST_TIMED_OUT) depends on where
     * the deadline finds it, so only its failure is asserted, after at least one OUT_OF_ORDER answer.
     */
    @Test
    default void aBatchAnsweredOutOfOrderSequenceEveryTimeFailsAtItsDeliveryTimeoutAndTheRecordsAfterItAreWritten() throws Exception
    {
        final String topic = "idempotent-out-of-order";
        createTopic(topic, 1, Map.of());
        final short[] errors = new short[4];
        Arrays.fill(errors, (short)-99);
        proxy().dropping(false);
        try (Producer producer = new Producer(config().deliveryTimeoutMs(6_000).requestTimeoutMs(5_000),
            (tag, t, partition, offset, error) -> errors[(int)tag] = error))
        {
            assertEquals(1, producer.awaitPartitions(topic, 30_000));
            sendSmall(producer, topic, 0, 1);
            final PartitionState ps = producer.partitionState(topic, 0);
            final short epoch = ps.producerEpoch;
            ps.nextSequence = Sequences.increment(ps.nextSequence, 1_000);
            final UnsafeBuffer value = new UnsafeBuffer(value(1));
            assertEquals(0, producer.send(topic, 0, null, 0, -1, value, 0, value.capacity(), null, -1, 1));
            producer.flush();
            final boolean[] outOfOrder = {false};
            // the delivery timeout ends the retries; 60 s is only this wait's own bound
            Await.await(() ->
            {
                producer.doWork();
                final ProducerBatch b = ps.firstUnacked;
                if (b != null && b.lastError == ClientErrors.OUT_OF_ORDER_SEQUENCE_NUMBER)
                {
                    outOfOrder[0] = true;
                }
                return errors[1] != -99;
            }, Duration.ofSeconds(60), () -> "the batch answered OUT_OF_ORDER_SEQUENCE_NUMBER completes by its delivery " +
                "timeout\n" + producer.describeState());
            assertTrue(outOfOrder[0], "the broker answered OUT_OF_ORDER_SEQUENCE_NUMBER to the batch at least once");
            assertTrue(errors[1] != 0, "the batch failed: " + errors[1]);
            FerriteFixture.drain(producer);
            sendSmall(producer, topic, 2, 2);
            assertEquals(epoch + 1, ps.producerEpoch, "the partition's epoch after the failed batch");
            assertEquals(0, producer.fatalError());
        }
        finally
        {
            proxy().dropping(true);
        }
        final List<ConsumerRecord<byte[], byte[]>> read = readAll(topic, 0);
        final int[] written = {0, 2, 3};
        assertEquals(written.length, read.size());
        for (int i = 0; i < written.length; i++)
        {
            assertEquals(0, errors[written[i]], "record " + written[i]);
            assertArrayEquals(value(written[i]), read.get(i).value(), "record at offset " + i);
        }
    }

    private static void sendSmall(final Producer producer, final String topic, final int firstTag, final int count)
    {
        final UnsafeBuffer value = new UnsafeBuffer(new byte[0]);
        for (int tag = firstTag; tag < firstTag + count; tag++)
        {
            final byte[] bytes = value(tag);
            value.wrap(bytes);
            assertEquals(0, producer.send(topic, 0, null, 0, -1, value, 0, bytes.length, null, -1, tag));
        }
        FerriteFixture.drain(producer);
    }

    private ProducerConfig config()
    {
        return new ProducerConfig().bootstrapServers(proxiedBootstrap()).enableIdempotence(true)
            .lingerMs(0).batchSize(256).retryBackoffMs(10).reconnectBackoffMs(10, 100).requestTimeoutMs(15_000);
    }

    /** Every record of the partition up to its end offset, read through the proxy (which passes every Fetch). */
    private List<ConsumerRecord<byte[], byte[]>> readAll(final String topic, final int partition)
    {
        return FerriteFixture.readToEnd(proxiedBootstrap(), topic, partition);
    }

    private static byte[] value(final int i)
    {
        return ("record-" + i).getBytes(StandardCharsets.UTF_8);
    }
}
