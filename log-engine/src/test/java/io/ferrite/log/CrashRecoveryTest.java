package io.ferrite.log;

import io.ferrite.index.OffsetIndex;
import io.ferrite.index.TimeIndex;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Crash tests with a real process and a real SIGKILL: a child JVM appends in fsync durability (on
 * odd rounds building each batch in a claim and committing it) and reports every acknowledged batch; it is killed after a random number of acknowledgements, over
 * and over ({@code -Dferrite.crash.rounds}: 12 by default, 200 in the {@code long} profile). After each kill
 * the log is recovered — by this process on even rounds, by the next child on odd ones — and then
 * checked: every acknowledged batch present and byte-exact, the log holding only whole batches
 * numbered 0..n in order (nothing after the truncation point), and the indexes agreeing with it.
 */
@Tag("slow") // a crash loop (SIGKILL rounds): outside the default build, in `mvn -B verify -Pslow` (CI runs it; issue 17)
class CrashRecoveryTest
{
    private static final int ROUNDS = Integer.getInteger("ferrite.crash.rounds", 12);

    @TempDir
    Path dir;

    @Test
    void acknowledgedBatchesSurviveSigkill() throws Exception
    {
        final long seed = Long.getLong("ferrite.seed", System.nanoTime());
        System.out.println("crash test seed " + seed + " (replay with -Dferrite.seed=" + seed + ")");
        final Random random = new Random(seed);
        long acknowledged = -1;
        for (int round = 0; round < ROUNDS; round++)
        {
            final WriteStrategy strategy = round % 4 < 2 ? WriteStrategy.MAPPED : WriteStrategy.CHANNEL;
            // odd rounds build their batches in claims: one log holds both kinds, as an embedding application's may
            final long acked = runAndKill(strategy, round % 2 == 1, 1 + random.nextInt(120));
            assertTrue(acked >= acknowledged, "round " + round + ": acknowledgements went backwards");
            acknowledged = acked;
            if (round % 2 == 0 || round == ROUNDS - 1)
            {
                verify(acknowledged, strategy);
            }
        }
        assertTrue(acknowledged > ROUNDS, "acknowledged " + acknowledged);
    }

    /** Runs a child until it has acknowledged {@code acks} more batches, kills it; returns the highest batch acknowledged. */
    private long runAndKill(final WriteStrategy strategy, final boolean claims, final int acks) throws Exception
    {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process child = new ProcessBuilder(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
            "-cp", System.getProperty("java.class.path"), CrashChild.class.getName(), dir.toString(), strategy.name(),
            claims ? "claim" : "append")
            .redirectErrorStream(true)
            .start();
        final AtomicLong highest = new AtomicLong(-1);
        final List<String> other = new ArrayList<>();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8)))
        {
            int seen = 0;
            String line;
            while (seen < acks && (line = out.readLine()) != null)
            {
                if (line.startsWith("ACK "))
                {
                    final long k = Long.parseLong(line.substring(4));
                    assertTrue(k > highest.get(), "acks in order");
                    highest.set(k);
                    seen++;
                }
                else if (!line.startsWith("READY") && !line.contains("SLF4J") && !line.contains("INFO"))
                {
                    other.add(line);
                }
            }
            if (seen < acks)
            {
                fail("child ended before " + acks + " acknowledgements: " + String.join("\n", other));
            }
            // SIGKILL on Linux; acknowledgements printed but not yet read are not counted (the check
            // is that all counted ones survive, so counting fewer only weakens it by a few batches)
            child.destroyForcibly();
            assertTrue(child.waitFor(30, TimeUnit.SECONDS));
        }
        finally
        {
            child.destroyForcibly();
        }
        assertEquals(137, child.exitValue(), "killed by SIGKILL");
        return highest.get();
    }

    private void verify(final long acknowledged, final WriteStrategy strategy) throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(strategy)))
        {
            final PartitionLog log = manager.log(CrashChild.TOPIC, 0);
            final long end = log.logEndOffset();
            assertTrue(end >= CrashChild.baseOffset(acknowledged + 1), "log end " + end + " below acknowledged batch " + acknowledged);
            final RecordBatchBuilder builder = new RecordBatchBuilder();
            final ExpandableDirectByteBuffer expected = new ExpandableDirectByteBuffer(8192);
            final FileRegion region = new FileRegion();
            long k = 0;
            for (long offset = 0; offset < end; k++)
            {
                assertEquals(CrashChild.baseOffset(k), offset, "batches are numbered in order, no gap");
                assertEquals(PartitionLog.READ_OK, log.read(offset, 1, end, true, region));
                final byte[] actual = PartitionLogTest.readRegion(region);
                final int length = CrashChild.build(k, builder, expected);
                expected.putLong(0, offset, java.nio.ByteOrder.BIG_ENDIAN);
                expected.putInt(12, 0, java.nio.ByteOrder.BIG_ENDIAN);
                final byte[] want = new byte[length];
                expected.getBytes(0, want);
                assertArrayEquals(want, actual, "batch " + k + " at offset " + offset);
                offset += CrashChild.records(k);
            }
            assertTrue(k > acknowledged, "batches " + k + ", acknowledged " + acknowledged);
            verifyIndexes(log);
        }
    }

    /** Every index entry points at a batch whose last offset is the entry's offset; time entries increase. */
    static void verifyIndexes(final PartitionLog log)
    {
        final RecordBatch batch = new RecordBatch();
        for (final Segment s : log.segments())
        {
            final OffsetIndex index = s.offsetIndex;
            index.sanityCheck();
            for (int i = 0; i < index.entries(); i++)
            {
                batch.wrap(s.log.view(), index.position(i));
                assertEquals(RecordBatch.OK, batch.check(s.size() - index.position(i)));
                assertEquals(s.baseOffset + index.relativeOffset(i), batch.lastOffset(), "index entry " + i + " of " + s);
            }
            final TimeIndex time = s.timeIndex;
            time.sanityCheck();
            for (int i = 0; i < time.entries(); i++)
            {
                assertTrue(s.baseOffset + time.relativeOffset(i) < log.logEndOffset());
            }
        }
        new UnsafeBuffer(new byte[0]);
    }
}
