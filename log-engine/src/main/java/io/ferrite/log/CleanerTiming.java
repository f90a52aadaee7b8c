package io.ferrite.log;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;

/**
 * A diagnostic, off unless the JVM starts with {@code -Dferrite.cleaner.stageTiming=true} ({@link #PROPERTY}, read once
 * into {@link #ENABLED}, so the JIT folds every call away when it is off): each clean of a cleaner thread timed stage
 * by stage, from the duty cycle that chooses the log to its {@code cleaner-offset-checkpoint} written, and logged as
 * one INFO line of {@code io.ferrite.log.CleanerTiming} when the checkpoint is written.
 *
 * <p>Each {@link #mark} ends the interval since the previous one and adds it to the stage named, so the stages
 * partition the clean's wall time without gaps (a stage marked several times — one per group, one per new segment —
 * sums its intervals and counts them). Each interval also gets the thread's CPU time and run-queue wait from
 * {@code /proc/thread-self/schedstat} (Linux; -1 elsewhere): wall minus CPU minus wait is the time the thread was
 * blocked (an fsync, a page fault's read, a lock). A mark costs two clock reads and one {@code pread} of that file
 * (a few microseconds; a clean of ten groups makes about 100).
 *
 * <p>Per thread: a cleaner thread {@link #begin}s at the start of each duty cycle and {@link #end}s after the
 * checkpoint; marks on a thread that has not begun (a test's replacement on its own thread) do nothing. Not for the
 * append or fetch paths: only the cleaner's code calls it.
 */
public final class CleanerTiming
{
    /** The JVM system property that turns it on. */
    public static final String PROPERTY = "ferrite.cleaner.stageTiming";
    /** {@link #PROPERTY} as the JVM started. */
    public static final boolean ENABLED = Boolean.getBoolean(PROPERTY);

    /** The stages of one clean, in the order they come. */
    public enum Stage
    {
        /** The duty cycle's start to the log chosen ({@code CleanerManager.grabFilthiest}). */
        CHOICE,
        /** The segments' view taken and the offset map built over the dirty section. */
        MAP,
        /** The producer state's copy (every live producer's last batch), the retention's reset, the grouping. */
        PRODUCER_STATE,
        /** Per group: its aborted transactions collected, the run checked, its transaction indexes read. */
        GROUP_SETUP,
        /** Per new segment: its {@code .cleaned} files created (the log sized to {@code segment.bytes}, sparse). */
        CREATE,
        /** The group's batches filtered and the kept ones appended (index entries included), throttle included. */
        COPY,
        /** Per new segment: its index files made and every file cut to its data; per group: the log's mtime set. */
        FINISH,
        /** Per new segment: its files fsynced (the log's {@code fdatasync}, the indexes' {@code msync}, a {@code .txnindex}). */
        FSYNC_SEGMENT,
        /** Per new segment: its files closed and unmapped (the indexes' close flushes them again). */
        CLOSE,
        /** Per group: every file but the first {@code .log} renamed to {@code .swap}. */
        RENAME,
        /** Per group, under the segments lock: the commit, the old files renamed, the new ones opened and published. */
        SWAP,
        /** Per group: the log directory fsynced (the swap's renames durable). */
        FSYNC_DIR,
        /** The end of the compaction after its last group, and the cleaner's report of it. */
        OTHER,
        /** The {@code cleaner-offset-checkpoint} written ({@code .tmp}, fsync, rename, directory fsync). */
        CHECKPOINT
    }

    private static final Logger LOG = LoggerFactory.getLogger(CleanerTiming.class);
    private static final Stage[] STAGES = Stage.values();
    private static final ThreadLocal<CleanerTiming> CURRENT = new ThreadLocal<>();

    private final long[] wallNs = new long[STAGES.length];
    private final long[] cpuNs = new long[STAGES.length];
    private final long[] waitNs = new long[STAGES.length];
    private final int[] count = new int[STAGES.length];
    private final FileChannel schedstat;
    private final ByteBuffer read = ByteBuffer.allocateDirect(128);
    private boolean running;
    private Instant startedAt;
    private long startNs;
    private long lastNs;
    private long lastCpuNs;
    private long lastWaitNs;
    private long parsedCpuNs;
    private long parsedWaitNs;

    private CleanerTiming(final FileChannel schedstat)
    {
        this.schedstat = schedstat;
    }

    /** Starts timing a duty cycle of the calling thread (a cleaner thread's, before it chooses a log). */
    static void begin()
    {
        if (!ENABLED)
        {
            return;
        }
        CleanerTiming t = CURRENT.get();
        if (t == null)
        {
            t = new CleanerTiming(openSchedstat());
            CURRENT.set(t);
        }
        t.start();
    }

    /** Ends the interval since the calling thread's previous mark, adding it to {@code stage}. */
    public static void mark(final Stage stage)
    {
        if (!ENABLED)
        {
            return;
        }
        final CleanerTiming t = CURRENT.get();
        if (t != null && t.running)
        {
            t.add(stage);
        }
    }

