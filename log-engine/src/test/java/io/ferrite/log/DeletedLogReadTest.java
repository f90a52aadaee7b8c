package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A deleted partition's mappings outlive it by {@code file.delete.delay.ms}, as a retention-deleted
 * segment's do: a fetch or an in-place reader that found the log before the deletion (a topic
 * deleted while a consumer reads it) goes on reading whole batches instead of touching an unmapped
 * page (with Agrona's bounds checks an IndexOutOfBoundsException, without them a SIGSEGV).
 */
class DeletedLogReadTest
{
    @TempDir
    Path dir;

    @Test
    void aBatchWrappedBeforeTheDeletionStaysReadable() throws Exception
    {
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("gone", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096"));
            final Batches batches = new Batches();
            final AppendResult result = new AppendResult();
            while (log.segmentCount() < 3)
            {
                batches.records(10, log.logEndOffset(), System.currentTimeMillis());
                log.append(batches.buffer, 0, batches.length, result);
                assertEquals(AppendResult.OK, result.status);
            }
            log.highWatermark(log.logEndOffset());
            final RecordBatch first = new RecordBatch();
            assertEquals(PartitionLog.READ_OK, log.readBatch(0, log.logEndOffset(), first), "the first batch");
            final RecordBatch last = new RecordBatch();
            final long lastOffset = log.logEndOffset() - 1;
            assertEquals(PartitionLog.READ_OK, log.readBatch(lastOffset, log.logEndOffset(), last), "the last batch, in the active segment");
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch tailed = new RecordBatch();
            assertTrue(tailer.next(log.logEndOffset(), tailed));

            manager.deleteLog("gone", 0);

            assertFalse(Files.exists(dir.resolve("gone-0")), "the directory is gone");
            assertTrue(log.isClosed());
            assertTrue(first.isCrcValid(), "a sealed segment's batch read after the deletion");
            assertEquals(9, first.lastOffset());
            assertTrue(last.isCrcValid(), "the active segment's batch read after the deletion");
            assertEquals(lastOffset, last.lastOffset());
            assertTrue(tailed.isCrcValid());
            batches.records(1, 1, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.LOG_CLOSED, result.status, "a deleted log takes no appends");
        }
    }

    /**
     * A read that found a rolled segment before retention deleted it goes on in it — the files are
     * deleted at once, the segment is closed and unmapped only after {@code file.delete.delay.ms}.
     * After a clean restart a rolled segment's indexes are not mapped (185ae7e maps them on first use),
     * and the first use after the deletion opened the file by its path: after retention it created
     * the deleted index again (zeros, left in the directory), after {@code deleteLog} — the directory
     * renamed — an UncheckedIOException (NoSuchFileException) out of the read instead of its answer.
     * The read's next step is replayed here by hand on the segment it held.
     */
    @Test
    void aReadThatFoundARolledSegmentBeforeRetentionDeletedItAnswersFromIt() throws Exception
    {
        final Path data = dir.resolve("data");
        OpenFilesTest.writeRolledLogAndStop(data);
        try (LogManager manager = LogManager.open(LogManagerConfig.of(data)))
        {
            final PartitionLog log = manager.log("rolled", 0);
            final Segment[] held = log.segments();
            final Segment first = held[0];
            assertTrue(first.offsetIndex.entries() > 0, "the first segment's offset index has entries");
            final long target = held[1].baseOffset - 3; // in its last batch, past its first index entry
            log.highWatermark(log.logEndOffset());
            assertTrue(log.deleteRecordsBefore(held[1].baseOffset) >= 0);
            assertEquals(held[1].baseOffset, log.segments()[0].baseOffset, "retention deleted the first segment");
            assertFalse(Files.exists(first.offsetIndex.file()), "and its files");

            final int p = first.positionOf(target, first.size()); // the read's next step, on the segment it found

            assertTrue(p > 0, "found in the deleted segment at " + p);
            assertTrue(first.batchBaseOffset(p) <= target && first.batchLastOffset(p) >= target, "the batch holding " + target);
            assertFalse(Files.exists(first.offsetIndex.file()), "the read did not create the deleted index file again");
            final long inSecond = log.segments()[1].baseOffset - 3;
            final Segment second = held[1];

            manager.deleteLog("rolled", 0); // the directory renamed and deleted at once

            final int q = second.positionOf(inSecond, second.size()); // a read that found the log before the deletion
            assertTrue(second.batchBaseOffset(q) <= inSecond && second.batchLastOffset(q) >= inSecond, "the batch holding " + inSecond);
        }
    }
}
