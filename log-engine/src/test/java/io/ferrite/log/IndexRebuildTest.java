package io.ferrite.log;

import io.ferrite.index.TimeIndex;
import io.ferrite.testing.Await;
import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.function.IntUnaryOperator;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Indexes that recovery rebuilds with more entries than their files held keep them all. Recovery
 * writes the entries through the mapping; the room claimed for the next entry (zeros written to the
 * file) must start past them, not where the old file ended. The crash test met this as a time
 * index "out of order" after recovering a segment that a clean close and reopen had split: the
 * reopen counts {@code index.interval.bytes} afresh, so the file holds fewer entries than a rebuild
 * in one pass puts in.
 */
class IndexRebuildTest
{
    private static final long T0 = 1_700_000_000_000L;
    private static final int INTERVAL = 1024;
    /**
     * Value sizes for batches of about 600, 600, 600 (clean close) | 500, 2000, 100 | 600 bytes:
     * with a 1024-byte interval the rolled segment indexes batches 2 and 5 when appended across the
     * reopen, and 2, 4 and 5 when rebuilt in one pass.
     */
    private static final int[] VALUES = {530, 530, 530, 430, 1930, 30, 530};
    private static final int CLEAN_CLOSE_AFTER = 3;

    @TempDir
    Path root;

    private final RecordBatchBuilder builder = new RecordBatchBuilder();
    private final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(8192);

    @Test
    void aRolledSegmentRebuiltWithMoreEntriesThanItsIndexFilesHeldKeepsThemAll() throws IOException
    {
        final Path live = root.resolve("live");
        int firstSegmentBytes = 0;
        for (int k = 0; k < VALUES.length - 1; k++)
        {
            firstSegmentBytes += build(k, VALUES[k]);
        }
        // the first segment takes batches 0..5 exactly: the last batch rolls it
        final Map<String, String> overrides = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(firstSegmentBytes),
            LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(INTERVAL),
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(live)))
        {
            final PartitionLog log = manager.createLog("r", 0, overrides);
            append(log, 0, CLEAN_CLOSE_AFTER, k -> VALUES[k]);
        } // clean: the recovery point checkpoint says 3, inside the first segment
        final Path crashed = root.resolve("crashed");
        try (LogManager manager = LogManager.open(LogManagerConfig.of(live)))
        {
            final PartitionLog log = manager.log("r", 0);
            append(log, CLEAN_CLOSE_AFTER, VALUES.length, k -> VALUES[k]);
            assertEquals(2, log.segmentCount(), "the last batch rolled the first segment");
            final Segment first = log.segments()[0];
            assertEquals(2, first.offsetIndex.entries(), "entries for batches 2 and 5, appended across the reopen");
            assertEquals(2, first.timeIndex.entries());
            // the roll's background flush rewrites leader-epoch-checkpoint (a .tmp renamed into place) before the
            // recovery point moves to the new segment: wait for it, so the copy does not walk a file being renamed
            final long rolledAt = log.segments()[1].baseOffset;
            Await.await(() -> log.recoveryPoint() >= rolledAt, Duration.ofSeconds(30),
                () -> "the roll's flush: recovery point " + log.recoveryPoint() + ", expected " + rolledAt);
            copyAsAKillLeavesIt(live, crashed); // no clean-shutdown marker, no newer checkpoint
        }

        try (LogManager manager = LogManager.open(LogManagerConfig.of(crashed)))
        {
            final PartitionLog log = manager.log("r", 0);
            assertEquals(VALUES.length, log.logEndOffset());
            final Segment first = log.segments()[0];
            assertEquals(3, first.offsetIndex.entries(), "entries for batches 2, 4 and 5, rebuilt in one pass");
            CrashRecoveryTest.verifyIndexes(log);
            final TimeIndex time = first.timeIndex;
            assertEquals(3, time.entries(), "the closing entry is the last one's: none added");
            for (int i = 0; i < 3; i++)
            {
                final int batch = new int[] {2, 4, 5}[i];
                assertEquals(T0 + batch, time.timestamp(i), "time index entry " + i);
                assertEquals(batch, time.relativeOffset(i), "time index entry " + i);
            }
            assertEquals(5, log.offsetForTimestamp(T0 + 5, new TimestampOffset()).offset);
        }
    }

    /**
     * The other way into the same state: indexes lost after a clean close are rebuilt into fresh,
     * empty files, and the appends that follow claim room for their entries from the start of the
     * file — which must not zero the rebuilt entries.
     */
    @Test
    void indexesRebuiltForTheActiveSegmentKeepTheirEntriesThroughLaterAppends() throws IOException
    {
        final Path dir = root.resolve("lost");
        final Map<String, String> overrides = Map.of(LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(INTERVAL),
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            append(manager.createLog("r", 0, overrides), 0, 10, k -> 530);
        }
        final Path partition = dir.resolve("r-0");
        Files.delete(partition.resolve(Segment.fileName(0, Segment.INDEX_SUFFIX)));
        Files.delete(partition.resolve(Segment.fileName(0, Segment.TIME_INDEX_SUFFIX)));
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.log("r", 0);
            final int rebuilt = log.segments()[0].offsetIndex.entries();
            assertEquals(4, rebuilt, "entries for batches 2, 4, 6 and 8");
            append(log, 10, 14, k -> 530);
            assertEquals(rebuilt + 2, log.segments()[0].offsetIndex.entries());
            CrashRecoveryTest.verifyIndexes(log);
        }
    }

    /** Batch k: one record with a value of {@code valueSize} bytes and timestamp {@code T0 + k}; its length. */
    private int build(final int k, final int valueSize)
    {
        builder.wrap(buffer, 0).compression(CompressionType.NONE).producer(-1, (short)-1, -1);
        builder.appendRecord(T0 + k, ("k" + k).getBytes(StandardCharsets.UTF_8), new byte[valueSize]);
        return builder.build();
    }

    /** Appends batches {@code from..to - 1}, batch k with a value of {@code valueSize(k)} bytes. */
    private void append(final PartitionLog log, final int from, final int to, final IntUnaryOperator valueSize)
    {
        final AppendResult result = new AppendResult();
        for (int k = from; k < to; k++)
        {
            final int length = build(k, valueSize.applyAsInt(k));
            log.append(buffer, 0, length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            assertEquals(k, result.firstOffset);
        }
    }

    /** The files as they are while the log is open (the page cache a SIGKILL leaves), without the lock. */
    private static void copyAsAKillLeavesIt(final Path from, final Path to) throws IOException
    {
        try (Stream<Path> files = Files.walk(from))
        {
            for (final Path p : (Iterable<Path>)files::iterator)
            {
                final Path target = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p))
                {
                    Files.createDirectories(target);
                }
                else if (!p.getFileName().toString().equals(LogManager.LOCK_FILE))
                {
                    Files.copy(p, target, StandardCopyOption.REPLACE_EXISTING);
                }
            }
        }
    }
}
