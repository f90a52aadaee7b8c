package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.LongPredicate;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the open makes of a segment replacement stopped at each of its steps ({@link SwapRecovery}):
 * the steps are taken here one by one with the replacement's own {@link CleanedSegments}, on the
 * files of a closed log, then the log is opened (after a clean stop and after an unclean one). Before
 * the commit the log is the old one; from the commit on, the new one — every offset range one or the
 * other, never both, nothing kept lost, no temporary file left.
 */
class SwapRecoveryTest
{
    private static final String[] SUFFIXES = {Segment.LOG_SUFFIX, Segment.INDEX_SUFFIX, Segment.TIME_INDEX_SUFFIX,
        TransactionIndex.SUFFIX};
    /** Stages: 0 written as .cleaned, 1 renamed to .swap but the first log, 2 committed, 3 two of the four replaced
     * segments' files deleted, 4 all deleted and the first new segment renamed, 5 every rename done. */
    private static final int COMMITTED = 2;

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15})
    void anInterruptedReplacementIsRolledBackBeforeItsCommitAndCompletedAfter(final int stageAndStop) throws Exception
    {
        final int stage = stageAndStop % 10;
        final boolean unclean = stageAndStop >= 10;
        final List<Long> offsets = new ArrayList<>();
        final long[] bases;
        final LogConfig config;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("r", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
                LogConfig.INDEX_INTERVAL_BYTES, "256"));
            final Batches b = new Batches();
            final AppendResult result = new AppendResult();
            for (int i = 0; i < 150; i++)
            {
                log.append(b.records(1 + i % 3, i, 1_700_000_000_000L + i).buffer, 0, b.length, result);
                assertEquals(AppendResult.OK, result.status);
                offsets.add(result.firstOffset);
            }
            bases = log.segmentReplacer().inactiveSegmentBases();
            config = log.config();
        }
        final Path partition = dir.resolve("r-0");
        final long runEnd = bases[4];
        // the last segment of the run all dropped: the empty segment at its base must cover it
        final LongPredicate dropped = o -> o < runEnd && (o % 4 == 1 || o >= bases[3]);
        final CleanedSegments cleaned = new CleanedSegments(partition, new SegmentList(), config, 0, ByteBuffer.allocate(0));
        cleaned.start(bases[0]);
        for (int i = 0; i < 4; i++)
        {
            final byte[] log = Files.readAllBytes(partition.resolve(Segment.fileName(bases[i], Segment.LOG_SUFFIX)));
            final RecordBatch batch = new RecordBatch();
            for (int p = 0; p < log.length; p += batch.sizeInBytes())
            {
                batch.wrap(new UnsafeBuffer(log), p);
                if (!dropped.test(batch.baseOffset()))
                {
                    cleaned.append(batch);
                }
            }
        }
        cleaned.start(bases[3]);
        cleaned.finish(System.currentTimeMillis());
        assertTrue(cleaned.bases().size() >= 3, "new segments: " + cleaned.bases());
        if (stage >= 1)
        {
            cleaned.prepareSwap();
        }
        if (stage >= COMMITTED)
        {
            cleaned.commit();
        }
        for (int i = 0; i < 4 && stage >= 3; i++)
        {
            if (stage > 3 || i < 2)
            {
                for (final String suffix : SUFFIXES)
                {
                    Files.deleteIfExists(partition.resolve(Segment.fileName(bases[i], suffix)));
                }
            }
        }
        if (stage == 4)
        {
            for (final String suffix : SUFFIXES)
            {
                final Path swap = partition.resolve(Segment.fileName(bases[0], suffix) + CleanedSegments.SWAP_SUFFIX);
                if (Files.exists(swap))
                {
                    Files.move(swap, partition.resolve(Segment.fileName(bases[0], suffix)));
                }
            }
        }
        if (stage >= 5)
        {
            cleaned.completeSwap();
        }
        Files.writeString(partition.resolve(Segment.fileName(bases[1], Segment.LOG_SUFFIX) + ".deleted"), "left by Kafka");
        if (unclean)
        {
            Files.delete(dir.resolve(LogManager.CLEAN_SHUTDOWN_FILE));
            Files.delete(dir.resolve(OffsetCheckpoint.RECOVERY_POINTS));
        }

        final LongPredicate expectedGone = stage >= COMMITTED ? dropped : o -> false;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("r", 0);
            final List<Long> read = new ArrayList<>();
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            while (tailer.next(Long.MAX_VALUE, batch))
            {
                assertEquals(RecordBatch.OK, batch.check(batch.sizeInBytes()));
                read.add(batch.baseOffset());
            }
            assertEquals(offsets.stream().filter(o -> !expectedGone.test(o)).toList(), read, "stage " + stage);
            // each segment holds only batches of its own range: no old segment left beside a new one
            final Segment[] segs = log.segments();
            for (int i = 0; i + 1 < segs.length; i++)
            {
                final int size = segs[i].size();
                for (int p = 0; p < size; p = segs[i].frameEnd(p, size))
                {
                    assertTrue(segs[i].batchBaseOffset(p) >= segs[i].baseOffset && segs[i].batchLastOffset(p) < segs[i + 1].baseOffset);
                }
            }
            assertEquals(0, log.logStartOffset());
        }
        try (Stream<Path> files = Files.list(partition))
        {
            assertEquals(List.of(), files.map(p -> p.getFileName().toString())
                .filter(n -> n.endsWith(".cleaned") || n.endsWith(".swap") || n.endsWith(".deleted")).toList());
        }
    }
}
