package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The hot path's promises, checked exactly (no timing): appending and reading allocate nothing,
 * and with the mapped strategy the preallocator keeps the writer from ever allocating disk
 * blocks itself.
 */
class AppendPathTest
{
    private static final com.sun.management.ThreadMXBean THREADS =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    @TempDir
    Path dir;

    @Test
    void appendAndReadAllocateNothing() throws IOException
    {
        for (final WriteStrategy strategy : WriteStrategy.values())
        {
            try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve(strategy.name())).withWriteStrategy(strategy)))
            {
                final PartitionLog log = manager.createLog("alloc", 0, Map.of(LogConfig.INDEX_INTERVAL_BYTES, "256"));
                final Batches batches = new Batches();
                final AppendResult result = new AppendResult();
                final FileRegion region = new FileRegion();
                batches.records(4, 1, System.currentTimeMillis());
                final byte[] template = batches.bytes();
                final Runnable work = () ->
                {
                    batches.buffer.putBytes(0, template);
                    log.append(batches.buffer, 0, template.length, result);
                    log.read(result.firstOffset, 1 << 20, log.logEndOffset(), true, region);
                };
                // The fewest bytes any of several windows of 20000 appends and reads allocated: code
                // that allocates per call fails every window, while a window that happens to hold a
                // JIT tier change (interpreted and C1 code allocate what C2 eliminates; the
                // preallocator's first calls can deoptimise the writer's methods) does not count.
                long fewest = Long.MAX_VALUE;
                for (int window = 0; window < 8 && fewest > 0; window++)
                {
                    final long before = THREADS.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 20_000; i++)
                    {
                        work.run();
                    }
                    fewest = Math.min(fewest, THREADS.getCurrentThreadAllocatedBytes() - before);
                }
                assertEquals(AppendResult.OK, result.status);
                assertEquals(0, fewest, strategy + ": bytes allocated by 20000 appends and reads");
            }
        }
    }

    /** The read_committed fetch's walk of the transaction indexes: a positional read into the caller's buffer, no garbage. */
    @Test
    void theAbortedTransactionWalkAllocatesNothing() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("txn"))))
        {
            final PartitionLog log = manager.createLog("alloc", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 4)
            {
                batches.records(4, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                final Segment[] segs = log.segments();
                // the LSO below every bound: the walk reads every segment's index, three entries a read
                segs[segs.length - 1].appendAbortedTxn(7, result.firstOffset, result.lastOffset, 0);
            }
            final java.nio.ByteBuffer scratch = java.nio.ByteBuffer.allocateDirect(3 * 34);
            final long[] seen = new long[1];
            final AbortedTxnSink sink = (producerId, firstOffset) -> seen[0] += producerId;
            long fewest = Long.MAX_VALUE;
            for (int window = 0; window < 8 && fewest > 0; window++) // as above: a JIT tier change does not count
            {
                final long before = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 5_000; i++)
                {
                    log.transactions().collectAbortedTransactions(0, log.logEndOffset(), scratch, sink);
                }
                fewest = Math.min(fewest, THREADS.getCurrentThreadAllocatedBytes() - before);
            }
            assertEquals(0, seen[0] % 7);
            assertEquals(true, seen[0] > 0, "the walk found the entries");
            assertEquals(0, fewest, "bytes allocated by 5000 walks");
        }
    }

    @Test
    void claimBuildAndCommitAllocateNothing() throws IOException
    {
        for (final WriteStrategy strategy : WriteStrategy.values())
        {
            try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("claim-" + strategy)).withWriteStrategy(strategy)))
            {
                final PartitionLog log = manager.createLog("alloc", 0, Map.of(LogConfig.INDEX_INTERVAL_BYTES, "256"));
                final BatchClaim claim = new BatchClaim();
                final io.ferrite.wire.record.RecordBatchBuilder builder = new io.ferrite.wire.record.RecordBatchBuilder();
                final org.agrona.concurrent.UnsafeBuffer value = new org.agrona.concurrent.UnsafeBuffer(new byte[100]);
                final AppendResult result = new AppendResult();
                final Runnable work = () ->
                {
                    if (log.claim(1024, claim, result))
                    {
                        final int length = claim.wrap(builder)
                            .appendRecord(System.currentTimeMillis(), null, 0, -1, value, 0, value.capacity()).build();
                        log.commit(claim, length, result);
                    }
                };
                long fewest = Long.MAX_VALUE; // as in appendAndReadAllocateNothing
                for (int window = 0; window < 8 && fewest > 0; window++)
                {
                    final long before = THREADS.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < 20_000; i++)
                    {
                        work.run();
                    }
                    fewest = Math.min(fewest, THREADS.getCurrentThreadAllocatedBytes() - before);
                }
                assertEquals(AppendResult.OK, result.status, result.toString());
                assertEquals(0, fewest, strategy + ": bytes allocated by 20000 claims and commits");
            }
        }
    }

    /**
     * The produce path of producers with ids: an idempotent producer's batches (one look at the
     * producer's open transaction more), and a transactional producer's inside its open transaction,
     * each followed by a read of the last stable offset as a fetch makes it.
     */
    @Test
    void idempotentAndTransactionalAppendsAndTheLastStableOffsetAllocateNothing() throws IOException
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir.resolve("pids"))))
        {
            final PartitionLog log = manager.createLog("alloc", 0, Map.of(LogConfig.INDEX_INTERVAL_BYTES, "256"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            final io.ferrite.wire.record.RecordBatch batch = new io.ferrite.wire.record.RecordBatch();
            final byte[][] templates = new byte[2][];
            batches.producer(4, 9, (short)0, 0, false, System.currentTimeMillis());
            templates[0] = batches.bytes();
            batches.producer(4, 10, (short)0, 0, true, System.currentTimeMillis());
            templates[1] = batches.bytes();
            final int[] sequences = new int[2];
            final long[] lso = new long[1];
            final Runnable work = () ->
            {
                for (int p = 0; p < 2; p++)
                {
                    batches.buffer.putBytes(0, templates[p]);
                    batches.buffer.putInt(io.ferrite.wire.record.RecordBatchDescriptor.BASE_SEQUENCE_OFFSET, sequences[p],
                        java.nio.ByteOrder.BIG_ENDIAN);
                    batches.buffer.putInt(io.ferrite.wire.record.RecordBatchDescriptor.CRC_OFFSET,
                        batch.wrap(batches.buffer, 0).computeCrc(), java.nio.ByteOrder.BIG_ENDIAN);
                    log.append(batches.buffer, 0, templates[p].length, result);
                    sequences[p] += 4;
                    log.highWatermark(result.lastOffset + 1);
                    lso[0] = log.transactions().lastStableOffset();
                }
            };
            long fewest = Long.MAX_VALUE; // as in appendAndReadAllocateNothing
            for (int window = 0; window < 8 && fewest > 0; window++)
            {
                final long before = THREADS.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 10_000; i++)
                {
                    work.run();
                }
                fewest = Math.min(fewest, THREADS.getCurrentThreadAllocatedBytes() - before);
            }
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(4, lso[0], "producer 10's transaction, open from its first batch at offset 4");
            assertEquals(0, fewest, "bytes allocated by 20000 appends of producers with ids");
        }
    }

    @Test
    void thePreallocatorKeepsAheadOfTheWriter() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(WriteStrategy.MAPPED)))
        {
            final PartitionLog log = manager.createLog("ahead", 0, Map.of());
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            batches.records(200, 1, System.currentTimeMillis()); // ~12 KiB
            log.append(batches.buffer, 0, batches.length, result);
            final long first = log.allocationStalls(); // the first append of a segment allocates for itself
            for (int i = 0; i < 600; i++) // ~7 MiB: several preallocation chunks
            {
                final Segment active = log.segments()[0];
                batches.records(200, i, System.currentTimeMillis());
                // the lookahead follows the writer's pace (here a batch per look or so): the next
                // batch must find its room ready
                await(() -> active.log.allocatedAhead(active.size()) >= batches.length, Duration.ofSeconds(10),
                    "the preallocator keeps ahead");
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            assertEquals(first, log.allocationStalls(), "no append allocated blocks itself");
        }
    }
}
