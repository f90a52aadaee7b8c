package io.ferrite.client;

import io.ferrite.log.LogTailer;
import io.ferrite.log.PartitionLog;
import io.ferrite.testing.DroppingProxy;
import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Records that arrive while their partition cannot send go into the open batch, which is sealed when it is sent
 * (kafka-clients' accumulator), not into one small batch per duty cycle (issue 15: acks=1 at 10 000 records/s queued
 * one batch per cycle behind the batch in flight, each waiting for a request of its own). Ferrite in-process behind a
 * {@link DroppingProxy} that holds the broker's answers: the first batch stays in flight for certain while the test
 * sends records one by one with duty cycles between them, linger 0; then the answers go on and the log's batches are
 * counted (what the broker received), no timing involved.
 */
class BatchingBehindInFlightTest
{
    private static final int RECORDS = 40;

    @TempDir
    Path dir;

    @Test
    void withoutIdempotenceTheRecordsBehindTheBatchInFlightGoInOneBatch() throws Exception
    {
        final List<Integer> batches = sendBehindHeldAnswer(new ProducerConfig().acks(1), false);
        assertEquals(List.of(1, 1, RECORDS), batches, "records per batch in the log: the two first, then all the others in one");
    }

    @Test
    void withIdempotenceTheRecordsBeyondFiveRequestsInFlightGoInOneBatch() throws Exception
    {
        final List<Integer> batches = sendBehindHeldAnswer(new ProducerConfig(), true);
        // after record 0's: one record per request while the connection has fewer than 5 in flight, then one batch
        // record 0's batch, record 1's and the next four (five requests in flight), then the rest in one (review M2:
        // a producer that stopped pipelining would give [1, 1, 40])
        assertEquals(List.of(1, 1, 1, 1, 1, 1, RECORDS - 4), batches, "records per batch in the log");
    }

    /**
     * Sends record 0 (connecting the leader and, with idempotence, getting the producer id), then record 1 and, while
     * its answer is held, {@link #RECORDS} more; the records of each batch in the log.
     */
    private List<Integer> sendBehindHeldAnswer(final ProducerConfig base, final boolean idempotent) throws Exception
    {
        try (DroppingProxy proxy = new DroppingProxy(1, 0.0);
            FerriteFixture ferrite = new FerriteFixture(dir,
                Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port())))
        {
            proxy.dropping(false);
            proxy.target(ferrite.broker.address().getPort());
            ferrite.createTopic("t", 1);
            final short[] errors = new short[RECORDS + 2];
            final long[] offsets = new long[RECORDS + 2];
            Arrays.fill(errors, (short)-99);
            final ProducerConfig config = base.bootstrapServers("127.0.0.1:" + proxy.port()).lingerMs(0)
                .requestTimeoutMs(60_000).deliveryTimeoutMs(120_000);
            try (Producer producer = new Producer(config, (tag, t, p, offset, error) ->
            {
                errors[(int)tag] = error;
                offsets[(int)tag] = offset;
            }))
            {
                assertEquals(idempotent, producer.idempotent());
                assertEquals(1, producer.awaitPartitions("t", 30_000));
                final PartitionState ps = producer.partitionState("t", 0);
                send(producer, 0);
                FerriteFixture.drain(producer);
                proxy.holdAnswers(true);
                send(producer, 1);
                final long deadline = System.nanoTime() + 60_000_000_000L;
                while (ps.inFlight == 0)
                {
                    assertTrue(System.nanoTime() - deadline < 0, "record 1 sent within 60 s\n" + producer.describeState());
                    producer.doWork();
                }
                for (int i = 2; i <= RECORDS + 1; i++)
                {
                    send(producer, i);
                    for (int cycle = 0; cycle < 3; cycle++)
                    {
                        producer.doWork(); // linger 0: a batch that may go, goes
                    }
                }
                assertEquals(-99, errors[1], "record 1's answer held");
                proxy.holdAnswers(false);
                FerriteFixture.drain(producer);
            }
            for (int i = 0; i <= RECORDS + 1; i++)
            {
                assertEquals(0, errors[i], "record " + i + "'s completion");
                assertEquals(i, offsets[i], "record " + i + "'s offset");
            }
            final PartitionLog log = ferrite.broker.topics().topic("t").partitions[0].log;
            assertEquals(RECORDS + 2, log.logEndOffset(), "every record once");
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            final List<Integer> counts = new ArrayList<>();
            while (tailer.next(log.logEndOffset(), batch))
            {
                counts.add(batch.recordCount());
            }
            return counts;
        }
    }

    private static void send(final Producer producer, final int tag)
    {
        final byte[] bytes = ("record " + tag).getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        assertEquals(0, producer.send("t", 0, null, 0, -1, new UnsafeBuffer(bytes), 0, bytes.length, null, -1, tag));
    }
}
