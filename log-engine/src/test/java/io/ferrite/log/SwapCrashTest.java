package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Segment replacements killed with SIGKILL at random points ({@link SwapCrashChild} in a child JVM,
 * {@code -Dferrite.swap.crash.rounds}: 4 by default, 60 in the {@code long} profile). After each kill
 * the log is opened here (recovery after an unclean stop: {@link SwapRecovery}, then the scan of the
 * cleaned segments) and checked against what the child said: every offset appended and not dropped
 * by a replacement that finished is there, byte-checked (CRC, and the timestamp the child gave that
 * offset); the offsets a finished replacement dropped are gone; the replacement the kill cut is
 * either all there or all gone (its run's offset range entirely old or entirely new); every segment
 * holds only batches of its own range; no temporary file is left.
 */
class SwapCrashTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.swap.crash.rounds", 4);

    @TempDir
    Path dir;

    @Test
    void aReplacementKilledAnywhereLeavesEachRangeAllOldOrAllNew() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("swap crash test seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        final Random random = new Random(seed);
        final BitSet cleaned = new BitSet(); // offsets a finished replacement dropped
        int cut = 0;
        int committed = 0;
        for (int round = 0; round < ROUNDS; round++)
        {
            final long[] inProgress = runAndKill(random, 1 + random.nextInt(60), cleaned);
            cut += inProgress != null ? 1 : 0;
            committed += verify(cleaned, inProgress) ? 1 : 0;
        }
        // how many kills landed inside a replacement, and how many of those after its commit (as far as the offsets
        // tell: a replacement of segments cleaned before drops nothing more), for the log of the run
        System.out.println(cut + " of " + ROUNDS + " kills cut a replacement, " + committed + " of them after its commit");
    }

    /** Runs a child until it has printed {@code lines} lines of replacements, kills it; returns the run it was in, or null. */
    private long[] runAndKill(final Random random, final int lines, final BitSet cleaned) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(java, SwapCrashChild.class.desiredAssertionStatus() ? "-ea" : "-da",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            SwapCrashChild.class.getName(), dir.toString(), Long.toString(random.nextLong()))
            .redirectErrorStream(true)
            .start();
        long[] inProgress = null;
        final List<String> other = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            int seen = 0;
            long runStarted = 0;
            long runNanos = 0; // what the replacements seen took, from RUN to DONE as read here
            String line;
            while ((seen < lines || inProgress == null) && (line = out.readLine()) != null)
            {
                final long[] run = line(line, inProgress, cleaned, other);
                if (run != inProgress)
                {
                    if (run != null)
                    {
                        runStarted = System.nanoTime();
                    }
                    else
                    {
                        runNanos += System.nanoTime() - runStarted;
                    }
                    inProgress = run;
                    seen++;
                }
            }
            if (seen < lines)
            {
                fail("child ended after " + seen + " lines: " + String.join("\n", other));
            }
            // the kill at a random point of the replacement just begun, in a round of three anywhere in it (about as
            // long as the ones seen took), else in its last part, where the commit and the renames are (writing and
            // fsyncing the new segments take most of a replacement): a spin, not a sleep, so that the point is not
            // rounded to the scheduler's tick
            final double at = random.nextInt(3) == 0 ? 1.5 * random.nextDouble() : 0.7 + 0.5 * random.nextDouble();
            final long until = System.nanoTime() + (long)(at * runNanos / Math.max(1, seen / 2));
            while (System.nanoTime() < until)
            {
                Thread.onSpinWait();
            }
            child.toHandle().destroyForcibly(); // SIGKILL, the pipe left open (Process.destroyForcibly closes it)
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            // what it printed before it died: a run it began (RUN is printed before the replacement starts) and
            // did not end (DONE after it returns) is the one the kill cut
            while ((line = out.readLine()) != null)
            {
                inProgress = line(line, inProgress, cleaned, other);
            }
        }
        finally
        {
            child.destroyForcibly();
        }
        assertEquals(137, child.exitValue(), "killed by SIGKILL");
        return inProgress;
    }

    /** One line of the child's: the run in progress after it. */
    private static long[] line(final String line, final long[] inProgress, final BitSet cleaned, final List<String> other)
    {
        final String[] words = line.split(" ");
        if (line.startsWith("RUN "))
        {
            return new long[] {Long.parseLong(words[1]), Long.parseLong(words[2])};
        }
        if (line.startsWith("DONE "))
        {
            assertEquals(SegmentReplacer.REPLACED, Integer.parseInt(words[3]), line);
            markCleaned(cleaned, Long.parseLong(words[1]), Long.parseLong(words[2]));
            return null;
        }
        if (!line.contains("SLF4J") && !line.contains(" INFO ") && !line.contains(" WARN "))
        {
            other.add(line);
        }
        return inProgress;
    }

    private static void markCleaned(final BitSet cleaned, final long from, final long to)
    {
        for (long o = from; o < to; o++)
        {
            if (SwapCrashChild.dropped(o))
            {
                cleaned.set((int)o);
            }
        }
    }

    /**
     * Opens the log and checks it; a replacement the kill cut is taken as done when its offsets are
     * gone (then true).
     */
    private boolean verify(final BitSet cleaned, final long[] inProgress) throws Exception
    {
        final BitSet present = new BitSet();
        final long end;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log(SwapCrashChild.TOPIC, 0);
            end = log.logEndOffset();
            assertEquals(0, log.logStartOffset());
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            long last = -1;
            while (tailer.next(Long.MAX_VALUE, batch))
            {
                assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), "batch at " + batch.baseOffset());
                assertTrue(batch.baseOffset() > last, "offsets increase");
                assertEquals(SwapCrashChild.T0 + batch.baseOffset(), batch.maxTimestamp(), "the batch of its offset");
                last = batch.lastOffset();
                present.set((int)batch.baseOffset());
            }
            final Segment[] segs = log.segments();
            for (int i = 0; i + 1 < segs.length; i++)
            {
                final int size = segs[i].size();
                for (int p = 0; p < size; p = segs[i].frameEnd(p, size))
                {
                    assertTrue(segs[i].batchBaseOffset(p) >= segs[i].baseOffset && segs[i].batchLastOffset(p) < segs[i + 1].baseOffset,
                        "segment " + segs[i].baseOffset + " holds only its own range");
                }
            }
        }
        try (Stream<Path> files = Files.list(dir.resolve(SwapCrashChild.TOPIC + "-0")))
        {
            assertEquals(List.of(), files.map(p -> p.getFileName().toString())
                .filter(n -> n.endsWith(".cleaned") || n.endsWith(".swap") || n.endsWith(".deleted")).toList());
        }
        boolean cutAsDone = false;
        if (inProgress != null)
        {
            // the cut run: its offsets not cleaned before are all there (old) or all gone (new)
            int there = 0;
            int gone = 0;
            for (long o = inProgress[0]; o < inProgress[1]; o++)
            {
                if (SwapCrashChild.dropped(o) && !cleaned.get((int)o))
                {
                    if (present.get((int)o))
                    {
                        there++;
                    }
                    else
                    {
                        gone++;
                    }
                }
            }
            assertTrue(there == 0 || gone == 0, "run [" + inProgress[0] + ", " + inProgress[1] + ") is part old, part new: " +
                there + " there, " + gone + " gone");
            if (gone > 0)
            {
                markCleaned(cleaned, inProgress[0], inProgress[1]);
                cutAsDone = true;
            }
        }
        for (long o = 0; o < end; o++)
        {
            assertEquals(!cleaned.get((int)o), present.get((int)o), "offset " + o + (cleaned.get((int)o) ? " was dropped" : " was kept"));
        }
        return cutAsDone;
    }
}
