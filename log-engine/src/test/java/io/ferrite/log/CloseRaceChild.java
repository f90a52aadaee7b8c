package io.ferrite.log;

import io.ferrite.wire.record.RecordBatch;
import io.ferrite.wire.record.RecordBatchBuilder;
import org.agrona.ExpandableDirectByteBuffer;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The process {@link CloseRaceTest} runs, so that a close unmapping a segment under a running
 * append shows as a crashed child (SIGSEGV) and a failed test, not as a dead build. Each round a
 * writer thread appends in a tight loop while the main thread closes the log after a random number
 * of appends; the writer must see only OK, then LOG_CLOSED, and the reopened log must hold exactly
 * the acknowledged batches. Prints {@code ROUND <n> <appends>} per round, {@code FAIL <why>} and
 * exits 1 on the first failure, {@code DONE} at the end.
 *
 * <p>{@code CloseRaceChild <dir> <rounds> <seed>}; even rounds use the mapped strategy, odd ones
 * the channel strategy; rounds 2 and 3 of every four build each batch in a {@link BatchClaim} and
 * commit it (with the channel strategy the commit copies, as an append does). Batches of 512 KiB and 4 MiB segments keep the writer inside checks, copies
 * and rolls, where a close hurts most.
 */
public final class CloseRaceChild
{
    private static final Map<String, String> CONFIG = Map.of(
        LogConfig.INTERNAL_SEGMENT_BYTES, Integer.toString(4 << 20),
        LogConfig.INDEX_INTERVAL_BYTES, "4096");

    /** About 512 KiB: the writer spends most of each append checking and copying, far longer than a close takes to unmap. */
    private static final int BATCH_BYTES = 512 * 1024;

    private CloseRaceChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path dir = Path.of(args[0]);
        final int rounds = Integer.parseInt(args[1]);
        final Random random = new Random(Long.parseLong(args[2]));
        final ExpandableDirectByteBuffer template = new ExpandableDirectByteBuffer(BATCH_BYTES + 4096);
        final int length = template(template);
        ChildJvm.runRounds(rounds, round -> round(dir.resolve("round-" + round),
            round % 2 == 0 ? WriteStrategy.MAPPED : WriteStrategy.CHANNEL, round % 4 >= 2, template, length, random.nextInt(40)));
    }

    private static int template(final ExpandableDirectByteBuffer out)
    {
        final RecordBatchBuilder builder = new RecordBatchBuilder().wrap(out, 0);
        final byte[] value = new byte[BATCH_BYTES / 16];
        for (int i = 0; i < 16; i++)
        {
            builder.appendRecord(System.currentTimeMillis(), null, value);
        }
        return builder.build();
    }

    /** One round; returns what went wrong, or null. */
    private static String round(final Path dir, final WriteStrategy strategy, final boolean claims,
        final ExpandableDirectByteBuffer template, final int length, final int closeAfter) throws Exception
    {
        final long acknowledgedEnd;
        try (LogManager manager = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(strategy)))
        {
            final PartitionLog log = manager.createLog("race", 0, CONFIG);
            final AtomicReference<String> failure = new AtomicReference<>();
            final long[] end = {0};
            final Thread writer = new Thread(() -> write(log, claims, template, length, end, failure), "writer");
            writer.setDaemon(true); // a failed close must not leave the process waiting for it
            writer.start();
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (log.logEndOffset() < closeAfter * 16L && writer.isAlive() && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            log.close(); // from this thread, while the writer appends
            writer.join(30_000);
            if (writer.isAlive())
            {
                return "the writer did not stop after the close (" + strategy + ")";
            }
            if (failure.get() != null)
            {
                return failure.get() + " (" + strategy + ")";
            }
            acknowledgedEnd = end[0];
        }
        try (LogManager reopened = LogManager.open(LogManagerConfig.of(dir).withWriteStrategy(strategy)))
        {
            final PartitionLog log = reopened.log("race", 0);
            if (log.logEndOffset() != acknowledgedEnd)
            {
                return "reopened log ends at " + log.logEndOffset() + ", acknowledged appends at " + acknowledgedEnd + " (" + strategy + ")";
            }
            final LogTailer tailer = new LogTailer(log, 0);
            final RecordBatch batch = new RecordBatch();
            long expected = 0;
            while (tailer.next(Long.MAX_VALUE, batch))
            {
                if (batch.baseOffset() != expected || batch.check(batch.sizeInBytes()) != RecordBatch.OK)
                {
                    return "reopened log: batch at " + batch.baseOffset() + " (expected " + expected + ") checks " +
                        batch.check(batch.sizeInBytes());
                }
                expected = batch.lastOffset() + 1;
            }
            if (expected != acknowledgedEnd)
            {
                return "reopened log reads to " + expected + ", acknowledged appends end at " + acknowledgedEnd;
            }
        }
        ChildJvm.deleteRecursively(dir); // up to 20 MiB a round, on tmpfs: memory
        System.out.println("ROUND " + dir.getFileName() + " " + acknowledgedEnd / 16 + " appends " + strategy + (claims ? " claims" : ""));
        System.out.flush();
        return null;
    }

    /** The writer: appends (or claims and commits) until LOG_CLOSED; anything else, or an exception, is a failure. */
    private static void write(final PartitionLog log, final boolean claims, final ExpandableDirectByteBuffer template,
        final int length, final long[] end, final AtomicReference<String> failure)
    {
        final ExpandableDirectByteBuffer buffer = new ExpandableDirectByteBuffer(BATCH_BYTES + 4096);
        final BatchClaim claim = new BatchClaim();
        final RecordBatchBuilder builder = new RecordBatchBuilder();
        final byte[] value = new byte[BATCH_BYTES / 16];
        final AppendResult result = new AppendResult();
        try
        {
            while (true)
            {
                once(log, claims, template, length, buffer, claim, builder, value, result);
                if (result.status == AppendResult.LOG_CLOSED)
                {
                    break;
                }
                if (result.status != AppendResult.OK || result.firstOffset != end[0])
                {
                    failure.set("append at " + end[0] + " answered " + result);
                    return;
                }
                end[0] = result.lastOffset + 1;
            }
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (!log.isClosed() && System.nanoTime() < deadline)
            {
                Thread.onSpinWait();
            }
            once(log, claims, template, length, buffer, claim, builder, value, result);
            if (result.status != AppendResult.LOG_CLOSED)
            {
                failure.set("an append after the close answered " + result);
            }
        }
        catch (final Throwable t)
        {
            final StringWriter trace = new StringWriter();
            t.printStackTrace(new PrintWriter(trace));
            failure.set("append at " + end[0] + " threw " + trace);
        }
    }

    private static void once(final PartitionLog log, final boolean claims, final ExpandableDirectByteBuffer template,
        final int length, final ExpandableDirectByteBuffer buffer, final BatchClaim claim, final RecordBatchBuilder builder,
        final byte[] value, final AppendResult result)
    {
        if (!claims)
        {
            buffer.putBytes(0, template, 0, length);
            log.append(buffer, 0, length, result);
            return;
        }
        if (log.claim(length + 4096, claim, result))
        {
            claim.wrap(builder);
            for (int i = 0; i < 16; i++)
            {
                builder.appendRecord(System.currentTimeMillis(), null, value);
            }
            log.commit(claim, builder.build(), result);
        }
    }
}
