package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ListOffsets by timestamp over zstd batches does not grow the process's native memory (lots11 review H1): each lookup
 * used to make its own codecs, and a zstd batch's decompression context, made per lookup, was never freed — about
 * 110 KiB of resident memory a lookup (3 000 lookups: ~320 MiB). The process's resident set is read from
 * {@code /proc/self/status} before and after 3 000 lookups, each decompressing one batch, once the same lookups warmed
 * up; the bound (64 MiB) is far above what the heap's young objects of 3 000 lookups can touch and far below the leak.
 */
class TimestampLookupNativeMemoryTest
{
    private static final int BATCHES = 40;
    private static final int RECORDS_PER_BATCH = 8;
    private static final long T0 = 1_700_000_000_000L;

    @TempDir
    Path dir;

    @Test
    void timestampLookupsOverZstdBatchesLeaveNoNativeMemoryBehind() throws IOException
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(64 * 1024);
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final AppendResult result = new AppendResult();
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = manager.createLog("z", 0, Map.of());
            for (int b = 0; b < BATCHES; b++)
            {
                builder.wrap(buffer, 0).compression(CompressionType.ZSTD);
                for (int k = 0; k < RECORDS_PER_BATCH; k++)
                {
                    final long offset = (long)b * RECORDS_PER_BATCH + k;
                    builder.appendRecord(T0 + offset, ("k" + offset).getBytes(StandardCharsets.UTF_8),
                        ("value of record " + offset).getBytes(StandardCharsets.UTF_8));
                }
                log.append(buffer, 0, builder.build(), result);
                assertEquals(AppendResult.OK, result.status);
            }
            log.highWatermark(log.logEndOffset());
            final TimestampOffset found = new TimestampOffset();
            lookUp(log, found, 500);
            System.gc();
            final long before = residentKiB();
            lookUp(log, found, 3_000);
            final long grown = residentKiB() - before;
            System.out.println("resident set grown by " + grown + " KiB over 3 000 timestamp lookups of zstd batches");
            assertTrue(grown < 64 * 1024, "resident set grown by " + grown + " KiB over 3 000 lookups");
        }
    }

    /** {@code n} lookups, each landing inside a batch (one decompressed per lookup), answers checked. */
    private static void lookUp(final PartitionLog log, final TimestampOffset found, final int n)
    {
        for (int i = 0; i < n; i++)
        {
            final long offset = (long)(i % BATCHES) * RECORDS_PER_BATCH + 3;
            assertEquals(offset, log.offsetForTimestamp(T0 + offset, found).offset);
        }
    }

    private static long residentKiB() throws IOException
    {
        for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
        {
            if (line.startsWith("VmRSS:"))
            {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        throw new IllegalStateException("no VmRSS in /proc/self/status");
    }
}
