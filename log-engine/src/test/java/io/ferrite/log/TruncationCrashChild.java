package io.ferrite.log;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;

/**
 * {@link TruncationCrashTest}'s child JVM: opens (or creates) the log and, until it is killed, appends batches whose
 * bytes are a function of their base offset ({@link #batch}) and truncates the log at random batch boundaries,
 * printing {@code LEO <end>} after appends, {@code TRUNC <target> <end>} before a truncation and {@code TRUNCATED
 * <target>} after it.
 */
final class TruncationCrashChild
{
    static final String TOPIC = "trunc";
    static final long T0 = 1_700_000_000_000L;
    static final Map<String, String> CONFIG = Map.of(LogConfig.INTERNAL_SEGMENT_BYTES, "4096",
        LogConfig.INDEX_INTERVAL_BYTES, "512");

    private TruncationCrashChild()
    {
    }

    /** The batch at {@code base}: 3 records whose values and timestamps follow from it (the log patches the base offset). */
    static Batches batch(final Batches batches, final long base)
    {
        return batches.records(3, base, T0 + base);
    }

    public static void main(final String[] args) throws Exception
    {
        final Random random = new Random(Long.parseLong(args[1]));
        final LogManager manager = LogManager.open(LogManagerConfig.of(Path.of(args[0])));
        final PartitionLog log = manager.log(TOPIC, 0) != null ? manager.log(TOPIC, 0) : manager.createLog(TOPIC, 0, CONFIG);
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        while (true)
        {
            final int n = 1 + random.nextInt(30);
            for (int i = 0; i < n; i++)
            {
                batch(batches, log.logEndOffset());
                log.append(batches.buffer, 0, batches.length, result);
                if (result.status != AppendResult.OK)
                {
                    throw new IllegalStateException(result.toString());
                }
            }
            final long end = log.logEndOffset();
            System.out.println("LEO " + end);
            if (random.nextInt(3) == 0)
            {
                log.flush(); // the recovery point moves, and the truncation must bring it back
            }
            log.highWatermark(end);
            // a batch boundary (every batch holds 3 records from a multiple of 3), at most 150 offsets back
            final long from = Math.max(log.logStartOffset(), end - 150);
            final long target = from + 3 * random.nextInt((int)((end - from) / 3));
            System.out.println("TRUNC " + target + " " + end);
            log.truncateTo(target);
            System.out.println("TRUNCATED " + target);
        }
    }
}
