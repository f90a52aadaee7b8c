package io.ferrite.broker.metrics;

import io.ferrite.broker.metrics.RequestTimes.Stage;
import io.ferrite.wire.message.ApiKeys;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The recording side of the request times: what a network thread records is what the readers read (counts, stages,
 * kinds apart, values beyond the range kept at its top), and recording allocates nothing while a reader swaps the
 * recorders all along.
 */
class RequestTimesTest
{
    private static final int PRODUCE = ApiKeys.PRODUCE.id;

    @Test
    void whatIsRecordedIsReadPerKindAndStage()
    {
        final BrokerCounters counters = BrokerCounters.inMemory(2);
        final NetworkCounters net0 = counters.network(0);
        final NetworkCounters net1 = counters.network(1);
        // received at 0, handled at 10 us, handler done at 30 us, answer ready at 1030 us, sent at 1040 us
        net0.request(ApiKeys.PRODUCE);
        net0.times().record(PRODUCE, 0, 10_000, 30_000, 1_030_000, 1_040_000);
        net1.request(ApiKeys.PRODUCE);
        net1.times().record(PRODUCE, 0, 10_000, 30_000, 1_030_000, 1_040_000);
        net1.request(RequestKinds.FETCH_FOLLOWER);
        net1.times().record(RequestKinds.FETCH_FOLLOWER, 0, 0, 0, 0, 120_000_000_000L); // two minutes: kept at 60 s
        final RequestLatencies latencies = counters.latencies();
        final RequestLatencies.Reading total = latencies.read(PRODUCE, Stage.TOTAL);
        assertEquals(2, total.count(), "both threads' produces");
        assertEquals(1.04, total.p50(), 0.02, "1040 us");
        assertEquals(0.01, latencies.read(PRODUCE, Stage.REQUEST_QUEUE).p99(), 0.001);
        assertEquals(0.02, latencies.read(PRODUCE, Stage.LOCAL).p99(), 0.002);
        assertEquals(1.0, latencies.read(PRODUCE, Stage.REMOTE).p99(), 0.07);
        assertEquals(0.01, latencies.read(PRODUCE, Stage.RESPONSE_SEND).p99(), 0.001);
        assertEquals(2, latencies.read(PRODUCE, Stage.TOTAL).count(), "read again: nothing new, nothing lost");
        assertEquals(0, latencies.read(ApiKeys.FETCH.id, Stage.TOTAL).count(), "no consumer fetched");
        assertEquals(60_000, latencies.read(RequestKinds.FETCH_FOLLOWER, Stage.TOTAL).max(), 600, "kept at the top");
        assertEquals(null, latencies.read(RequestKinds.COUNT, Stage.TOTAL), "no such kind");
        // Kafka's Fetch: both kinds of fetch, summed when read
        net0.times().record(ApiKeys.FETCH.id, 0, 0, 2_000_000, 2_000_000, 2_000_000); // a consumer's, 2 ms
        final RequestLatencies.Reading fetches = latencies.read(RequestKinds.FETCH_ALL, Stage.TOTAL);
        assertEquals(2, fetches.count(), "the follower's and the consumer's fetch");
        assertEquals(60_000, fetches.max(), 600);
        assertEquals(2.0, fetches.min(), 0.02);
        assertEquals(1, latencies.read(RequestKinds.FETCH_FOLLOWER, Stage.TOTAL).count(), "each kind still apart");
        assertEquals(1, latencies.read(ApiKeys.FETCH.id, Stage.TOTAL).count());
        assertEquals(2.0, latencies.read(RequestKinds.FETCH_ALL, Stage.LOCAL).max(), 0.13, "every stage");
        assertEquals("Fetch", RequestKinds.name(RequestKinds.FETCH_ALL));
        assertEquals("FetchConsumer", RequestKinds.name(ApiKeys.FETCH.id));
        assertEquals("FetchFollower", RequestKinds.name(RequestKinds.FETCH_FOLLOWER));
        assertEquals("Produce", RequestKinds.name(PRODUCE));
    }

