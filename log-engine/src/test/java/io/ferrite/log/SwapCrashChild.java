package io.ferrite.log;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

/**
 * The process {@link SwapCrashTest} kills: appends single-record batches (batch at offset o has the
 * timestamp {@code T0 + o}, inside its CRC), rolling small segments, and replaces random runs of
 * inactive segments with a rewriter that drops every batch whose offset is a multiple of three, for
 * as long as it lives. It prints {@code RUN <a> <b>} before each replacement of offsets [a, b) and
 * {@code DONE <a> <b> <answer>} after it.
 *
 * <p>{@code SwapCrashChild <log dir> <seed>}
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
        final LogManager manager = LogManager.open(LogManagerConfig.of(Path.of(args[0])));
        final PartitionLog log = manager.log(TOPIC, 0) != null ? manager.log(TOPIC, 0) : manager.createLog(TOPIC, 0, CONFIG);
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        final BatchRewriter rewriter = batch -> dropped(batch.baseOffset()) ? null : batch;
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
            final int answer = log.segmentReplacer().replace(bases[from], count, rewriter);
            System.out.println("DONE " + bases[from] + " " + end + " " + answer);
            System.out.flush();
        }
    }
}
