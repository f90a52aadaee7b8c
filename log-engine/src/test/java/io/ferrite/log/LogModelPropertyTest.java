package io.ferrite.log;

import io.ferrite.wire.compress.CompressionType;
import io.ferrite.wire.testing.Property;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Random sequences of append, read, roll (small segments), retention, DeleteRecords and reopen
 * against a simple in-memory model (the list of batches as appended): every read must return
 * exactly the model's batches, byte for byte.
 */
@Tag("shortened")
class LogModelPropertyTest
{
    @TempDir
    Path root;

    /** A batch as the log wrote it. */
    private record ModelBatch(long base, long last, byte[] bytes)
    {
    }

    @Test
    void logAgreesWithTheModel()
    {
        final int[] run = new int[1];
        // each try opens, fills, rolls and reopens a log (1.7 s in a clean-clone CI run, a third of it fsyncs of
        // checkpoints, segments and directories): 4 tries in the default build; -Pslow runs this class
        // (tagged shortened) with ferrite.logmodel.tries=10, -Plong with 10 times its ferrite.tries.factor of 10: 100
        Property.check("log vs model", Integer.getInteger("ferrite.logmodel.tries", 4), r ->
        {
            final Path dir = root.resolve("run" + run[0]++);
            try
            {
                check(dir, r);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        });
    }

    private static void check(final Path dir, final Random r) throws IOException
    {
        final MutableClock clock = new MutableClock(1_700_000_000_000L);
        final Map<String, String> config = Map.of(
            LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(800 + r.nextInt(4000)),
            LogConfig.INDEX_INTERVAL_BYTES, Integer.toString(r.nextInt(600)),
            LogConfig.SEGMENT_INDEX_BYTES, Integer.toString(64 + r.nextInt(400)),
            LogConfig.RETENTION_MS, "100000",
            LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));
        final LogManagerConfig managerConfig = LogManagerConfig.of(dir).withClock(clock)
            .withWriteStrategy(r.nextBoolean() ? WriteStrategy.MAPPED : WriteStrategy.CHANNEL);
        LogManager manager = LogManager.open(managerConfig);
        PartitionLog log = manager.createLog("t", 3, config);
        final List<ModelBatch> model = new ArrayList<>();
        long logStart = 0;
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        final FileRegion region = new FileRegion();
        try
        {
            for (int op = 0; op < 120; op++)
            {
                final int kind = r.nextInt(20);
                if (kind < 10)
                {
                    batches.build(1 + r.nextInt(8), r.nextLong() & 0xFFFF, clock.time(), CompressionType.values()[r.nextInt(5)],
                        -1, (short)-1, -1);
                    final long next = log.logEndOffset();
                    if (!model.isEmpty())
                    {
                        assertEquals(model.get(model.size() - 1).last + 1, next);
                    }
                    log.append(batches.buffer, 0, batches.length, result);
                    assertEquals(AppendResult.OK, result.status, result.toString());
                    assertEquals(next, result.firstOffset);
                    model.add(new ModelBatch(result.firstOffset, result.lastOffset, batches.bytes()));
                    clock.advance(r.nextInt(1000));
                }
                else if (kind < 16)
                {
                    final long end = log.logEndOffset();
                    final long start = logStart + (long)(r.nextDouble() * (end - logStart + 2)) - 1;
                    final int maxBytes = r.nextBoolean() ? Integer.MAX_VALUE : r.nextInt(3000);
                    final long maxOffset = logStart + (long)(r.nextDouble() * (end - logStart + 3));
                    final boolean minOne = r.nextBoolean();
                    final int status = log.read(start, maxBytes, maxOffset, minOne, region);
                    if (start < logStart || start > end)
                    {
                        assertEquals(PartitionLog.OFFSET_OUT_OF_RANGE, status, "start " + start + " of [" + logStart + ", " + end + "]");
                        continue;
                    }
                    assertEquals(PartitionLog.READ_OK, status);
                    // a read returns batches of one segment (as Kafka's): bound it by the next segment's base
                    final long segmentEnd = nextSegmentBase(log, model, start);
                    assertArrayEquals(expected(model, start, maxBytes, Math.min(Math.min(maxOffset, end), segmentEnd), minOne),
                        region.isEmpty() ? new byte[0] : PartitionLogTest.readRegion(region),
                        "read(" + start + ", " + maxBytes + ", " + maxOffset + ", " + minOne + ")");
                }
                else if (kind == 16)
                {
                    clock.advance(r.nextInt(150_000));
                    log.deleteOldSegments(clock.time());
                    logStart = log.logStartOffset();
                    dropBelow(model, logStart);
                }
                else if (kind == 17 && !model.isEmpty())
                {
                    log.highWatermark(log.logEndOffset());
                    final long to = logStart + (long)(r.nextDouble() * (log.logEndOffset() - logStart));
                    log.deleteRecordsBefore(to);
                    logStart = log.logStartOffset();
                    assertEquals(Math.max(to, logStart), logStart);
                    dropBelow(model, logStart);
                }
                else
                {
                    manager.close();
                    manager = LogManager.open(managerConfig);
                    log = manager.log("t", 3);
                    assertEquals(logStart, log.logStartOffset());
                    assertEquals(model.isEmpty() ? log.logEndOffset() : model.get(model.size() - 1).last + 1, log.logEndOffset());
                }
            }
        }
        finally
        {
            manager.close();
        }
    }

    /** The base offset of the segment after the one holding the first batch a read from {@code start} returns. */
    private static long nextSegmentBase(final PartitionLog log, final List<ModelBatch> model, final long start)
    {
        long first = Long.MAX_VALUE;
        for (final ModelBatch b : model)
        {
            if (b.last >= start)
            {
                first = b.base;
                break;
            }
        }
        for (final Segment s : log.segments())
        {
            if (s.baseOffset > first)
            {
                return s.baseOffset;
            }
        }
        return Long.MAX_VALUE;
    }

    /** Drops model batches wholly below the log start: the log keeps the batch holding it. */
    private static void dropBelow(final List<ModelBatch> model, final long logStart)
    {
        model.removeIf(b -> b.last < logStart);
    }

    private static byte[] expected(final List<ModelBatch> model, final long start, final int maxBytes, final long bound,
        final boolean minOne)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        boolean first = true;
        for (final ModelBatch b : model)
        {
            if (b.last < start)
            {
                continue;
            }
            if (b.last >= bound)
            {
                break;
            }
            if (out.size() > maxBytes - b.bytes.length && !(minOne && first))
            {
                break;
            }
            out.writeBytes(b.bytes);
            first = false;
        }
        return out.toByteArray();
    }

    @Test
    void theModelItselfAgreesWithTheReadRules()
    {
        final List<ModelBatch> model = List.of(new ModelBatch(0, 1, new byte[10]), new ModelBatch(2, 4, new byte[20]));
        assertEquals(30, expected(model, 0, 100, 5, false).length);
        assertEquals(10, expected(model, 1, 15, 5, false).length);
        assertEquals(0, expected(model, 0, 5, 5, false).length);
        assertEquals(10, expected(model, 0, 5, 5, true).length);
        assertEquals(10, expected(model, 0, 100, 4, true).length);
        assertTrue(Arrays.equals(new byte[0], expected(model, 5, 100, 5, true)));
    }
}
