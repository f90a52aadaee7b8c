package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Tag;
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
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
 *
 * <p>Kill points a random kill almost never hits are chosen with the LD_PRELOAD shim {@code kill_point.c} (SIGKILL
 * before the n-th unlink or rename of a chosen kind of file): inside the abandon of a replacement (its {@code .cleaned}
 * files half deleted), and inside the open that completes a swap a kill cut after its commit (its {@code .deleted},
 * old and {@code .swap} files half settled); after each, the log is opened and checked twice.
 */
@Tag("slow") // a crash loop (SIGKILL rounds): outside the default build, in `mvn -B verify -Pslow` (CI runs it; issue 17)
class SwapCrashTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.swap.crash.rounds", 4);

    @TempDir
    Path dir;

    /** Whether the last child run in the open mode opened the log to its end (not killed). */
    private boolean opened;

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

    @Test
    void aKillInsideAnAbandonLeavesTheOldSegments() throws Exception
    {
        final Random random = seeded("abandon kill point");
        final Path shim = TxnIndexFsyncOrderTest.compileShim(Files.createDirectories(dir.resolve("shim")), "kill_point");
        final BitSet cleaned = new BitSet(); // stays empty: no replacement commits
        for (int round = 0; round < 4; round++)
        {
            final int at = 1 + random.nextInt(8);
            // the unlinks of the partition's files are the abandons' (nothing else deletes one in that child)
            final long[] cut = runChild("abandon", random, Map.of("LD_PRELOAD", shim.toString(), "FERRITE_KILL_MATCH",
                SwapCrashChild.TOPIC + "-0/", "FERRITE_KILL_CALLS", "unlink", "FERRITE_KILL_AT", Integer.toString(at)), cleaned);
            assertTrue(cut != null, "the kill at the " + at + "th unlink cut an abandon");
            assertFalse(verify(cleaned, cut), "an abandoned replacement is all old");
            verify(cleaned, null); // and opened again
        }
    }

    @Test
    void aKillInsideTheOpenThatCompletesASwapLeavesItComplete() throws Exception
    {
        final Random random = seeded("open kill point");
        final Path shim = TxnIndexFsyncOrderTest.compileShim(Files.createDirectories(dir.resolve("shim")), "kill_point");
        final BitSet cleaned = new BitSet();
        for (int round = 0; round < 3; round++)
        {
            // cut after a commit: at a rename of a .swap file to its final name
            final long[] cut = runChild("replace", random, Map.of("LD_PRELOAD", shim.toString(), "FERRITE_KILL_MATCH",
                CleanedSegments.SWAP_SUFFIX, "FERRITE_KILL_CALLS", "rename", "FERRITE_KILL_AT", Integer.toString(1 + random.nextInt(2))),
                cleaned);
            assertTrue(cut != null, "the kill cut a replacement");
            // the open cut inside SwapRecovery, at one of its deletions or renames in the partition, then opened again,
            // twice. It is the open's first step to reach a file of the partition, and it unlinks or renames each
            // .deleted, .cleaned and .swap file once (and deletes the replaced segments' files left): a kill at one of
            // the first `leftovers` unlinks or renames there is inside it
            final int leftovers = leftovers(SwapCrashChild.TOPIC + "-0");
            assertTrue(leftovers > 0, "the replacement cut after its commit left its .swap files");
            runChild("open", random, Map.of("LD_PRELOAD", shim.toString(), "FERRITE_KILL_MATCH", SwapCrashChild.TOPIC + "-0/",
                "FERRITE_KILL_AT", Integer.toString(1 + random.nextInt(leftovers))), cleaned);
            assertFalse(opened, "the open was killed inside SwapRecovery");
            // completed, as far as the offsets tell: a run cleaned before (the child picks one now and then) drops no more
            boolean tells = false;
            for (long o = cut[0]; o < cut[1]; o++)
            {
                tells |= SwapCrashChild.dropped(o) && !cleaned.get((int)o);
            }
            assertEquals(tells, verify(cleaned, cut), "a replacement cut after its commit is completed: [" + cut[0] + ", " + cut[1] + ")");
            verify(cleaned, null);
        }
    }

    /** How many files of {@code partition} are a replacement's leftovers ({@code .deleted}, {@code .cleaned}, {@code .swap}). */
    private int leftovers(final String partition) throws java.io.IOException
    {
        try (Stream<Path> files = Files.list(dir.resolve(partition)))
        {
            return (int)files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(SegmentDeletion.DELETED_SUFFIX) ||
                n.endsWith(CleanedSegments.CLEANED_SUFFIX) || n.endsWith(CleanedSegments.SWAP_SUFFIX)).count();
        }
    }

    /** A seeded Random, its seed printed for a replay ({@code -Dferrite.seed}). */
    private static Random seeded(final String what)
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println(what + " seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        return new Random(seed);
    }

    /**
     * Runs a child in {@code mode} with {@code environment} (a kill point) to its end, killed (137) or not (0, the
     * open alone); returns the replacement it was in, or null.
     */
    private long[] runChild(final String mode, final Random random, final Map<String, String> environment,
        final BitSet cleaned) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final ProcessBuilder builder = new ProcessBuilder(java, SwapCrashChild.class.desiredAssertionStatus() ? "-ea" : "-da",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            SwapCrashChild.class.getName(), dir.toString(), Long.toString(random.nextLong()), mode).redirectErrorStream(true);
        builder.environment().putAll(environment);
        final Process child = builder.start();
        long[] inProgress = null;
        final List<String> other = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            String line;
            while ((line = out.readLine()) != null)
            {
                inProgress = line(line, inProgress, cleaned, other);
            }
            assertTrue(child.waitFor(60, TimeUnit.SECONDS));
        }
        finally
        {
            child.destroyForcibly();
        }
        opened = mode.equals("open") && other.contains("OPENED");
        assertEquals(opened ? 0 : 137, child.exitValue(), () -> "killed at the kill point: " + String.join("\n", other));
        return inProgress;
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
        if (line.startsWith("ABANDONED "))
        {
            return null;
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