    /**
     * A kind's histograms are made at its first request on a thread, not at the start (Kafka's 92 kinds on each network
     * thread were 3.2 MB of heap made at the start, most for APIs never requested).
     */
    @Test
    void aKindsHistogramsAreMadeAtItsFirstRequest()
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long me = Thread.currentThread().getId();
        BrokerCounters.inMemory(1); // the classes loaded
        final long before = threads.getThreadAllocatedBytes(me);
        final BrokerCounters counters = BrokerCounters.inMemory(3);
        final long made = threads.getThreadAllocatedBytes(me) - before;
        assertTrue(made < 1_000_000, "three network threads' counters and times made, no histogram: " + made + " B");
        final RequestTimes times = counters.network(1).times();
        for (int kind = 0; kind < RequestKinds.COUNT; kind++)
        {
            assertEquals(null, times.swap(kind), "nothing of kind " + kind + " yet");
        }
        final long beforeFirst = threads.getThreadAllocatedBytes(me);
        times.record(PRODUCE, 0, 1_000, 2_000, 3_000, 4_000);
        final long first = threads.getThreadAllocatedBytes(me) - beforeFirst;
        assertTrue(first > 0 && first < 100_000, "the Produce histograms made at the first produce: " + first + " B");
        assertEquals(1, times.swap(PRODUCE)[Stage.TOTAL.ordinal()].getTotalCount());
        assertEquals(null, times.swap(ApiKeys.FETCH.id), "other kinds still have none");
        assertEquals(0, counters.latencies().read(ApiKeys.METADATA.id, Stage.TOTAL).count(), "a kind never requested reads empty");
    }

    @Test
    void recordingAllocatesNothingWhileAReaderSwapsTheRecorders() throws Exception
    {
        final BrokerCounters counters = BrokerCounters.inMemory(1);
        final NetworkCounters net = counters.network(0);
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicLong reads = new AtomicLong();
        final Thread reader = new Thread(() ->
        {
            while (!stop.get())
            {
                counters.latencies().read(PRODUCE, Stage.TOTAL);
                counters.latencies().read(ApiKeys.FETCH.id, Stage.LOCAL);
                reads.incrementAndGet();
            }
        }, "reader");
        reader.start();
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long me = Thread.currentThread().getId();
        final List<Long> windows = new ArrayList<>();
        final List<Long> swaps = new ArrayList<>();
        try
        {
            record(net.times(), 200_000); // warm-up: the JIT compiles the recording
            for (int w = 0; w < 8; w++)
            {
                final long before = threads.getThreadAllocatedBytes(me);
                final long readsBefore = reads.get();
                record(net.times(), 100_000);
                final long allocated = threads.getThreadAllocatedBytes(me) - before;
                windows.add(allocated);
                swaps.add(reads.get() - readsBefore);
                if (allocated == 0 && reads.get() > readsBefore)
                {
                    break;
                }
            }
        }
        finally
        {
            stop.set(true);
            reader.join();
        }
        assertTrue(windows.get(windows.size() - 1) == 0 && swaps.get(swaps.size() - 1) > 0,
            "a window of 100,000 recordings with the recorders swapped meanwhile allocated nothing: allocated " + windows
                + ", readings during each " + swaps);
        assertEquals((200_000 + windows.size() * 100_000L) / 2, counters.latencies().read(PRODUCE, Stage.TOTAL).count(),
            "every produce recorded was read, none lost in the swaps");
    }

    private static void record(final RequestTimes times, final int requests)
    {
        long t = System.nanoTime();
        for (int i = 0; i < requests; i++)
        {
            final int kind = (i & 1) == 0 ? PRODUCE : ApiKeys.FETCH.id;
            times.record(kind, t, t + 1_000, t + 5_000 + (i & 1023) * 100L, t + 20_000, t + 25_000);
            t += 30_000;
        }
    }
}
