package io.ferrite.log;

import io.ferrite.wire.record.Record;
import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import io.ferrite.wire.record.RecordBatchDescriptor;
import io.ferrite.wire.record.RecordReader;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Claim, build in place, commit or abort: {@link PartitionLog#claim} and friends, on real files. */
class BatchClaimTest
{
    private static final long HOUR = 3_600_000L;

    @TempDir
    Path dir;

    private final MutableClock clock = new MutableClock(1_700_000_000_000L);
    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final BatchClaim claim = new BatchClaim();
    private final AppendResult result = new AppendResult();
    private LogManager manager;

    private PartitionLog open(final WriteStrategy strategy, final Map<String, String> overrides) throws IOException
    {
        manager = LogManager.open(LogManagerConfig.of(dir).withClock(clock).withWriteStrategy(strategy));
        return manager.log("orders", 0) != null ? manager.log("orders", 0) : manager.createLog("orders", 0, overrides);
    }

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private static byte[] value(final int i, final int size)
    {
        final byte[] v = new byte[size];
        final byte[] tag = ("value-" + i + "-").getBytes(StandardCharsets.US_ASCII);
        for (int j = 0; j < size; j++)
        {
            v[j] = tag[j % tag.length];
        }
        return v;
    }

    /** Claims, builds {@code records} values of {@code size} bytes numbered from {@code first} at {@code timestamp}, commits. */
    private void claimBuildCommit(final PartitionLog log, final int first, final int records, final int size, final long timestamp)
    {
        assertTrue(log.claim(records * (size + 48) + RecordBatchDescriptor.HEADER_LENGTH, claim, result), result.toString());
        claim.wrap(builder);
        for (int i = first; i < first + records; i++)
        {
            builder.appendRecord(timestamp, null, value(i, size));
        }
        log.commit(claim, builder.build(), result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertFalse(claim.isOpen());
    }

    /** Every value in the log from its start, read in place with a tailer. */
    private static List<byte[]> values(final PartitionLog log)
    {
        final List<byte[]> values = new ArrayList<>();
        final LogTailer tailer = new LogTailer(log, log.logStartOffset());
        final RecordBatch batch = new RecordBatch();
        final RecordReader reader = new RecordReader();
        long expected = log.logStartOffset();
        while (tailer.next(Long.MAX_VALUE, batch))
        {
            assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()), "a committed batch checks, CRC included");
            assertEquals(expected, batch.baseOffset());
            expected = batch.lastOffset() + 1;
            reader.reset(batch);
            while (reader.hasNext())
            {
                final Record r = reader.next();
                final byte[] v = new byte[r.valueLength()];
                r.buffer().getBytes(r.valueOffset(), v);
                values.add(v);
            }
        }
        assertEquals(log.logEndOffset(), expected);
        return values;
    }

    private static void assertValues(final PartitionLog log, final int count, final int size)
    {
        final List<byte[]> values = values(log);
        assertEquals(count, values.size());
        for (int i = 0; i < count; i++)
        {
            assertArrayEquals(value(i, size), values.get(i), "value " + i);
        }
    }

    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void committedBatchesTakeTheirOffsetsBesideAppendsAndSurviveAReopen(final WriteStrategy strategy) throws IOException
    {
        PartitionLog log = open(strategy, Map.of(LogConfig.INDEX_INTERVAL_BYTES, "256"));
        claimBuildCommit(log, 0, 3, 100, clock.time());
        assertEquals(0, result.firstOffset);
        assertEquals(2, result.lastOffset);

        final Batches batches = new Batches();
        batches.records(1, 7, clock.time());
        // an ordinary append between claims: value 3 comes from it
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(3, result.firstOffset);
        for (int i = 0; i < 50; i++)
        {
            claimBuildCommit(log, 4 + 2 * i, 2, 100, clock.time());
            assertEquals(4 + 2 * i, result.firstOffset);
        }
        assertEquals(104, log.logEndOffset());
        final List<byte[]> values = values(log);
        assertEquals(104, values.size());
        assertArrayEquals(value(2, 100), values.get(2));
        assertArrayEquals(value(4, 100), values.get(4));
        assertArrayEquals(value(103, 100), values.get(103));
        assertArrayEquals(Batches.value(7, 0), values.get(3), "the appended record between the committed ones");

        // reads through the index find batches placed by commits
        final FileRegion region = new FileRegion();
        assertEquals(PartitionLog.READ_OK, log.read(77, 1 << 20, log.logEndOffset(), true, region));
        assertEquals(76, firstBatch(region).baseOffset());

        manager.close();
        log = open(strategy, Map.of());
        assertEquals(104, log.logEndOffset());
        assertEquals(104, values(log).size());
        assertArrayEquals(value(99, 100), values(log).get(99));
    }

    private static RecordBatch firstBatch(final FileRegion region) throws IOException
    {
        final ByteBuffer bytes = ByteBuffer.allocate((int)region.length);
        region.channel.read(bytes, region.position);
        return new RecordBatch().wrap(new UnsafeBuffer(bytes.array()), 0);
    }

    @Test
    void theMappedStrategyBuildsInTheSegmentItselfAndTheChannelOneInTheClaimsBuffer() throws IOException
    {
        final PartitionLog mapped = open(WriteStrategy.MAPPED, Map.of());
        assertTrue(mapped.claim(1000, claim, result));
        assertTrue(claim.inPlace());
        assertEquals(1000, claim.capacity());
        mapped.abort(claim);
        manager.close();
        manager = LogManager.open(LogManagerConfig.of(dir.resolve("channel")).withClock(clock).withWriteStrategy(WriteStrategy.CHANNEL));
        final PartitionLog channel = manager.createLog("orders", 0, Map.of());
        assertTrue(channel.claim(1000, claim, result));
        assertFalse(claim.inPlace());
        channel.abort(claim);
    }

    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void nothingIsVisibleBeforeTheCommitAndAnAbortLeavesNothing(final WriteStrategy strategy) throws IOException
    {
        final PartitionLog log = open(strategy, Map.of());
        claimBuildCommit(log, 0, 1, 50, clock.time());
        final LogTailer tailer = new LogTailer(log, 1);
        final RecordBatch batch = new RecordBatch();

        assertTrue(log.claim(500, claim, result));
        final int length = claim.wrap(builder).appendRecord(clock.time(), null, value(1, 50)).build();
        assertEquals(1, log.logEndOffset());
        assertFalse(tailer.next(Long.MAX_VALUE, batch), "a built batch is not there before its commit");
        log.commit(claim, length, result);
        assertTrue(tailer.next(Long.MAX_VALUE, batch));
        assertEquals(1, batch.baseOffset());

        assertTrue(log.claim(500, claim, result));
        claim.wrap(builder).appendRecord(clock.time(), null, value(99, 50)).build();
        log.abort(claim);
        assertFalse(claim.isOpen());
        assertEquals(0, claim.buffer().capacity(), "a closed claim wraps nothing");
        assertEquals(2, log.logEndOffset());
        assertFalse(tailer.next(Long.MAX_VALUE, batch));
        claimBuildCommit(log, 2, 1, 50, clock.time());
        assertEquals(2, result.firstOffset, "the aborted claim took no offset");
        assertValues(log, 3, 50);
    }

    @Test
    void anAbortedClaimIsZeroedInTheFileSoRecoveryCannotTakeItForABatch() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        claimBuildCommit(log, 0, 1, 50, clock.time());
        assertTrue(log.claim(500, claim, result));
        final int position = claim.position;
        // a batch with exactly the offset recovery expects next: it would be kept if left there
        final int length = builder.wrap(claim.buffer(), 0).baseOffset(1).appendRecord(clock.time(), null, value(1, 50)).build();
        final Path file = dir.resolve("orders-0").resolve(Segment.fileName(0, Segment.LOG_SUFFIX));
        assertTrue(anyNonZero(file, position, length), "the built batch is in the file's pages");
        log.abort(claim);
        assertFalse(anyNonZero(file, position, 500), "the aborted claim's bytes are zeros");
    }

    private static boolean anyNonZero(final Path file, final int position, final int length) throws IOException
    {
        try (FileChannel channel = FileChannel.open(file))
        {
            final ByteBuffer bytes = ByteBuffer.allocate(length);
            channel.read(bytes, position);
            for (int i = 0; i < bytes.position(); i++)
            {
                if (bytes.get(i) != 0)
                {
                    return true;
                }
            }
            return false;
        }
    }

    @Test
    void aClaimThatWouldNotFitRollsTheSegmentFirst() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
        for (int i = 0; i < 12; i++)
        {
            claimBuildCommit(log, i, 1, 900, clock.time());
            assertEquals(0, claim.buffer().capacity());
        }
        assertTrue(log.segmentCount() >= 3, "segments: " + log.segmentCount());
        for (final Segment s : log.segments())
        {
            assertTrue(s.size() <= 4096, "segment of " + s.size());
        }
        assertValues(log, 12, 900);
    }

    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void aRollDueAtTheCommitMovesTheBuiltBatchToTheNewSegment(final WriteStrategy strategy) throws IOException
    {
        final PartitionLog log = open(strategy, Map.of(LogConfig.SEGMENT_MS, "60000"));
        final long t = clock.time();
        claimBuildCommit(log, 0, 1, 100, t);
        claimBuildCommit(log, 1, 1, 100, t + 1000);
        assertEquals(1, log.segmentCount());
        // 61 s after the segment's first batch, by the batch's own timestamp: known only once built
        assertTrue(log.claim(1000, claim, result));
        assertEquals(strategy == WriteStrategy.MAPPED, claim.inPlace());
        final int length = claim.wrap(builder).appendRecord(t + 61_000, null, value(2, 100)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertEquals(2, result.firstOffset);
        assertEquals(2, log.segmentCount());
        assertEquals(2, log.segments()[1].baseOffset);
        assertValues(log, 3, 100);
    }

    @ParameterizedTest
    @EnumSource(WriteStrategy.class)
    void aBadCommitClosesTheClaimWithKafkasErrorAndTheLogGoesOn(final WriteStrategy strategy) throws IOException
    {
        final PartitionLog log = open(strategy, Map.of());
        assertFalse(log.claim(10, claim, result));
        assertEquals(AppendResult.INVALID_RECORD, result.status);
        assertFalse(log.claim(2_000_000, claim, result));
        assertEquals(AppendResult.RECORD_TOO_LARGE, result.status);
        assertFalse(claim.isOpen());

        // longer than the claim
        assertTrue(log.claim(200, claim, result));
        log.commit(claim, 201, result);
        assertEquals(AppendResult.INVALID_RECORD, result.status);
        assertFalse(claim.isOpen());

        // not a batch
        assertTrue(log.claim(200, claim, result));
        log.commit(claim, 100, result);
        assertEquals(AppendResult.CORRUPT_MESSAGE, result.status, result.toString());

        // a control batch
        assertTrue(log.claim(200, claim, result));
        int length = claim.wrap(builder).control(true).appendEndTxnMarker(clock.time(), true, 0).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.INVALID_RECORD, result.status);

        // two hours ahead of the clock: the record's index is named, as append names it
        assertTrue(log.claim(500, claim, result));
        length = claim.wrap(builder).appendRecord(clock.time(), null, value(0, 10))
            .appendRecord(clock.time() + 2 * HOUR, null, value(1, 10)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.INVALID_TIMESTAMP, result.status);
        assertEquals(1, result.recordIndex);

        assertEquals(0, log.logEndOffset());
        claimBuildCommit(log, 0, 2, 10, clock.time());
        assertValues(log, 2, 10);
    }

    @Test
    void theTimestampWindowFollowsTheClockWithoutReadingItForEveryBatch() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        final long start = clock.time();
        claimBuildCommit(log, 0, 1, 10, start + HOUR - 1000); // within message.timestamp.after.max.ms (1 h)
        assertTrue(log.claim(500, claim, result));
        int length = claim.wrap(builder).appendRecord(start + HOUR + 30 * 60_000, null, value(1, 10)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.INVALID_TIMESTAMP, result.status, "90 minutes ahead");

        clock.advance(40 * 60_000); // now 50 minutes from the record's time: within the window
        claimBuildCommit(log, 1, 1, 10, start + HOUR + 30 * 60_000);
        assertEquals(1, result.firstOffset, "the clock was read again when its last reading did not prove the timestamp");

        // a finite message.timestamp.before.max.ms: every record is checked against the clock
        manager.updateConfig("orders", 0, Map.of(LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, "60000"));
        assertTrue(log.claim(500, claim, result));
        length = claim.wrap(builder).appendRecord(clock.time() - 120_000, null, value(2, 10))
            .appendRecord(clock.time(), null, value(3, 10)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.INVALID_TIMESTAMP, result.status, "two minutes old");
        assertEquals(0, result.recordIndex);
        assertEquals(2, log.logEndOffset());
    }

    @Test
    void logAppendTimeIsStampedOnTheBatchWithItsCrc() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of(LogConfig.MESSAGE_TIMESTAMP_TYPE, LogConfig.LOG_APPEND_TIME));
        claimBuildCommit(log, 0, 2, 10, 12345L);
        assertEquals(clock.time(), result.logAppendTime);
        final RecordBatch batch = new RecordBatch();
        assertTrue(new LogTailer(log, 0).next(Long.MAX_VALUE, batch));
        assertEquals(clock.time(), batch.maxTimestamp());
        assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
    }

    @Test
    void idempotentBatchesAreCheckedAndARetryIsADuplicate() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        for (int attempt = 0; attempt < 2; attempt++)
        {
            assertTrue(log.claim(500, claim, result));
            final int length = claim.wrap(builder).producer(42L, (short)0, 0)
                .appendRecord(clock.time(), null, value(0, 10)).appendRecord(clock.time(), null, value(1, 10)).build();
            log.commit(claim, length, result);
            assertEquals(attempt == 0 ? AppendResult.OK : AppendResult.DUPLICATE, result.status, result.toString());
            assertEquals(0, result.firstOffset);
            assertEquals(1, result.lastOffset);
        }
        assertTrue(log.claim(500, claim, result));
        final int length = claim.wrap(builder).producer(42L, (short)0, 5)
            .appendRecord(clock.time(), null, value(2, 10)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.OUT_OF_ORDER_SEQUENCE, result.status);
        assertValues(log, 2, 10);
    }

    /** What a SIGKILL leaves: the files as they are now (the page cache), copied while the log runs. */
    private Path crashSnapshot() throws IOException
    {
        final Path copy = dir.resolveSibling(dir.getFileName() + "-crash");
        try (var files = java.nio.file.Files.walk(dir))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Path target = copy.resolve(dir.relativize(p).toString());
                if (java.nio.file.Files.isDirectory(p))
                {
                    java.nio.file.Files.createDirectories(target);
                }
                else if (!p.getFileName().toString().equals(".lock"))
                {
                    OpenFilesTest.copySparse(p, target); // the active segment's sparse GiB stays a hole
                }
            }
        }
        return copy;
    }

    @Test
    void aBatchBuiltButNotCommittedIsNotRecoveredAfterACrash() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        // at offset 0 a builder's default base offset (0) is just what recovery expects there
        assertTrue(log.claim(500, claim, result));
        final int length = claim.wrap(builder).appendRecord(clock.time(), null, value(0, 50)).build();
        final Path crashed = crashSnapshot();
        try (LogManager recovered = LogManager.open(LogManagerConfig.of(crashed).withClock(clock)))
        {
            assertEquals(0, recovered.log("orders", 0).logEndOffset(), "the uncommitted batch is not in the recovered log");
        }
        log.commit(claim, length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        assertEquals(0, result.firstOffset);
    }

    @Test
    void aBatchWithoutTheUncommittedMarkIsRefused() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        assertTrue(log.claim(500, claim, result));
        final int length = builder.wrap(claim.buffer(), 0).appendRecord(clock.time(), null, value(0, 50)).build();
        log.commit(claim, length, result);
        assertEquals(AppendResult.INVALID_RECORD, result.status, result.toString());
        assertEquals(0, log.logEndOffset());
    }

    @Test
    void aBatchChangedAfterItsBuildFailsTheCommitWhenAssertionsAreOn() throws IOException
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(PartitionLog.class.desiredAssertionStatus(), "needs -ea");
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        assertTrue(log.claim(500, claim, result));
        final int length = claim.wrap(builder).appendRecord(clock.time(), null, value(0, 50)).build();
        claim.buffer().putByte(length - 2, (byte)'!'); // a value byte, after the CRC was computed
        assertThrows(AssertionError.class, () -> log.commit(claim, length, result));
        assertFalse(claim.isOpen(), "the claim ends even so");
        claimBuildCommit(log, 0, 1, 10, clock.time());
        assertEquals(0, result.firstOffset);
    }

    @Test
    void aCloseFromAnotherThreadWaitsForTheOpenClaimWhoseCommitThenFails() throws Exception
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        claimBuildCommit(log, 0, 1, 10, clock.time());
        final java.util.concurrent.CountDownLatch claimed = new java.util.concurrent.CountDownLatch(1);
        final java.util.concurrent.CountDownLatch build = new java.util.concurrent.CountDownLatch(1);
        final AppendResult writerResult = new AppendResult();
        final Thread writer = new Thread(() ->
        {
            log.claimWriter();
            assertTrue(log.claim(100_000, claim, writerResult));
            claimed.countDown();
            try
            {
                build.await();
            }
            catch (final InterruptedException ex)
            {
                throw new AssertionError(ex);
            }
            // the close is waiting: the mapping is still there to build in (an unmapped one would crash the JVM)
            final int length = claim.wrap(builder).appendRecord(clock.time(), null, value(1, 90_000)).build();
            log.commit(claim, length, writerResult);
        });
        writer.start();
        claimed.await();
        final Thread closer = new Thread(() ->
        {
            try
            {
                manager.close();
            }
            catch (final IOException ex)
            {
                throw new java.io.UncheckedIOException(ex);
            }
        });
        closer.start();
        while (!log.isClosing() && closer.isAlive())
        {
            Thread.onSpinWait(); // until the close has begun: it then waits for the claim
        }
        assertFalse(log.isClosed());
        build.countDown();
        writer.join(30_000);
        closer.join(30_000);
        assertEquals(AppendResult.LOG_CLOSED, writerResult.status, writerResult.toString());
        assertTrue(log.isClosed());
        manager = null;
        try (LogManager reopened = LogManager.open(LogManagerConfig.of(dir).withClock(clock)))
        {
            assertEquals(1, reopened.log("orders", 0).logEndOffset());
        }
    }

    @Test
    void theWriterClosingItsLogAbortsItsClaimAndANewWriterAbortsAnAbandonedOne() throws Exception
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        final PartitionLog shared = log;
        final Thread first = new Thread(() ->
        {
            shared.claimWriter();
            assertTrue(shared.claim(500, new BatchClaim(), new AppendResult())); // and the thread ends
        });
        first.start();
        first.join();
        log.claimWriter(); // this thread takes the log over: the abandoned claim is aborted
        claimBuildCommit(log, 0, 1, 10, clock.time());

        assertTrue(log.claim(500, claim, result));
        manager.close(); // by the writer itself
        manager = null;
        assertFalse(claim.isOpen());
        assertTrue(log.isClosed());
    }

    @Test
    void anOpenClaimHoldsTheLog() throws IOException
    {
        final PartitionLog log = open(WriteStrategy.MAPPED, Map.of());
        assertTrue(log.claim(500, claim, result));
        final Batches batches = new Batches();
        batches.records(1, 1, clock.time());
        assertThrows(IllegalStateException.class, () -> log.append(batches.buffer, 0, batches.length, result));
        assertThrows(IllegalStateException.class, () -> log.claim(500, new BatchClaim(), result));
        log.abort(claim);
        assertThrows(IllegalStateException.class, () -> log.commit(claim, 100, result), "a closed claim");
        assertThrows(IllegalStateException.class, () -> log.abort(claim));
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status);
    }
}
