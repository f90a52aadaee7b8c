package io.ferrite.log;

import io.ferrite.testing.Await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * {@link SwapFsyncFailureTest}'s child, run with the fsync-failing shim: fills a log, waits until the rolled
 * segments' background flush is done (nothing else of the log fsyncs after that), creates the trigger file that
 * arms the shim, replaces a run of segments, and prints what it saw as {@code RESULT} lines.
 *
 * <p>{@code SwapFsyncFailureChild <log dir> <trigger file>}
 */
public final class SwapFsyncFailureChild
{
    private SwapFsyncFailureChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final LogManager manager = LogManager.open(LogManagerConfig.of(Path.of(args[0])));
        final PartitionLog log = manager.createLog("t", 0, Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "2048",
            LogConfig.INDEX_INTERVAL_BYTES, "256", LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE)));
        final Batches b = new Batches();
        final AppendResult result = new AppendResult();
        for (int i = 0; i < 150; i++)
        {
            log.append(b.records(1 + i % 3, log.logEndOffset(), 1_700_000_000_000L + i).buffer, 0, b.length, result);
            if (result.status != AppendResult.OK)
            {
                System.out.println("RESULT append " + result);
            }
        }
        final long activeBase = log.segments()[log.segmentCount() - 1].baseOffset;
        Await.await(() -> log.durableOffset() >= activeBase, Duration.ofSeconds(60), "the rolled segments flushed");
        Files.createFile(Path.of(args[1]));
        final long[] bases = log.segmentReplacer().inactiveSegmentBases();
        try
        {
            final int answer = log.segmentReplacer().replace(bases[0], 3, batch -> batch.baseOffset() % 2 == 0 ? null : batch);
            System.out.println("RESULT answer " + answer);
        }
        catch (final IOException ex)
        {
            System.out.println("RESULT thrown " + ex.getClass().getSimpleName());
        }
        System.out.println("RESULT fsyncFailure " + (log.fsyncFailure() != null));
        System.out.println("RESULT again " + log.segmentReplacer().replace(log.segmentReplacer().inactiveSegmentBases()[0], 1,
            batch -> batch));
        System.out.flush();
        Runtime.getRuntime().halt(0); // a close would flush a log whose fsync failed: nothing to check there
    }
}
