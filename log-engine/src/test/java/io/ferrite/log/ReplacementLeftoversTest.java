package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What {@link SegmentReplacer} left open after its first review, each on real files: a rebuilt batch failing its CRC
 * is refused.
 */
class ReplacementLeftoversTest
{
    private static final Map<String, String> SMALL = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
        LogConfig.INDEX_INTERVAL_BYTES, "256", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE),
        LogConfig.FILE_DELETE_DELAY_MS, "5000");

    @TempDir
    Path dir;

    private LogManager manager;

    @AfterEach
    void close() throws IOException
    {
        if (manager != null)
        {
            manager.close();
        }
    }

    private static void append(final PartitionLog log, final int batches)
    {
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        for (int i = 0; i < batches; i++)
        {
            b.records(1 + i % 3, log.logEndOffset(), 1_700_000_000_000L + i);
            log.append(b.buffer, 0, b.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
        }
    }

    private static List<String> names(final Path partition, final String suffix) throws IOException
    {
        try (Stream<Path> files = Files.list(partition))
        {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(suffix)).sorted().toList();
        }
    }

    /** A batch the rewriter rebuilt whose CRC does not match its bytes is refused, and nothing of the run replaced. */
    @Test
    void aRebuiltBatchFailingItsCrcIsRefused() throws Exception
    {
        manager = LogManager.open(LogManagerConfig.of(dir));
        final PartitionLog log = manager.createLog("swap", 0, SMALL);
        append(log, 60);
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        final Segment[] before = log.segments();
        assertThrows(IllegalArgumentException.class, () -> log.segmentReplacer().replace(bases[0], 2, batch ->
        {
            final byte[] copy = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), copy);
            copy[copy.length - 1] ^= 1; // a record byte: the frame is whole, the CRC is not
            return new RecordBatch().wrap(new UnsafeBuffer(copy), 0);
        }));
        assertEquals(before[0], log.segments()[0], "the run is not replaced");
        assertEquals(List.of(), names(log.dir(), CleanedSegments.CLEANED_SUFFIX));
        // a rebuilt batch that is whole is taken
        assertEquals(SegmentReplacer.REPLACED, log.segmentReplacer().replace(bases[0], 2, batch ->
        {
            final byte[] copy = new byte[batch.sizeInBytes()];
            batch.buffer().getBytes(batch.offset(), copy);
            return new RecordBatch().wrap(new UnsafeBuffer(copy), 0);
        }));
    }

}
