package io.ferrite.broker.topic;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PartitionTest
{
    private final Partition partition = new Partition("t", 0, null, 0);

    @Test
    void anAdvanceWakesOnlyTheNetworkThreadsWithAFetchParked()
    {
        assertFalse(partition.hasParkedFetches());
        partition.fetchParked(0);
        partition.fetchParked(2);
        partition.fetchParked(2);
        assertTrue(partition.hasParkedFetches());
        assertTrue(partition.parkedBy(0));
        assertFalse(partition.parkedBy(1));
        assertTrue(partition.parkedBy(2));
        assertFalse(partition.parkedBy(3));

        partition.fetchUnparked();
        partition.fetchUnparked();
        assertTrue(partition.hasParkedFetches(), "one of three is still parked");
        partition.fetchUnparked();
        assertFalse(partition.hasParkedFetches());
        for (int n = 0; n < 40; n++)
        {
            assertFalse(partition.parkedBy(n), "the last unpark clears the threads too: " + n);
        }
    }

    @Test
    void networkThreadsFrom32OnAreWokenWhenAnyFetchIsParked()
    {
        partition.fetchParked(40);
        assertTrue(partition.parkedBy(40));
        assertTrue(partition.parkedBy(33));
        assertTrue(partition.parkedBy(0), "beyond 32 threads the bits cannot say who: all are woken");
        partition.fetchUnparked();
        assertFalse(partition.parkedBy(40));
    }

    @Test
    void concurrentParksAndUnparksLoseNoFetchAndNoThread() throws Exception
    {
        final int threads = 4;
        final int rounds = 100_000;
        final ExecutorService pool = Executors.newFixedThreadPool(threads);
        try
        {
            final CountDownLatch start = new CountDownLatch(1);
            final Future<?>[] done = new Future<?>[threads];
            for (int t = 0; t < threads; t++)
            {
                final int networkThread = t;
                done[t] = pool.submit(() ->
                {
                    start.await();
                    for (int i = 0; i < rounds; i++)
                    {
                        partition.fetchParked(networkThread);
                        if (!partition.parkedBy(networkThread))
                        {
                            throw new AssertionError("thread " + networkThread + " parked a fetch but would not be woken");
                        }
                        partition.fetchUnparked();
                    }
                    return null;
                });
            }
            start.countDown();
            for (final Future<?> f : done)
            {
                f.get();
            }
        }
        finally
        {
            pool.shutdownNow();
        }
        assertFalse(partition.hasParkedFetches());
    }
}
