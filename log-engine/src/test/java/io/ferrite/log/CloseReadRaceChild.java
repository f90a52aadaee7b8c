package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The process {@link CloseReadRaceTest} runs: each round fills a log with a few segments, starts one
 * reader thread of each kind — fetch regions ({@code read}), a {@link LogTailer} checking every
 * batch's CRC (so it reads each byte through the mapping, after {@code next} returned),
 * {@code readBatch} with a CRC check, and ListOffsets' lookups through the time and offset indexes
 * ({@code offsetForTimestamp}, {@code maxTimestampOffset}) — and closes the log from the main
 * thread while they run. Each reader must end with {@link LogClosedException}; any other throwable,
 * a corrupt batch, or a read that began after {@code close()} returned and did not throw is a
 * failure. A read that touches an unmapped page crashes the process instead.
 *
 * <p>Prints {@code ROUND <n> ...} per round, {@code FAIL <why>} and exits 1 on the first failure,
 * {@code DONE} at the end. {@code CloseReadRaceChild <dir> <rounds> <seed>}; even rounds use the
 * mapped write strategy (a read-write mapping), odd ones the channel strategy (read-only).
 */
public final class CloseReadRaceChild
{
    private static final Map<String, String> CONFIG = Map.of(
        LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(256 * 1024),
        LogConfig.INDEX_INTERVAL_BYTES, "4096");
    /** About 8 KiB a batch, 160 of them: five segments, each with 60-odd index entries. */
    private static final int BATCHES = 160;
    private static final int RECORDS = 32;
    private static final long FIRST_TIMESTAMP = 1_700_000_000_000L;

    private enum Kind
    {
        FETCH, TAILER, READ_BATCH, TIMESTAMP
    }

    private CloseReadRaceChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final int rounds = Integer.parseInt(args[1]);
        final Random random = new Random(Long.parseLong(args[2]));
        ChildJvm.runRounds(rounds, round -> round(dir.resolve("round-" + round),
            round % 2 == 0 ? WriteStrategy.MAPPED : WriteStrategy.CHANNEL, random.nextLong(), random.nextInt(3_000)));
    }

    /** One round; returns what went wrong, or null. */
    private static String round(final Path dir, final WriteStrategy strategy, final long seed, final int closeAfterMicros)
        throws Exception
    {
        final AtomicReference<String> failure = new AtomicReference<>();
        final long[] reads = new long[Kind.values().length];
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(strategy)))
        {
            final PartitionLog log = manager.createLog("race", 0, CONFIG);
            fill(log);
            final Race race = new Race(log, failure);
            final Thread[] readers = new Thread[Kind.values().length];
            for (final Kind kind : Kind.values())
            {
                final SplittableRandom random = new SplittableRandom(seed + kind.ordinal());
                readers[kind.ordinal()] = new Thread(() -> reads[kind.ordinal()] = race.read(kind, random), kind.name());
                readers[kind.ordinal()].setDaemon(true); // a reader that never stops must not keep the process
                readers[kind.ordinal()].start();
            }
            if (!race.started.await(30, TimeUnit.SECONDS))
            {
                return "the readers did not start (" + failure.get() + ")";
            }
            final long closeAt = System.nanoTime() + closeAfterMicros * 1_000L;
            while (System.nanoTime() < closeAt)
            {
                Thread.onSpinWait();
            }
            log.close(); // from this thread, while the readers read
            race.closeReturned = true;
            for (final Thread reader : readers)
            {
                reader.join(30_000);
                if (reader.isAlive())
                {
                    return "reader " + reader.getName() + " did not end after the close (" + strategy + ")";
                }
            }
        }
        if (failure.get() != null)
        {
            return failure.get() + " (" + strategy + ")";
        }
        ChildJvm.deleteRecursively(dir);
        System.out.println("ROUND " + dir.getFileName() + " " + strategy + " closed after " + closeAfterMicros + " us, reads " +
            java.util.Arrays.toString(reads));
        System.out.flush();
        return null;
    }

    private static void fill(final PartitionLog log)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(16 * 1024);
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final byte[] value = new byte[240];
        final AppendResult result = new AppendResult();
        for (int b = 0; b < BATCHES; b++)
        {
            builder.wrap(buffer, 0);
            for (int r = 0; r < RECORDS; r++)
            {
                value[0] = (byte)r;
                builder.appendRecord(FIRST_TIMESTAMP + (long)b * RECORDS + r, null, value);
            }
            log.append(buffer, 0, builder.build(), result);
            if (result.status != AppendResult.OK)
            {
                throw new IllegalStateException("fill: append " + b + " answered " + result);
            }
        }
        log.highWatermark(log.logEndOffset());
    }

    /** The readers' side of one round. */
    private static final class Race
    {
        final PartitionLog log;
        final AtomicReference<String> failure;
        final CountDownLatch started = new CountDownLatch(Kind.values().length);
        volatile boolean closeReturned;

        Race(final PartitionLog log, final AtomicReference<String> failure)
        {
            this.log = log;
            this.failure = failure;
        }

        /** Reads until the log answers LogClosedException or something fails; returns the reads made. */
        long read(final Kind kind, final SplittableRandom random)
        {
            final FileRegion region = new FileRegion();
            final RecordBatch batch = new RecordBatch();
            final TimestampOffset found = new TimestampOffset();
            LogTailer tailer = new LogTailer(log, 0);
            final long end = log.logEndOffset();
            long reads = 0;
            while (true)
            {
                final boolean afterClose = closeReturned;
                try
                {
                    switch (kind)
                    {
                        case FETCH -> log.read(random.nextLong(end), 64 * 1024, end, true, region);
                        case TAILER ->
                        {
                            if (!tailer.next(Long.MAX_VALUE, batch))
                            {
                                tailer = new LogTailer(log, 0); // at the end: from the start again
                            }
                            else if (!batch.isCrcValid())
                            {
                                return fail(kind + ": the batch at " + batch.baseOffset() + " fails its CRC");
                            }
                        }
                        case READ_BATCH ->
                        {
                            if (log.readBatch(random.nextLong(end), end, batch) == PartitionLog.READ_OK && !batch.isCrcValid())
                            {
                                return fail(kind + ": the batch at " + batch.baseOffset() + " fails its CRC");
                            }
                        }
                        case TIMESTAMP ->
                        {
                            if ((reads & 7) == 0)
                            {
                                log.maxTimestampOffset(found);
                            }
                            else
                            {
                                log.offsetForTimestamp(FIRST_TIMESTAMP + random.nextLong(end), found);
                            }
                        }
                        default -> throw new IllegalStateException(kind.name());
                    }
                }
                catch (final LogClosedException expected)
                {
                    return reads;
                }
                catch (final Throwable t)
                {
                    final StringWriter trace = new StringWriter();
                    t.printStackTrace(new PrintWriter(trace));
                    return fail(kind + " read " + reads + (afterClose ? ", begun after the close," : "") + " threw " + trace);
                }
                if (afterClose)
                {
                    return fail(kind + ": a read begun after close() returned answered instead of throwing LogClosedException");
                }
                if (++reads == 100)
                {
                    started.countDown();
                }
            }
        }

        private long fail(final String why)
        {
            failure.compareAndSet(null, why);
            started.countDown();
            return -1;
        }
    }
}
