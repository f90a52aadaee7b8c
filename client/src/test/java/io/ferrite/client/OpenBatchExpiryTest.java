package io.ferrite.client;

import io.ferrite.testing.DroppingProxy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An open batch (records taken, not yet sealed: with the seal at send time, a batch whose partition cannot send stays
 * open) completes at its {@code delivery.timeout.ms} as kafka-clients' accumulator expires it (seal15 review, M1 and L4).
 * Ferrite in-process behind a {@link DroppingProxy}; no flush anywhere (a flush seals every open batch, and a sealed
 * batch expires by the older rule): the application only runs the duty cycle and waits for its completions.
 */
class OpenBatchExpiryTest
{
    private static final long DELIVERY_TIMEOUT_MS = 2_000;

    @TempDir
    Path dir;

    @Test
    void anOpenBatchWhoseLeaderNeverComesBackExpiresWithoutIdempotence() throws Exception
    {
        leaderNeverComesBack(new ProducerConfig().acks(1), false);
    }

    @Test
    void anOpenBatchWhoseLeaderNeverComesBackExpiresWithIdempotence() throws Exception
    {
        leaderNeverComesBack(new ProducerConfig(), true);
    }

    /**
     * Review M1: the leader's connection is cut and every reconnect fails (the proxy points at a dead port), so the
     * record's batch is never sent and stays open; without the open batch's expiry it never completed and
     * {@code pending()} stayed at 1 for ever.
     */
    private void leaderNeverComesBack(final ProducerConfig base, final boolean idempotent) throws Exception
    {
        final int dead = deadPort();
        try (DroppingProxy proxy = new DroppingProxy(1, 0.0);
            FerriteFixture ferrite = new FerriteFixture(dir, Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port())))
        {
            proxy.dropping(false);
            proxy.target(ferrite.broker.address().getPort());
            ferrite.createTopic("t", 1);
            final short[] errors = new short[2];
            Arrays.fill(errors, (short)-99);
            final Drains drains = new Drains();
            final ProducerConfig config = base.bootstrapServers("127.0.0.1:" + proxy.port()).lingerMs(0)
                .requestTimeoutMs(1_000).deliveryTimeoutMs(DELIVERY_TIMEOUT_MS).reconnectBackoffMs(10, 50).trace(drains);
            try (Producer producer = new Producer(config, (tag, t, p, offset, error) -> errors[(int)tag] = error))
            {
                assertEquals(idempotent, producer.idempotent());
                assertEquals(1, producer.awaitPartitions("t", 30_000));
                send(producer, 0);
                run(producer, () -> errors[0] != -99, "record 0 acknowledged");
                assertEquals(0, errors[0]);

                proxy.target(dead);
                proxy.cutAll();
                run(producer, () -> !producer.describeState().contains(" READY "), "the producer saw its connections cut");
                send(producer, 1);
                final long sent = System.nanoTime();
                run(producer, () -> errors[1] != -99, "record 1 completed (no flush)");
                assertEquals(ClientErrors.DELIVERY_TIMEOUT, errors[1], "record 1's batch, never sent");
                assertTrue(System.nanoTime() - sent >= DELIVERY_TIMEOUT_MS * 1_000_000L, "not before its delivery timeout");
                assertEquals(0, producer.pending());
                assertEquals(1, drains.count, "only record 0's batch went into a request: record 1's stayed open");
            }
        }
    }

    /**
     * Review L4: the partition has a batch in flight (its answer held) and an open batch behind it passes its delivery
     * timeout. kafka-clients expires that batch at its deadline and the next record opens a new one; before, the open
     * batch kept taking records until nothing was in flight, and a record sent after the deadline failed with it.
     */
    @Test
    void anOpenBatchPastItsDeadlineExpiresWhileTheBatchBeforeIsInFlightAndTheNextRecordOpensAnother() throws Exception
    {
        try (DroppingProxy proxy = new DroppingProxy(1, 0.0);
            FerriteFixture ferrite = new FerriteFixture(dir, Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port())))
        {
            proxy.dropping(false);
            proxy.target(ferrite.broker.address().getPort());
            ferrite.createTopic("t", 1);
            final short[] errors = new short[4];
            final long[] offsets = new long[4];
            Arrays.fill(errors, (short)-99);
            // without idempotence one batch of a partition is in flight: the open one waits behind it
            final ProducerConfig config = new ProducerConfig().acks(1).bootstrapServers("127.0.0.1:" + proxy.port())
                .lingerMs(0).requestTimeoutMs(60_000).deliveryTimeoutMs(DELIVERY_TIMEOUT_MS);
            try (Producer producer = new Producer(config, (tag, t, p, offset, error) ->
            {
                errors[(int)tag] = error;
                offsets[(int)tag] = offset;
            }))
            {
                assertEquals(1, producer.awaitPartitions("t", 30_000));
                final PartitionState ps = producer.partitionState("t", 0);
                send(producer, 0);
                FerriteFixture.drain(producer);
                proxy.holdAnswers(true);
                send(producer, 1); // X: in flight, its answer held
                run(producer, () -> ps.inFlight == 1, "record 1 sent");
                send(producer, 2); // A: open behind X
                assertTrue(ps.open != null && ps.open.recordCount == 1, "record 2 in the open batch");
                final long deadline = ps.open.deliveryDeadlineNs;
                run(producer, () -> System.nanoTime() - deadline >= 0, "record 2's delivery timeout");
                send(producer, 3); // B: after A's deadline
                run(producer, () -> errors[2] != -99, "record 2 completed while record 1 is in flight");
                assertEquals(ClientErrors.DELIVERY_TIMEOUT, errors[2], "record 2, expired at its deadline");
                assertEquals(1, ps.inFlight, "record 1 still in flight");
                assertEquals(-99, errors[1], "record 1's answer held");
                assertEquals(-99, errors[3], "record 3 in a batch of its own, waiting");
                proxy.holdAnswers(false);
                FerriteFixture.drain(producer);
            }
            assertEquals(0, errors[1], "record 1 acknowledged");
            assertEquals(0, errors[3], "record 3 acknowledged: it did not go down with record 2's batch");
            assertEquals(1, offsets[1]);
            assertEquals(2, offsets[3]);
            assertEquals(3, ferrite.broker.topics().topic("t").partitions[0].log.logEndOffset(), "records 0, 1 and 3");
        }
    }

    /** Counts the batches drained into requests. */
    private static final class Drains implements ProducerTrace
    {
        int count;

        @Override
        public void onDrained(final long firstTag, final int recordCount)
        {
            count++;
        }

        @Override
        public void onWritten(final int nodeId)
        {
        }

        @Override
        public void onAnswered(final long firstTag, final int recordCount, final short errorCode)
        {
        }
    }

    private static int deadPort() throws Exception
    {
        try (ServerSocket s = new ServerSocket(0))
        {
            return s.getLocalPort();
        }
    }

    /** Runs the duty cycle until {@code done} (30 s at most). */
    private static void run(final Producer producer, final BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() - deadline < 0, what + " within 30 s\n" + producer.describeState());
            if (producer.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
    }

    private static void send(final Producer producer, final int tag)
    {
        final byte[] bytes = ("record " + tag).getBytes(StandardCharsets.US_ASCII);
        assertEquals(0, producer.send("t", 0, null, 0, -1, new UnsafeBuffer(bytes), 0, bytes.length, null, -1, tag));
    }
}
