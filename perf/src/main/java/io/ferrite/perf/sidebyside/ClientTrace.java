package io.ferrite.perf.sidebyside;

import io.ferrite.client.ProducerTrace;

import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * A per-record profile of a {@link FerriteClientCell} ({@code -Dclientlatency.trace=DIR}): for each record its intended
 * time, when {@code send} took it, when its batch was drained into a request, when that request was written whole to the
 * socket, when the answer was read and when the completion came; and the gaps of the sender's loop (the thread not
 * running: descheduled, a GC or safepoint pause, a long park). Written as {@code DIR/<cell>.csv} (us from the cell's
 * start) with a summary of the slowest records by stage on standard output. For profiling only: it allocates its
 * arrays up front and is not used by the recorded table.
 */
final class ClientTrace implements ProducerTrace
{
    private static final int MAX_GAPS = 4096;
    private static final java.util.concurrent.atomic.AtomicInteger CELLS = new java.util.concurrent.atomic.AtomicInteger();

    private final FixedRate schedule;
    private final long[] sent;
    private final long[] drained;
    private final long[] written;
    private final long[] answered;
    private final long[] acked;
    private final long[] gapAt = new long[MAX_GAPS];
    private final long[] gapNs = new long[MAX_GAPS];
    private int gaps;
    /** Answers with an error (retried or failed): how many, and the first few as "tag:error at us". */
    private int errors;
    private final StringBuilder firstErrors = new StringBuilder();
    private long lastLoopNs;
    private long drainedUpTo = -1;
    private long writtenUpTo = -1;
    private final long gcCountBefore = gcCount();
    private final long gcMsBefore = gcMs();

    ClientTrace(final FixedRate schedule)
    {
        this.schedule = schedule;
        this.sent = new long[schedule.total];
        this.drained = new long[schedule.total];
        this.written = new long[schedule.total];
        this.answered = new long[schedule.total];
        this.acked = new long[schedule.total];
    }

    /** The directory asked for, or null: no trace. */
    static Path directory()
    {
        final String d = System.getProperty("clientlatency.trace");
        return d == null ? null : Path.of(d);
    }

    void sent(final int i)
    {
        sent[i] = System.nanoTime();
    }

    void acked(final int i)
    {
        acked[i] = System.nanoTime();
    }

    /** Once a loop of the sender: a gap over 1 ms since the last is kept. */
    void loop(final long nowNs)
    {
        if (lastLoopNs != 0 && nowNs - lastLoopNs > 1_000_000L && gaps < MAX_GAPS)
        {
            gapAt[gaps] = lastLoopNs;
            gapNs[gaps++] = nowNs - lastLoopNs;
        }
        lastLoopNs = nowNs;
    }

    @Override
    public void onDrained(final long firstTag, final int recordCount)
    {
        final long now = System.nanoTime();
        for (long t = firstTag; t < firstTag + recordCount && t < drained.length; t++)
        {
            if (drained[(int)t] == 0)
            {
                drained[(int)t] = now;
            }
        }
        drainedUpTo = Math.max(drainedUpTo, firstTag + recordCount - 1);
    }

    @Override
    public void onWritten(final int nodeId)
    {
        final long now = System.nanoTime();
        for (long t = writtenUpTo + 1; t <= drainedUpTo && t < written.length; t++)
        {
            written[(int)t] = now;
        }
        writtenUpTo = Math.max(writtenUpTo, drainedUpTo);
    }

    @Override
    public void onAnswered(final long firstTag, final int recordCount, final short errorCode)
    {
        final long now = System.nanoTime();
        if (errorCode != 0)
        {
            if (errors++ < 8)
            {
                firstErrors.append(' ').append(firstTag).append('+').append(recordCount).append(':').append(errorCode)
                    .append(" at ").append(us(now, schedule.due(0)) / 1000).append(" ms;");
            }
            return; // retried: its answered time is the last answer's
        }
        for (long t = firstTag; t < firstTag + recordCount && t < answered.length; t++)
        {
            answered[(int)t] = now;
        }
    }

