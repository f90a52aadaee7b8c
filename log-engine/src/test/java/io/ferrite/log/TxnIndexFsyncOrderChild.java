package io.ferrite.log;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@link TxnIndexFsyncOrderTest}'s child, run with the fsync-recording shim: one partition in fsync
 * durability, two aborted transactions of one producer. Before each ABORT it writes {@code abort}
 * to the shim's record, and the durability listener writes {@code durable <offset>} there when the
 * durable offset moves, so the record shows each flush's fsyncs and the move after them in order;
 * {@code close} before its close.
 *
 * <p>{@code TxnIndexFsyncOrderChild <log dir> <record file>}; prints {@code DONE} at the end.
 */
public final class TxnIndexFsyncOrderChild
{
    private TxnIndexFsyncOrderChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final Path record = Path.of(args[1]);
        final LinkedBlockingQueue<Long> told = new LinkedBlockingQueue<>();
        final DurabilityListener listener = (log, durableOffset) ->
        {
            note(record, "durable " + durableOffset);
            told.add(durableOffset);
        };
        final Batches batches = new Batches();
        final AppendResult result = new AppendResult();
        try (LogManager logs = LogManager.open(LogManagerConfig.of(Path.of(args[0])).withDurabilityListener(listener)))
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of(LogConfig.DURABILITY, LogConfig.DURABILITY_FSYNC));
            for (int txn = 0; txn < 2; txn++)
            {
                batches.producer(2, 7, (short)0, 2 * txn, true, TransactionStateTest.T0);
                log.append(batches.buffer, 0, batches.length, result);
                check(result.status == AppendResult.OK, result);
                awaitTold(told, log.logEndOffset());
                note(record, "abort");
                log.transactions().appendMarker(7, (short)0, 0, false, false, result);
                check(result.status == AppendResult.OK, result);
                awaitTold(told, log.logEndOffset());
            }
            note(record, "close"); // the close's own fsyncs follow
        }
        System.out.println("DONE");
    }

    private static void check(final boolean ok, final AppendResult result)
    {
        if (!ok)
        {
            System.out.println("FAIL " + result);
            System.exit(1);
        }
    }

    /** Waits until the listener was told of {@code offset} (awaitDurable could return before it wrote its line). */
    private static void awaitTold(final LinkedBlockingQueue<Long> told, final long offset) throws InterruptedException
    {
        for (Long got = told.poll(30, TimeUnit.SECONDS); got == null || got < offset; got = told.poll(30, TimeUnit.SECONDS))
        {
            if (got == null)
            {
                System.out.println("FAIL no fsync made offset " + offset + " durable");
                System.exit(1);
            }
        }
    }

    /** One line to the record, in one append (as the shim writes its own). */
    private static void note(final Path record, final String line)
    {
        try
        {
            Files.write(record, (line + "\n").getBytes(StandardCharsets.US_ASCII), StandardOpenOption.CREATE,
                StandardOpenOption.APPEND, StandardOpenOption.WRITE);
        }
        catch (final java.io.IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }
}
