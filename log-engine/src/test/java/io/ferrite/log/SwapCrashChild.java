package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

/**
 * The process {@link SwapCrashTest} kills: appends single-record batches (batch at offset o has the
 * timestamp {@code T0 + o}, inside its CRC), rolling small segments, and replaces random runs of
 * inactive segments with a rewriter that drops every batch whose offset is a multiple of three, for
 * as long as it lives. It prints {@code RUN <a> <b>} before each replacement of offsets [a, b) and
 * {@code DONE <a> <b> <answer>} after it. In mode {@code abandon} every replacement is abandoned
 * ({@code ABANDONED <a> <b>}): either the rewriter answers the run's last batch with one the replacer refuses
 * (IllegalArgumentException), after the new segments are written as {@code .cleaned}, or an empty directory under
 * the name the commit renames the first new segment's log to makes the commit fail (an IOException), after the other
 * files were renamed {@code .swap}. In mode {@code open} it only opens the log directory (what an interrupted
 * replacement left is settled there) and prints {@code OPENED}.
 *
 * <p>{@code SwapCrashChild <log dir> <seed> [replace|abandon|open]}
 */
public final class SwapCrashChild
{
    static final String TOPIC = "swapcrash";
    static final long T0 = 1_700_000_000_000L;
    static final Map<String, String> CONFIG = Map.of(
        LogConfig.INTERNAL_SEGMENT_BYTES, "1024",
        LogConfig.INDEX_INTERVAL_BYTES, "128",
        LogConfig.RETENTION_MS, "-1",
        LogConfig.MESSAGE_TIMESTAMP_BEFORE_MAX_MS, Long.toString(Long.MAX_VALUE));

    private SwapCrashChild()
    {
    }

    /** The rewriter's rule: a batch at such an offset is dropped (the rule is the same every time: cleaning is idempotent). */
    static boolean dropped(final long offset)
    {
        return offset % 3 == 0;
    }

    public static void main(final String[] args) throws Exception
    {
        final Random random = new Random(Long.parseLong(args[1]));
        final String mode = args.length > 2 ? args[2] : "replace";
        final LogManager manager = LogManager.open(LogManagerConfig.of(Path.of(args[0])));
        if (mode.equals("open"))
        {
            System.out.println("OPENED");
            System.out.flush();
            Runtime.getRuntime().halt(0);
        }
        final PartitionLog log = manager.log(TOPIC, 0) != null ? manager.log(TOPIC, 0) : manager.createLog(TOPIC, 0, CONFIG);
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        final BatchRewriter rewriter = batch -> dropped(batch.baseOffset()) ? null : batch;
        final RecordBatch refused = new RecordBatch().wrap(new Batches().records(1, 0, T0).view(), 0); // offset 0: outside
        while (true)
        {
            for (int i = 0; i < 1 + random.nextInt(12); i++)
            {
                final long offset = log.logEndOffset();
                log.append(batches.records(1, offset, T0 + offset).buffer, 0, batches.length, result);
                if (result.status != AppendResult.OK || result.firstOffset != offset)
                {
                    System.out.println("FAIL append " + result);
                    System.exit(1);
                }
            }
            final long[] bases = log.segmentReplacer().inactiveSegmentBases();
            if (bases.length == 0)
            {
                continue;
            }
            // mostly among the newest segments, not cleaned yet (a replacement of cleaned ones changes no offset, so
            // the test could not tell its old side from its new one), else anywhere
            final int from = random.nextInt(3) > 0 ? Math.max(0, bases.length - 1 - random.nextInt(3)) :
                random.nextInt(bases.length);
            final int count = 1 + random.nextInt(Math.min(3, bases.length - from));
            final long end = from + count < bases.length ? bases[from + count] : log.segments()[bases.length].baseOffset;
            System.out.println("RUN " + bases[from] + " " + end);
            System.out.flush();
            if (mode.equals("abandon"))
            {
                final boolean atCommit = random.nextBoolean();
                final Path blocker = log.dir().resolve(Segment.fileName(bases[from], Segment.LOG_SUFFIX) + CleanedSegments.SWAP_SUFFIX);
                if (atCommit)
                {
                    Files.createDirectory(blocker); // the abandon's deletion of the .swap files removes it (rmdir)
                }
                try
                {
                    log.segmentReplacer().replace(bases[from], count, atCommit ? rewriter :
                        batch -> batch.lastOffset() >= end - 1 ? refused : batch);
                    System.out.println("FAIL the replacement was not abandoned");
                }
                catch (final IllegalArgumentException | IOException abandoned)
                {
                    System.out.println("ABANDONED " + bases[from] + " " + end);
                }
                Files.deleteIfExists(blocker);
                System.out.flush();
                continue;
            }
            final int answer = log.segmentReplacer().replace(bases[from], count, rewriter);
            System.out.println("DONE " + bases[from] + " " + end + " " + answer);
            System.out.flush();
        }
    }
}