    /**
     * Ends the duty cycle's timing: logs the stages of the clean of {@code log} (nothing when it chose none, null).
     */
    static void end(final Object log)
    {
        if (!ENABLED)
        {
            return;
        }
        final CleanerTiming t = CURRENT.get();
        if (t != null && t.running)
        {
            t.running = false;
            if (log != null)
            {
                LOG.info("{}", t.report(log));
            }
        }
    }

    /** Gives back the calling thread's file (a cleaner thread's close). */
    static void close()
    {
        if (!ENABLED)
        {
            return;
        }
        final CleanerTiming t = CURRENT.get();
        CURRENT.remove();
        if (t != null && t.schedstat != null)
        {
            try
            {
                t.schedstat.close();
            }
            catch (final IOException ignored)
            {
                // a /proc file: nothing to lose
            }
        }
    }

    private void start()
    {
        java.util.Arrays.fill(wallNs, 0);
        java.util.Arrays.fill(cpuNs, 0);
        java.util.Arrays.fill(waitNs, 0);
        java.util.Arrays.fill(count, 0);
        running = true;
        startedAt = Instant.now();
        readSchedstat();
        lastCpuNs = parsedCpuNs;
        lastWaitNs = parsedWaitNs;
        startNs = System.nanoTime();
        lastNs = startNs;
    }

    private void add(final Stage stage)
    {
        final long now = System.nanoTime();
        readSchedstat();
        final int i = stage.ordinal();
        wallNs[i] += now - lastNs;
        cpuNs[i] += parsedCpuNs - lastCpuNs;
        waitNs[i] += parsedWaitNs - lastWaitNs;
        count[i]++;
        lastNs = now;
        lastCpuNs = parsedCpuNs;
        lastWaitNs = parsedWaitNs;
    }

    /**
     * One line: {@code clean stages of <log>: start <epoch us> us, wall <ms> cpu <ms> wait <ms>; <stage>=<wall ms>/<cpu
     * ms>/<run-queue wait ms>/<count> ...} (stages never marked left out; cpu and wait -1 without schedstat).
     */
    private String report(final Object log)
    {
        final StringBuilder sb = new StringBuilder("clean stages of ").append(log).append(": start ")
            .append(startedAt.getEpochSecond() * 1_000_000L + startedAt.getNano() / 1_000).append(" us");
        long wall = 0;
        long cpu = 0;
        long wait = 0;
        for (int i = 0; i < STAGES.length; i++)
        {
            wall += wallNs[i];
            cpu += cpuNs[i];
            wait += waitNs[i];
        }
        final boolean known = schedstat != null;
        sb.append(", wall ").append(ms(wall)).append(" cpu ").append(ms(known ? cpu : -1_000_000))
            .append(" wait ").append(ms(known ? wait : -1_000_000)).append(';');
        for (int i = 0; i < STAGES.length; i++)
        {
            if (count[i] > 0)
            {
                sb.append(' ').append(STAGES[i].name().toLowerCase()).append('=').append(ms(wallNs[i])).append('/')
                    .append(ms(known ? cpuNs[i] : -1_000_000)).append('/').append(ms(known ? waitNs[i] : -1_000_000))
                    .append('/').append(count[i]);
            }
        }
        return sb.toString();
    }

    private static String ms(final long ns)
    {
        return String.format(java.util.Locale.ROOT, "%.3f", ns / 1e6);
    }

    private static FileChannel openSchedstat()
    {
        try
        {
            // resolved at the open: this thread's own, re-read from offset 0 at each mark
            return FileChannel.open(Path.of("/proc/thread-self/schedstat"), StandardOpenOption.READ);
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            return null;
        }
    }

    /** The thread's CPU ns and run-queue wait ns into {@link #parsedCpuNs} and {@link #parsedWaitNs} (-1: unknown). */
    private void readSchedstat()
    {
        parsedCpuNs = -1;
        parsedWaitNs = -1;
        if (schedstat == null)
        {
            return;
        }
        try
        {
            read.clear();
            schedstat.read(read, 0); // one line of three numbers, ~30 bytes: one read
            read.flip();
            parsedCpuNs = nextNumber();
            parsedWaitNs = nextNumber();
        }
        catch (final IOException ex)
        {
            parsedCpuNs = -1;
            parsedWaitNs = -1;
        }
    }

    /** The next decimal number of {@link #read}, skipping what precedes it; -1 when none. */
    private long nextNumber()
    {
        while (read.hasRemaining() && !Character.isDigit(read.get(read.position())))
        {
            read.get();
        }
        if (!read.hasRemaining())
        {
            return -1;
        }
        long n = 0;
        while (read.hasRemaining() && Character.isDigit(read.get(read.position())))
        {
            n = n * 10 + (read.get() - '0');
        }
        return n;
    }
}
