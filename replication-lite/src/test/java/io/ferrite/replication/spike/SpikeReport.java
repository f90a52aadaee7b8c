package io.ferrite.replication.spike;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;

/**
 * SPIKE (issue 14, consensus library choice): what a spike node prints on its standard output for
 * {@link QuorumSpike} to read, one event a line, {@code EVENT key=value ...}, wall-clock milliseconds in
 * {@code wall=} so that the parent can subtract its own kill time (same machine, same clock).
 */
final class SpikeReport
{
    private SpikeReport()
    {
    }

    static synchronized void event(final String name, final String fields)
    {
        System.out.println(name + " wall=" + System.currentTimeMillis() + " " + fields);
        System.out.flush();
    }

    /** p50/p99/max of one-record commit latencies, in microseconds. */
    static String percentiles(final long[] nanos)
    {
        final long[] sorted = nanos.clone();
        Arrays.sort(sorted);
        return "n=" + sorted.length +
            " p50us=" + sorted[(int)(sorted.length * 0.50)] / 1000 +
            " p99us=" + sorted[(int)(sorted.length * 0.99)] / 1000 +
            " maxus=" + sorted[sorted.length - 1] / 1000;
    }

    /** Threads (total and by name with digits stripped), heap used after a GC, and the process's RSS. */
    static void footprint(final String tag)
    {
        System.gc();
        final Runtime rt = Runtime.getRuntime();
        final long heapUsed = rt.totalMemory() - rt.freeMemory();
        final Map<String, Integer> byName = new TreeMap<>();
        final Thread[] threads = Thread.getAllStackTraces().keySet().toArray(new Thread[0]);
        for (final Thread t : threads)
        {
            byName.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
        }
        event("FOOTPRINT", "tag=" + tag + " threads=" + threads.length + " heapUsedMiB=" + heapUsed / (1 << 20) +
            " rssMiB=" + rssKib() / 1024 + " names=" + byName.toString().replace(' ', '_'));
    }

    private static long rssKib()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("VmRSS:"))
                {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        }
        catch (final IOException ex)
        {
            // fall through
        }
        return -1;
    }
}
