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
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Truncations killed with SIGKILL at random points ({@link TruncationCrashChild} in a child JVM,
 * {@code -Dferrite.truncation.crash.rounds}: 4 by default, 40 in the {@code long} profile; each round kills the child
 * at a random point shortly after it announced a truncation, so most kills land in one). After each kill the log is
 * opened here (an unclean open: {@link SwapRecovery}, then recovery) and checked: it opens; its batches are contiguous
 * from the log start (no hole) and each is the batch the child wrote at that offset, byte for byte; its end is at least
 * the target of a truncation the kill cut and at most the end before it (a prefix of the log before, at least up to the
 * target), or the end the child last announced; no {@code .cleaned}, {@code .swap} or {@code .deleted} file is left.
 */
@Tag("slow") // a crash loop (SIGKILL rounds): outside the default build, in `mvn -B verify -Pslow` (CI runs it; issue 17)
class TruncationCrashTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.truncation.crash.rounds", 4);

    @TempDir
    Path dir;

    @Test
    void aTruncationKilledAnywhereLeavesAPrefixOfTheLogBeforeIt() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("truncation crash test seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        final Random random = new Random(seed);
        int cut = 0;
        for (int round = 0; round < ROUNDS; round++)
        {
            final long[] state = runAndKill(random, 1 + random.nextInt(6));
            cut += state[2] >= 0 ? 1 : 0;
            verify(state, "round " + round + ", seed " + seed);
        }
        System.out.println(cut + " of " + ROUNDS + " kills cut a truncation");
    }

    /**
     * Runs a child until it announced its {@code truncations}-th truncation, kills it a random moment later; returns
     * {the lowest end allowed, the highest, the target of the truncation the kill cut or -1}.
     */
    private long[] runAndKill(final Random random, final int truncations) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(java, TruncationCrashChild.class.desiredAssertionStatus() ? "-ea" : "-da",
            "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp", System.getProperty("java.class.path"),
            TruncationCrashChild.class.getName(), dir.toString(), Long.toString(random.nextLong()))
            .redirectErrorStream(true)
            .start();
        final List<String> other = new ArrayList<>();
        long low = 0;
        long high = 0;
        long target = -1;
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            int seen = 0;
            String line;
            while (seen < truncations && (line = out.readLine()) != null)
            {
                if (line.startsWith("TRUNC "))
                {
                    seen++;
                }
                final long[] next = line(line, low, high, target, other);
                low = next[0];
                high = next[1];
                target = next[2];
            }
            assertEquals(truncations, seen, () -> "the child ended: " + String.join("\n", other));
            // a spin, not a sleep, so that the point is not rounded to the scheduler's tick: 0 to 3 ms, about what a
            // truncation (two directory fsyncs, a prefix written and fsynced) takes here
            final long until = System.nanoTime() + (long)(random.nextDouble() * 3_000_000L);
            while (System.nanoTime() < until)
            {
                Thread.onSpinWait();
            }
            child.toHandle().destroyForcibly(); // SIGKILL, the pipe left open
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            while ((line = out.readLine()) != null)
            {
                final long[] next = line(line, low, high, target, other);
                low = next[0];
                high = next[1];
                target = next[2];
            }
        }
        finally
        {
            child.destroyForcibly();
        }
        assertEquals(137, child.exitValue(), () -> "killed by SIGKILL: " + String.join("\n", other));
        return new long[] {low, high, target};
    }

    /** One line of the child's: the bounds on the log end it leaves, and the truncation in progress. */
    private static long[] line(final String line, final long low, final long high, final long target, final List<String> other)
    {
        final String[] words = line.split(" ");
        if (line.startsWith("LEO "))
        {
            final long end = Long.parseLong(words[1]);
            return new long[] {end, Long.MAX_VALUE, -1}; // an append after it may be there too
        }
        if (line.startsWith("TRUNC "))
        {
            final long t = Long.parseLong(words[1]);
            return new long[] {t, Long.parseLong(words[2]), t};
        }
        if (line.startsWith("TRUNCATED "))
        {
            final long t = Long.parseLong(words[1]);
            return new long[] {t, Long.MAX_VALUE, -1};
        }
        if (!line.contains("SLF4J") && !line.contains(" INFO ") && !line.contains(" WARN "))
        {
            other.add(line);
        }
        return new long[] {low, high, target};
    }

    private void verify(final long[] state, final String what) throws Exception
    {
        final Batches batches = new Batches();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log(TruncationCrashChild.TOPIC, 0);
            final long end = log.logEndOffset();
            assertTrue(end >= state[0] && end <= state[1], what + ": log end " + end + " within [" + state[0] + ", " + state[1] + "]");
            final RecordBatch batch = new RecordBatch();
            long next = log.logStartOffset();
            while (next < end)
            {
                assertEquals(PartitionLog.READ_OK, log.readBatch(next, end, batch), what + " at " + next);
                assertEquals(next, batch.baseOffset(), what + ": no hole at " + next);
                assertTrue(batch.isCrcValid(), what + ": CRC at " + next);
                TruncationCrashChild.batch(batches, next);
                final int from = 21; // from the attributes on: what the log does not patch (the CRC's range)
                final byte[] expected = new byte[batches.length - from];
                batches.buffer.getBytes(from, expected);
                final byte[] actual = new byte[batch.sizeInBytes() - from];
                batch.buffer().getBytes(batch.offset() + from, actual);
                assertArrayEquals(expected, actual, what + ": the batch written at " + next);
                next = batch.lastOffset() + 1;
            }
        }
        try (Stream<Path> files = Files.list(dir.resolve(TruncationCrashChild.TOPIC + "-0")))
        {
            final List<String> left = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(SegmentDeletion.DELETED_SUFFIX) ||
                n.endsWith(CleanedSegments.CLEANED_SUFFIX) || n.endsWith(CleanedSegments.SWAP_SUFFIX)).toList();
            assertEquals(List.of(), left, what + ": leftovers");
        }
    }
}
