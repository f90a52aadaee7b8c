package io.ferrite.broker.metrics;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A reading under way when the gate closes ends before close returns; a reading after it reads nothing. */
class CounterReadGateTest
{
    private static final Duration DEADLINE = Duration.ofSeconds(30);

    @Test
    void closeWaitsForTheReadingUnderWayAndLaterReadingsReadNothing() throws Exception
    {
        final CounterReadGate gate = new CounterReadGate();
        final CountDownLatch reading = new CountDownLatch(1);
        final CountDownLatch release = new CountDownLatch(1);
        final CompletableFuture<String> read = CompletableFuture.supplyAsync(() -> gate.read(() ->
        {
            reading.countDown();
            await(() -> release.await(30, TimeUnit.SECONDS), DEADLINE, "released");
            return "read";
        }, "closed"));
        assertTrue(reading.await(30, TimeUnit.SECONDS));
        final Thread closer = new Thread(gate::close, "closer");
        closer.start();
        await(() -> inGateClose(closer), DEADLINE, () -> "close waits for the reading: " + Arrays.toString(closer.getStackTrace()));
        release.countDown();
        closer.join(DEADLINE.toMillis());
        assertEquals(Thread.State.TERMINATED, closer.getState(), "close returned once the reading ended");
        assertEquals("read", read.get(30, TimeUnit.SECONDS));
        assertEquals("closed", gate.read(() -> "read", "closed"));
        gate.close(); // twice: nothing more
    }

    /** Whether {@code thread} is inside {@link CounterReadGate#close} (waiting for the lock). */
    static boolean inGateClose(final Thread thread)
    {
        return thread.getState() == Thread.State.WAITING && Arrays.stream(thread.getStackTrace())
            .anyMatch(e -> e.getClassName().equals(CounterReadGate.class.getName()) && e.getMethodName().equals("close"));
    }
}
