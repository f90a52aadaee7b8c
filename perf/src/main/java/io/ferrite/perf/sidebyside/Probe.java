package io.ferrite.perf.sidebyside;

import org.HdrHistogram.Histogram;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What else happened on the machine while a workload ran, to tell the broker's share of a latency
 * tail from the platform's: the stalls a thread of the runner saw when it asked to sleep 1 ms (as
 * jHiccup measures them: the oversleep, whatever its cause — scheduling on two shared cores, the
 * runner's own GC, the hypervisor), the runner JVM's GC time, and the broker JVM's GC pauses and CPU
 * time over the same interval.
 */
final class Probe implements AutoCloseable
{
    private static final long SLEEP_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** The figures of one interval. */
    record Figures(Histogram hiccups, double runnerGcMs, long runnerGcCount, BrokerProcess.GcPauses brokerGc, double brokerCpuMs)
    {
    }

    private final BrokerProcess broker;
    private final Histogram hiccups = new Histogram(TimeUnit.SECONDS.toMicros(60), 3);
    private final Thread sleeper;
    private final long gcMsBefore;
    private final long gcCountBefore;
    private final long brokerGcLogOffset;
    private final long brokerCpuBefore;
    private volatile boolean running = true;

    private Probe(final BrokerProcess broker)
    {
        this.broker = broker;
        this.gcMsBefore = runnerGc(true);
        this.gcCountBefore = runnerGc(false);
        this.brokerGcLogOffset = broker.gcLogLength();
        this.brokerCpuBefore = broker.cpuNanos();
        this.sleeper = new Thread(this::sleepLoop, "hiccup-meter");
        this.sleeper.setDaemon(true);
        this.sleeper.start();
    }

    /** Starts measuring now. */
    static Probe start(final BrokerProcess broker)
    {
        return new Probe(broker);
    }

    private void sleepLoop()
    {
        while (running)
        {
            final long before = System.nanoTime();
            LockSupport.parkNanos(SLEEP_NS);
            final long over = System.nanoTime() - before - SLEEP_NS;
            hiccups.recordValue(Math.max(0, over / 1000));
        }
    }

    /** Stops measuring and answers what happened since {@link #start}. */
    Figures stop() throws InterruptedException
    {
        running = false;
        sleeper.join();
        final long cpu = broker.cpuNanos();
        return new Figures(hiccups, runnerGc(true) - gcMsBefore, runnerGc(false) - gcCountBefore,
            broker.gcPausesSince(brokerGcLogOffset), cpu < 0 || brokerCpuBefore < 0 ? -1 : (cpu - brokerCpuBefore) / 1e6);
    }

    @Override
    public void close() throws InterruptedException
    {
        if (running)
        {
            stop();
        }
    }

    private static long runnerGc(final boolean time)
    {
        long sum = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
        {
            if (gc.getName().contains("Concurrent"))
            {
                continue; // G1's concurrent cycles (JDK 21+) run beside the application, they are no pause
            }
            sum += Math.max(0, time ? gc.getCollectionTime() : gc.getCollectionCount());
        }
        return sum;
    }
}
