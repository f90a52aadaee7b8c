package io.ferrite.client;

import io.ferrite.testing.DroppingProxy;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A sent batch that expires with its outcome unknown does not make the producer write the batch behind it twice
 * (review of idem, H1; the reviewer's scratch test made deterministic). Ferrite in-process behind a
 * {@link DroppingProxy} that cuts nothing by chance: the test holds the answers, waits until the broker has appended
 * A and B (the log end), cuts the connections and points the proxy at a dead port until A's
 * {@code delivery.timeout.ms} passes, then at the broker again. Before the fix A's expiry bumped the epoch and
 * renumbered B from 0 under it, and the broker appended B again: the log read {@code [C, A, B, B]}.
 */
class ExpiredBatchDuplicateTest
{
    private static final long DELIVERY_TIMEOUT_MS = 6_000;

    @TempDir
    Path dir;

    @Test
    void aBatchThatExpiredWithItsOutcomeUnknownLeavesTheBatchBehindItWrittenOnce() throws Exception
    {
        final int dead;
        try (ServerSocket s = new ServerSocket(0))
        {
            dead = s.getLocalPort();
        }
        try (DroppingProxy proxy = new DroppingProxy(1, 0.0, true);
            FerriteFixture ferrite = new FerriteFixture(dir,
                Map.of("advertised.listeners", "PLAINTEXT://127.0.0.1:" + proxy.port())))
        {
            final int brokerPort = ferrite.broker.address().getPort();
            proxy.target(brokerPort);
            ferrite.createTopic("t", 1);
            final short[] errors = {-99, -99, -99};
            final short epoch;
            final ProducerConfig config = new ProducerConfig().bootstrapServers("127.0.0.1:" + proxy.port())
                .enableIdempotence(true).batchSize(256).lingerMs(100_000).retryBackoffMs(10).reconnectBackoffMs(10, 50)
                .requestTimeoutMs(60_000).deliveryTimeoutMs(DELIVERY_TIMEOUT_MS);
            try (Producer producer = new Producer(config, (tag, t, p, offset, error) -> errors[(int)tag] = error))
            {
                assertEquals(1, producer.awaitPartitions("t", 30_000));
                send(producer, "C", 0);
                FerriteFixture.drain(producer);
                assertEquals(0, errors[0]);

                proxy.muteAnswers(true); // A's and B's answers will not get back
                send(producer, "A", 1);
                final long aCreated = System.nanoTime();
                // B is made half a delivery timeout after A: it is still waiting when A expires
                run(producer, () -> System.nanoTime() - aCreated >= DELIVERY_TIMEOUT_MS * 500_000L, "half A's timeout");
                send(producer, "B", 2); // seals A
                producer.flush();
                run(producer, () -> logEnd(ferrite) == 3, "the broker appended A and B");
                proxy.target(dead); // the broker unreachable until A expires
                proxy.cutAll();
                proxy.muteAnswers(false);
                run(producer, () -> errors[1] != -99, "A completed");
                assertEquals(ClientErrors.DELIVERY_TIMEOUT, errors[1], "A, resent into a dead port until it expired");
                assertEquals(-99, errors[2], "B still waiting");
                proxy.target(brokerPort);
                FerriteFixture.drain(producer);
                assertEquals(0, errors[2], "B (its copy in the log found by its sequence)");
                epoch = producer.partitionState("t", 0).producerEpoch;
            }
            final List<String> values = new ArrayList<>();
            for (final ConsumerRecord<byte[], byte[]> r : FerriteFixture.read(ferrite.bootstrap(), "t", 0, 3))
            {
                values.add(new String(r.value(), 0, 1));
            }
            assertEquals(List.of("C", "A", "B"), values);
            assertEquals(3, logEnd(ferrite), "the log holds each record once");
            assertEquals(0, epoch, "nothing bumped: B showed that A arrived");
        }
    }

    private static long logEnd(final FerriteFixture ferrite)
    {
        return ferrite.broker.topics().topic("t").partitions[0].log.logEndOffset();
    }

    /** Runs the duty cycle until {@code done} (60 s at most). */
    private static void run(final Producer producer, final BooleanSupplier done, final String what)
    {
        final long deadline = System.nanoTime() + 60_000_000_000L;
        while (!done.getAsBoolean())
        {
            assertTrue(System.nanoTime() - deadline < 0, what + " within 60 s\n" + producer.describeState());
            if (producer.doWork() == 0)
            {
                Thread.onSpinWait();
            }
        }
    }

    private static void send(final Producer producer, final String letter, final int tag)
    {
        final byte[] bytes = new byte[150];
        java.util.Arrays.fill(bytes, (byte)letter.charAt(0));
        assertEquals(0, producer.send("t", 0, null, 0, -1, new UnsafeBuffer(bytes), 0, bytes.length, null, -1, tag));
    }
}
