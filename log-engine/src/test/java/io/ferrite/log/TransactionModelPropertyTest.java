package io.ferrite.log;

import io.ferrite.wire.testing.Property;
import org.agrona.concurrent.SystemEpochClock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Random sequences of transactional, idempotent and plain batches, COMMIT and ABORT markers (before
 * transaction version 2, and with its epoch bump), moves of the high watermark, clean reopens and
 * unclean loads of a copy of the files taken while the log is open (small segments, so rolls and
 * snapshots come in between) against a simple model: the open transactions' first offsets, the
 * ended ones whose marker the high watermark has not passed, the aborted ones. After every step the
 * log's LSO, its answers, the aborted transactions it reports and those its {@code .txnindex} gives
 * a read_committed fetch ({@code collectAbortedTransactions}) must be the model's; after an unclean
 * load, the recovered copy's too.
 */
@Tag("shortened")
class TransactionModelPropertyTest
{
    @TempDir
    Path root;

    @Test
    void theTransactionStateAgreesWithTheModel()
    {
        final int[] run = new int[1];
        // 20 tries in the default build; -Pslow runs this class (tagged shortened) with ferrite.txnmodel.tries=60,
        // -Plong with 50 times its ferrite.tries.factor of 10: 500
        Property.check("transactions vs model", Integer.getInteger("ferrite.txnmodel.tries", 20), r ->
        {
            try
            {
                check(root.resolve("run" + run[0]++), r);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        });
    }

    private static void check(final Path dir, final Random r) throws IOException
    {
        final Map<String, String> config = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(1000 + r.nextInt(3000)));
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        final Map<Long, Long> open = new HashMap<>();            // producer -> first offset
        final List<long[]> unreplicated = new ArrayList<>();     // {first, marker}
        final Map<Long, Integer> sequences = new HashMap<>();
        final Map<Long, Short> epochs = new HashMap<>();         // transactional producer -> epoch (0 until a TV2 marker)
        final List<String> expectedAborts = new ArrayList<>();
        final List<String> expectedIndex = new ArrayList<>();    // producer@first, in marker order
        final List<String> reported = new ArrayList<>();
        long hw = 0;
        LogManager manager = LogManager.open(LogManagerConfig.of(dir));
        try
        {
            PartitionLog log = manager.createLog("m", 0, config);
            log.transactions().abortedTxnListener((pid, first, last, lso) -> reported.add(pid + "@" + first + ".." + last + " lso " + lso));
            final int steps = 50 + r.nextInt(150);
            for (int step = 0; step < steps; step++)
            {
                final int op = r.nextInt(20);
                final long pid = 1 + r.nextInt(4);
                final long end = log.logEndOffset();
                final String at = "step " + step + " op " + op + " producer " + pid;
                if (op < 7 || op == 7 && open.containsKey(pid))
                {
                    // a transactional batch; also a non-transactional one of a producer with a transaction open
                    final boolean transactional = op < 7;
                    final int count = 1 + r.nextInt(4);
                    batches.producer(count, pid, epochs.getOrDefault(pid, (short)0), sequences.getOrDefault(pid, 0), transactional,
                        TransactionStateTest.T0);
                    log.append(batches.buffer, 0, batches.length, result);
                    if (transactional)
                    {
                        assertEquals(AppendResult.OK, result.status, at + ": " + result);
                        sequences.merge(pid, count, Integer::sum);
                        open.putIfAbsent(pid, end);
                    }
                    else
                    {
                        assertEquals(AppendResult.INVALID_TXN_STATE, result.status, at + ": " + result);
                        assertEquals(end, log.logEndOffset());
                    }
                }
                else if (op < 10)
                {
                    // idempotent but not transactional (producers 5..) or plain
                    final long other = op == 9 ? -1 : 5 + r.nextInt(2);
                    final int count = 1 + r.nextInt(3);
                    batches.producer(count, other, (short)(other < 0 ? -1 : 0), other < 0 ? -1 : sequences.getOrDefault(other, 0),
                        false, TransactionStateTest.T0);
                    log.append(batches.buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status, at + ": " + result);
                    sequences.merge(other, count, Integer::sum);
                }
                else if (op < 15)
                {
                    final boolean commit = r.nextBoolean();
                    final boolean tv2 = r.nextInt(3) == 0;
                    final short epoch = (short)(epochs.getOrDefault(pid, (short)0) + (tv2 ? 1 : 0));
                    log.transactions().appendMarker(pid, epoch, 0, commit, tv2, result);
                    assertEquals(AppendResult.OK, result.status, at + ": " + result);
                    if (tv2)
                    {
                        epochs.put(pid, epoch);
                        sequences.put(pid, 0); // a new epoch starts at sequence 0
                    }
                    assertEquals(end, result.firstOffset);
                    final Long first = open.remove(pid);
                    if (first != null)
                    {
                        if (!commit)
                        {
                            final long lso = open.values().stream().mapToLong(Long::longValue).min().orElse(end + 1);
                            expectedAborts.add(pid + "@" + first + ".." + end + " lso " + lso);
                            expectedIndex.add(pid + "@" + first);
                        }
                        if (end >= hw)
                        {
                            unreplicated.add(new long[] {first, end});
                        }
                    }
                }
                else if (op < 19)
                {
                    hw = hw + (long)(r.nextDouble() * (log.logEndOffset() - hw + 1));
                    hw = Math.min(hw, log.logEndOffset());
                    log.highWatermark(hw);
                }
                else if (r.nextBoolean())
                {
                    // the files as a SIGKILL would leave them, loaded as after an unclean stop: recovery rebuilds the index
                    final Path crashed = dir.resolveSibling(dir.getFileName() + "-crash" + step);
                    OpenFilesTest.copy(log.dir(), crashed);
                    try (PartitionLog recovered = LogLoader.load("m", 0, crashed, LogConfig.of(config), WriteStrategy.MAPPED,
                        SystemEpochClock.INSTANCE, LogEnvironment.INLINE, false, 0, 0))
                    {
                        assertEquals(log.logEndOffset(), recovered.logEndOffset(), at);
                        assertEquals(expectedIndex, indexed(recovered), at + ": recovered");
                        final long lso = open.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
                        assertEquals(Math.min(recovered.logEndOffset(), lso), recovered.transactions().lastStableOffset(), at);
                        for (final Map.Entry<Long, Long> e : open.entrySet())
                        {
                            assertEquals(true, recovered.transactions().hasOngoingTransaction(e.getKey(),
                                epochs.getOrDefault(e.getKey(), (short)0)), at + ": recovered");
                        }
                    }
                }
                else
                {
                    manager.close();
                    manager = LogManager.open(LogManagerConfig.of(dir));
                    log = manager.log("m", 0);
                    log.transactions().abortedTxnListener((p, first, last, lso) -> reported.add(p + "@" + first + ".." + last + " lso " + lso));
                    hw = log.logEndOffset(); // a load takes what it has as replicated
                    unreplicated.clear();
                }
                final long h = hw;
                unreplicated.removeIf(c -> c[1] < h);
                long model = Math.min(hw, open.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE));
                for (final long[] c : unreplicated)
                {
                    model = Math.min(model, c[0]);
                }
                assertEquals(model, log.transactions().lastStableOffset(), at + ": hw " + hw + ", open " + open + ", unreplicated " +
                    unreplicated.stream().map(Arrays::toString).toList());
                for (final Map.Entry<Long, Long> e : open.entrySet())
                {
                    assertEquals(true, log.transactions().hasOngoingTransaction(e.getKey(), epochs.getOrDefault(e.getKey(), (short)0)), at);
                }
                assertEquals(expectedAborts, reported, at);
                assertEquals(expectedIndex, indexed(log), at + ": the .txnindex");
            }
        }
        finally
        {
            manager.close();
        }
    }

    /** What a read_committed fetch of the whole log is told is aborted, from the {@code .txnindex}: producer@first. */
    private static List<String> indexed(final PartitionLog log)
    {
        final List<String> seen = new ArrayList<>();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(0, log.logEndOffset(), ByteBuffer.allocate(256),
            (pid, first) -> seen.add(pid + "@" + first)));
        return seen;
    }
}
