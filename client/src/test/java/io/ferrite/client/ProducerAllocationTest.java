package io.ferrite.client;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After a warm-up, 100 000 sends to Ferrite over a socket, each completed (keyed, with a header; acks=1
 * without idempotence, and acks=all with it: sequences, up to 5 batches of a partition in flight), allocate 0 bytes on the thread that sends and runs the duty cycle: measured with
 * {@code ThreadMXBean.getThreadAllocatedBytes} around the whole phase, sends and completions included. The pool makes
 * batches on demand up to {@code buffer.memory / batch.size}; the test bounds it at {@link #POOL} batches and fills it
 * before the measurement (sends without a duty cycle until {@link Producer#BUFFER_FULL}), so a stall in the measured
 * phase waits for a free batch instead of making one.
 */
class ProducerAllocationTest
{
    private static final int WARM_UP = 200_000;
    private static final int MEASURED = 100_000;
    /** Records sent and not completed at most: the batches and requests in use stay within what the warm-up made. */
    private static final int WINDOW = 2_000;
    /** The batch pool's bound: {@code buffer.memory} for this many batches of the default {@code batch.size}. */
    private static final int POOL = 64;
    private static final int BATCH_SIZE = 16_384;

    @TempDir
    Path dir;

    private long completed;
    private long failed;
    private long filled;

    @ParameterizedTest(name = "idempotence={0}")
    @ValueSource(booleans = {false, true})
    void sendsAndCompletionsAllocateNothingOnTheProducerThread(final boolean idempotence) throws Exception
    {
        try (FerriteFixture ferrite = new FerriteFixture(dir))
        {
            ferrite.createTopic("alloc", 4);
            final ProducerConfig config = new ProducerConfig().bootstrapServers(ferrite.bootstrap()).lingerMs(1)
                .batchSize(BATCH_SIZE).bufferMemory((long)POOL * (BATCH_SIZE + ProducerBatch.BATCH_OVERHEAD)).acks(idempotence ? -1 : 1).enableIdempotence(idempotence);
            try (Producer producer = new Producer(config, (tag, topic, partition, offset, error) ->
            {
                completed++;
                if (error != 0)
                {
                    failed++;
                }
            }))
            {
                assertEquals(idempotence, producer.idempotent());
                assertEquals(4, producer.awaitPartitions("alloc", 30_000));
                final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
                final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
                final UnsafeBuffer headerKey = new UnsafeBuffer("trace".getBytes(java.nio.charset.StandardCharsets.UTF_8));
                final OutgoingHeaders headers = new OutgoingHeaders().add(headerKey, 0, 5, key, 0, 8);
                fillPool(producer, key, value, headers);
                assertEquals(POOL, producer.pools().maxBatches());
                assertEquals(POOL, producer.pools().batchesMade(), "batches made before the measurement");
                run(producer, key, value, headers, WARM_UP);
                final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
                final long id = Thread.currentThread().getId();
                final long before = threads.getThreadAllocatedBytes(id);
                run(producer, key, value, headers, MEASURED);
                final long allocated = threads.getThreadAllocatedBytes(id) - before;
                assertEquals(0, failed, "sends that failed");
                assertEquals(filled + WARM_UP + MEASURED, completed);
                assertEquals(POOL, producer.pools().batchesMade(), "batches made");
                assertEquals(0, allocated, "bytes allocated over " + MEASURED + " sends with their completions");
            }
        }
    }

    /** Sends without running the duty cycle until every batch the pool may hold is taken, then lets them complete. */
    private void fillPool(final Producer producer, final UnsafeBuffer key, final UnsafeBuffer value,
        final OutgoingHeaders headers)
    {
        int sent = 0;
        for (int i = 0; ; i++)
        {
            key.putLong(0, i);
            final int p = producer.send("alloc", -1, key, 0, 8, value, 0, 100, headers, -1, i);
            if (p == Producer.BUFFER_FULL)
            {
                break;
            }
            assertTrue(p >= 0, "send's answer");
            sent++;
        }
        final long deadline = System.nanoTime() + 300_000_000_000L;
        sendWaiting(producer, key, value, headers, sent, deadline); // the measured phase's path on BUFFER_FULL, run once here
        sent++;
        filled = sent;
        producer.flush();
        while (completed < sent)
        {
            producer.doWork();
            assertTrue(System.nanoTime() - deadline < 0, "sends completed in time");
        }
    }

    /** Sends {@code count} records, at most {@link #WINDOW} pending; on BUFFER_FULL runs the duty cycle and sends again. */
    private void run(final Producer producer, final UnsafeBuffer key, final UnsafeBuffer value,
        final OutgoingHeaders headers, final int count)
    {
        final long target = completed + count;
        final long deadline = System.nanoTime() + 300_000_000_000L;
        for (int i = 0; i < count; i++)
        {
            while (producer.pending() >= WINDOW)
            {
                producer.doWork();
                assertTrue(System.nanoTime() - deadline < 0, "sends completed in time");
            }
            sendWaiting(producer, key, value, headers, i, deadline);
            producer.doWork();
        }
        producer.flush();
        while (completed < target)
        {
            producer.doWork();
            assertTrue(System.nanoTime() - deadline < 0, "sends completed in time");
        }
    }

    /**
     * One send; on BUFFER_FULL the duty cycle runs until a batch is free. The fill runs this path first, so that the
     * measured phase does not run this code for the first time.
     */
    private void sendWaiting(final Producer producer, final UnsafeBuffer key, final UnsafeBuffer value,
        final OutgoingHeaders headers, final int i, final long deadline)
    {
        key.putLong(0, i);
        int p = producer.send("alloc", -1, key, 0, 8, value, 0, 100, headers, -1, i);
        while (p == Producer.BUFFER_FULL)
        {
            producer.doWork();
            assertTrue(System.nanoTime() - deadline < 0, "a batch freed in time");
            p = producer.send("alloc", -1, key, 0, 8, value, 0, 100, headers, -1, i);
        }
        assertTrue(p >= 0, "send's answer");
    }
}
