package io.ferrite.log;

import org.agrona.MutableDirectBuffer;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the second review of {@link SegmentReplacer} found, each on real files: the new segments' own mappings are
 * given back at once (after an abandon and after a swap), an interrupt landing in a committed swap does not fail
 * the log, and a batch a rewriter edited in the log's own (writable) mapping is refused by its CRC.
 */
class ReplacementReview2Test extends ManagerFixture
{
    private static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
        LogConfig.INDEX_INTERVAL_BYTES, "256", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
        LogConfig.FILE_DELETE_DELAY_MS, "5000");

    private PartitionLog filledLog(final LogManagerConfig config, final int batches) throws IOException
    {
        manager = LogManager.open(config);
        final PartitionLog log = manager.createLog("swap", 0, SMALL);
        ReplacementLeftoversTest.append(log, batches);
        return log;
    }

    /** The mappings of this process of files under {@code partition}: path (with " (deleted)" if unlinked) to count. */
    private static Map<String, Integer> mappings(final Path partition) throws IOException
    {
        final Map<String, Integer> mapped = new HashMap<>();
        final String prefix = partition.toString() + "/";
        for (final String line : Files.readAllLines(Path.of("/proc/self/maps")))
        {
            final int at = line.indexOf(prefix);
            if (at >= 0)
            {
                mapped.merge(line.substring(at), 1, Integer::sum);
            }
        }
        return mapped;
    }

    private static void assertNoLeftoverMapping(final Path partition, final String when) throws IOException
    {
        final Map<String, Integer> mapped = mappings(partition);
        for (final Map.Entry<String, Integer> e : mapped.entrySet())
        {
            assertTrue(!e.getKey().endsWith("(deleted)") && !e.getKey().contains(CleanedSegments.CLEANED_SUFFIX) &&
                !e.getKey().contains(CleanedSegments.SWAP_SUFFIX), when + ": a leftover mapping of " + e.getKey() + " in " + mapped);
            assertEquals(1, e.getValue(), when + ": mapped more than once: " + e.getKey() + " in " + mapped);
        }
    }

    /**
     * After a replacement abandoned (the rewriter answers a bad batch) no {@code .cleaned} file is mapped, deleted
     * or not; after a successful one every segment file is mapped once (by the segment readers use), not also by
     * the replacement's writer.
     */
    @Test
    void theNewSegmentsMappingsAreGivenBackAfterAnAbandonAndAfterASwap() throws Exception
    {
        final PartitionLog log = filledLog(LogManagerConfig.of(dir), 150);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final long lastBase = bases[2];
        assertThrows(IllegalArgumentException.class, () -> log.segmentReplacer().replace(bases[0], 3, batch ->
        {
            if (batch.baseOffset() >= lastBase)
            {
                throw new IllegalArgumentException("a rewriter's bug"); // the first two segments written by then
            }
            return batch;
        }));
        assertNoLeftoverMapping(log.dir(), "after an abandon");

        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 3, batch -> batch.baseOffset() % 2 == 0 ? null : batch));
        assertNoLeftoverMapping(log.dir(), "after a swap");
    }

    /**
     * An interrupt (a stopping cleaner) that came while the replacement waited for the segments lock to swap — the
     * thread's flag set when it gets the lock — neither fails the swap nor the log's fsyncs; the flag is kept.
     */
    @Test
    void anInterruptBeforeTheSwapDoesNotFailTheLog() throws Exception
    {
        final PartitionLog log = filledLog(LogManagerConfig.of(dir), 150);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        log.segmentReplacer().beforeSwap = () -> Thread.currentThread().interrupt();
        final int answer;
        final boolean interrupted;
        try
        {
            answer = log.segmentReplacer().replace(bases[0], 3, batch -> batch.baseOffset() % 2 == 0 ? null : batch);
        }
        finally
        {
            interrupted = Thread.interrupted(); // cleared for the rest of the test
            log.segmentReplacer().beforeSwap = () -> { };
        }
        assertEquals(SegmentReplacer.REPLACED, answer);
        assertTrue(interrupted, "the interrupt is given back");
        assertNull(log.fsyncFailure());
        final long[] now = log.segmentReplacer().inactiveSegmentBases();
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(now[3], 2, batch -> batch));
    }

    /**
     * A rewriter that edits the batch it was given in place — the segment written with {@link WriteStrategy#MAPPED}
     * in this process, its mapping writable — and answers it is refused: the CRC of the batch as read is checked too.
     */
    @Test
    void aBatchEditedInTheLogsMappingIsRefused() throws Exception
    {
        final PartitionLog log = filledLog(LogManagerConfig.of(dir).withWriteStrategy(WriteStrategy.MAPPED), 60);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final Segment[] before = log.segments();
        final boolean[] edited = {false};
        assertThrows(IllegalArgumentException.class, () -> log.segmentReplacer().replace(bases[0], 2, batch ->
        {
            if (!edited[0])
            {
                final int last = batch.offset() + batch.sizeInBytes() - 1; // a record byte: the frame stays whole
                ((MutableDirectBuffer)batch.buffer()).putByte(last, (byte)(batch.buffer().getByte(last) ^ 1));
                edited[0] = true;
            }
            return batch;
        }));
        assertTrue(edited[0], "the mapping was writable");
        assertEquals(before[0], log.segments()[0], "the run is not replaced");
    }
}
