package io.ferrite.log;

import io.ferrite.wire.testing.Property;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The read_committed walk ({@link LogTransactions#collectAbortedTransactions}) against a model: random
 * transactions of a few producers over many small segments — data batches, then a marker (a plain
 * batch standing in for the control batch) that commits or aborts, an aborted one indexed in the
 * segment holding its marker with the last stable offset as Kafka computes it — with clean reopens
 * and DeleteRecords between. Each fetch at a random offset, up to the last stable offset and a random
 * size, must list exactly the aborted transactions with {@code lastOffset >= fetchOffset &&
 * firstOffset < upperBound} over all of them, in order: Kafka's early stop (at an entry whose last
 * stable offset reaches the bound) must never cut one off, and the upper bound is the fetched
 * region's {@code nextOffset}.
 */
@Tag("shortened")
class AbortedTxnWalkPropertyTest
{
    @TempDir
    Path root;

    private record Aborted(long producerId, long first, long last)
    {
    }

    @Test
    void theWalkListsExactlyTheAbortedTransactionsTheFetchOverlaps()
    {
        final int[] run = new int[1];
        // 3 tries in the default build (1.7 s each in a clean-clone CI run); -Pslow runs
        // this class (tagged shortened) with ferrite.abortedwalk.tries=8, -Plong with 8 times ferrite.tries.factor: 80
        Property.check("aborted txn walk vs model", Integer.getInteger("ferrite.abortedwalk.tries", 3), r ->
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
        final Map<String, String> config = Map.of(
            LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(600 + r.nextInt(3000)),
            LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(r.nextInt(600)),
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        final LogManagerConfig managerConfig = LogManagerConfig.of(dir)
            .withWriteStrategy(r.nextBoolean() ? WriteStrategy.MAPPED : WriteStrategy.CHANNEL);
        LogManager manager = LogManager.open(managerConfig);
        PartitionLog log = manager.createLog("t", 0, config);
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        final FileRegion region = new FileRegion();
        final Map<Long, Long> ongoing = new HashMap<>(); // producer -> first offset of its open transaction
        final List<Aborted> aborted = new ArrayList<>();
        final ByteBuffer scratch = r.nextBoolean() ? ByteBuffer.allocateDirect(34 * (1 + r.nextInt(5))) :
            ByteBuffer.allocate(34 + r.nextInt(200));
        final List<Aborted> seen = new ArrayList<>();
        final AbortedTxnSink sink = (producerId, firstOffset) -> seen.add(new Aborted(producerId, firstOffset, -1));
        try
        {
            for (int op = 0; op < 300; op++)
            {
                final int kind = r.nextInt(100);
                if (kind < 55 || ongoing.isEmpty() && kind < 80)
                {
                    final long producer = r.nextInt(5) - 1; // -1: not transactional
                    batches.records(1 + r.nextInt(4), op, 1_700_000_000_000L + op);
                    log.append(batches.buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    if (producer >= 0)
                    {
                        ongoing.putIfAbsent(producer, result.firstOffset);
                    }
                }
                else if (kind < 80)
                {
                    final long producer = new ArrayList<>(ongoing.keySet()).get(r.nextInt(ongoing.size()));
                    final long first = ongoing.remove(producer);
                    batches.records(1, op, 1_700_000_000_000L + op);
                    log.append(batches.buffer, 0, batches.length, result); // the marker
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    if (r.nextBoolean())
                    {
                        final long marker = result.lastOffset;
                        long lastStable = marker + 1;
                        for (final long f : ongoing.values())
                        {
                            lastStable = Math.min(lastStable, f);
                        }
                        final Segment[] segs = log.segments();
                        segs[segs.length - 1].appendAbortedTxn(producer, first, marker, lastStable);
                        aborted.add(new Aborted(producer, first, marker));
                    }
                }
                else if (kind < 84)
                {
                    manager.close(); // a clean stop: the indexes are found again at the open
                    manager = LogManager.open(managerConfig);
                    log = manager.log("t", 0);
                }
                else if (kind < 87)
                {
                    log.highWatermark(log.logEndOffset());
                    final long start = log.logStartOffset() + r.nextInt((int)(log.logEndOffset() - log.logStartOffset()) + 1);
                    log.deleteRecordsBefore(start);
                }
                else
                {
                    fetch(log, r, ongoing, aborted, region, scratch, seen, sink);
                }
            }
        }
        finally
        {
            manager.close();
        }
    }

    private static void fetch(final PartitionLog log, final Random r, final Map<Long, Long> ongoing, final List<Aborted> aborted,
        final FileRegion region, final ByteBuffer scratch, final List<Aborted> seen, final AbortedTxnSink sink)
    {
        long lastStable = log.logEndOffset();
        for (final long f : ongoing.values())
        {
            lastStable = Math.min(lastStable, f);
        }
        final long start = log.logStartOffset();
        if (lastStable <= start)
        {
            return;
        }
        final long fetchOffset = start + (long)(r.nextDouble() * (lastStable - start));
        assertEquals(PartitionLog.READ_OK, log.read(fetchOffset, 1 + r.nextInt(3000), lastStable, true, region));
        if (region.isEmpty())
        {
            return;
        }
        final long upper = region.nextOffset;
        final List<Aborted> expected = new ArrayList<>();
        for (final Aborted a : aborted)
        {
            if (a.last >= fetchOffset && a.first < upper)
            {
                expected.add(new Aborted(a.producerId, a.first, -1));
            }
        }
        seen.clear();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(fetchOffset, upper, scratch, sink));
        assertEquals(expected, seen, "fetch at " + fetchOffset + " up to " + upper + " (log " + log.logStartOffset() + ".." +
            log.logEndOffset() + ", " + log.segmentCount() + " segments)");
    }
}