    /** Writes the CSV ({@code NN-topic.csv}, numbered in run order) and prints the slowest measured records, stage by stage (us), and the loop's gaps. */
    void report(final Path dir, final String topic) throws IOException
    {
        final String cell = String.format(Locale.ROOT, "%02d-%s", CELLS.incrementAndGet(), topic);
        Files.createDirectories(dir);
        final long origin = schedule.due(0);
        try (PrintWriter out = new PrintWriter(Files.newBufferedWriter(dir.resolve(cell + ".csv"))))
        {
            out.println("record,due_us,sent_us,drained_us,written_us,answered_us,acked_us");
            for (int i = 0; i < schedule.total; i++)
            {
                out.printf(Locale.ROOT, "%d,%d,%d,%d,%d,%d,%d%n", i, us(schedule.due(i), origin), us(sent[i], origin),
                    us(drained[i], origin), us(written[i], origin), us(answered[i], origin), us(acked[i], origin));
            }
            for (int g = 0; g < gaps; g++)
            {
                out.printf(Locale.ROOT, "# gap at %d us: %d us%n", us(gapAt[g], origin), gapNs[g] / 1000);
            }
        }
        final Integer[] order = new Integer[schedule.total - schedule.warm];
        for (int k = 0; k < order.length; k++)
        {
            order[k] = schedule.warm + k;
        }
        Arrays.sort(order, (a, b) -> Long.compare(latency(b), latency(a)));
        System.out.printf(Locale.ROOT, "trace %s: GCs in the runner %d (%d ms); loop gaps over 1 ms: %d, longest %d us; "
            + "answers with an error %d%s%n", cell, gcCount() - gcCountBefore, gcMs() - gcMsBefore, gaps, longestGap() / 1000,
            errors, firstErrors);
        System.out.println("  slowest records, us: due->sent sent->drained drained->written written->answered answered->acked total");
        for (int k = 0; k < Math.min(12, order.length); k++)
        {
            final int i = order[k];
            System.out.printf(Locale.ROOT, "  #%d at %d ms: %d %d %d %d %d = %d%n", i, us(schedule.due(i), origin) / 1000,
                step(schedule.due(i), sent[i]), step(sent[i], drained[i]), step(drained[i], written[i]),
                step(written[i], answered[i]), step(answered[i], acked[i]), latency(i) / 1000);
        }
        final int[] counts = new int[5];
        for (int k = 0; k < Math.max(1, order.length / 100); k++) // the slowest 1 %: which stage took most
        {
            final int i = order[k];
            final long[] steps = {step(schedule.due(i), sent[i]), step(sent[i], drained[i]), step(drained[i], written[i]),
                step(written[i], answered[i]), step(answered[i], acked[i])};
            int worst = 0;
            for (int s = 1; s < steps.length; s++)
            {
                worst = steps[s] > steps[worst] ? s : worst;
            }
            counts[worst]++;
        }
        System.out.printf(Locale.ROOT, "  slowest 1 %%, the stage that took most: due->sent %d, sent->drained %d, "
            + "drained->written %d, written->answered %d, answered->acked %d%n", counts[0], counts[1], counts[2], counts[3], counts[4]);
        for (int g = 0; g < gaps; g++)
        {
            if (gapNs[g] > 5_000_000L)
            {
                System.out.printf(Locale.ROOT, "  loop gap at %d ms: %d us%n", us(gapAt[g], origin) / 1000, gapNs[g] / 1000);
            }
        }
    }

    private long latency(final int i)
    {
        return acked[i] == 0 ? Long.MAX_VALUE : acked[i] - schedule.due(i);
    }

    private long longestGap()
    {
        long max = 0;
        for (int g = 0; g < gaps; g++)
        {
            max = Math.max(max, gapNs[g]);
        }
        return max;
    }

    private static long step(final long from, final long to)
    {
        return from == 0 || to == 0 ? -1 : (to - from) / 1000;
    }

    private static long us(final long t, final long origin)
    {
        return t == 0 ? -1 : (t - origin) / 1000;
    }

    private static long gcCount()
    {
        long n = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
        {
            n += Math.max(0, gc.getCollectionCount());
        }
        return n;
    }

    private static long gcMs()
    {
        long n = 0;
        for (final GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans())
        {
            n += Math.max(0, gc.getCollectionTime());
        }
        return n;
    }
}
