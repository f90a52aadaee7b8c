package io.ferrite.log;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static io.ferrite.testing.Await.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Interrupts and the files a flush fsyncs. A JDK {@code FileChannel} is closed for everyone by a
 * thread interrupted inside (or before) an operation on it: a fetching thread interrupted while it
 * walked a segment's {@code .txnindex} closed the channel the writer appends entries with and the
 * flush fsyncs — every later ABORT of the partition failed, every walk answered READ_FAILED, and every
 * flush threw a {@code ClosedChannelException} the flusher took for a deleted segment's and ignored,
 * so the durable offset stopped with no failure recorded. Real logs, real threads, real interrupts.
 */
class TxnIndexInterruptTest
{
    private static final long PID = 7;

    @TempDir
    Path dir;

    private final Batches batches = new Batches();
    private final AppendResult result = new AppendResult();
    private int sequence;

    @Test
    void aReaderInterruptedWhileWalkingStopsNoAppendWalkOrFlush() throws Exception
    {
        try (LogManager logs = LogManager.open(LogManagerConfig.of(dir)))
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of());
            final List<String> expected = new ArrayList<>();
            expected.add(PID + "@" + abortedTransaction(log));

            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicInteger failedWalks = new AtomicInteger();
            final AtomicReference<Throwable> unexpected = new AtomicReference<>();
            final Thread reader = new Thread(() ->
            {
                final ByteBuffer scratch = ByteBuffer.allocate(34);
                try
                {
                    while (!stop.get())
                    {
                        if (log.transactions().collectAbortedTransactions(0, Long.MAX_VALUE, scratch, (p, f) -> { }) != PartitionLog.READ_OK)
                        {
                            failedWalks.incrementAndGet(); // its own interrupt: this walk fails, no other
                            Thread.interrupted();
                        }
                    }
                }
                catch (final Throwable t)
                {
                    unexpected.set(t);
                }
            }, "interrupted-reader");
            reader.start();
            try
            {
                await(() ->
                {
                    reader.interrupt();
                    assertEquals(expected, aborted(log), "a walk of another thread meanwhile");
                    return failedWalks.get() >= 20;
                }, Duration.ofSeconds(30), () -> "walks failed by the reader's interrupts: " + failedWalks.get());
            }
            finally
            {
                stop.set(true);
                reader.join(TimeUnit.SECONDS.toMillis(30));
            }
            assertFalse(reader.isAlive());
            assertNull(unexpected.get());

            expected.add(PID + "@" + abortedTransaction(log)); // its entry is appended
            assertEquals(expected, aborted(log));
            log.flush();
            assertEquals(log.logEndOffset(), log.durableOffset(), "the flush fsynced the index and moved the durable offset");
            assertNull(log.fsyncFailure());
        }
    }

    /**
     * A file closed under a flush while its segment is still in the log (here the flushing thread's
     * own interrupt closes the segment's {@code .log}) leaves bytes that can no longer be fsynced: a
     * failed fsync, recorded as one — not a segment retention deleted meanwhile, which is ignored.
     */
    @Test
    void aFileClosedUnderTheFlushOfASegmentStillInTheLogIsAFailedFsync() throws Exception
    {
        final LogManager logs = LogManager.open(LogManagerConfig.of(dir));
        try
        {
            final PartitionLog log = logs.createLog("t", 0, Map.of());
            batches.records(2, 0, System.currentTimeMillis());
            log.append(batches.buffer, 0, batches.length, result);
            assertEquals(AppendResult.OK, result.status, result.toString());
            final long durable = log.durableOffset();
            assertTrue(durable < log.logEndOffset());

            final AtomicReference<Throwable> thrown = new AtomicReference<>();
            final Thread flusher = new Thread(() ->
            {
                Thread.currentThread().interrupt();
                try
                {
                    log.flush();
                }
                catch (final Throwable t)
                {
                    thrown.set(t);
                }
            }, "interrupted-flusher");
            flusher.start();
            flusher.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(flusher.isAlive());

            assertInstanceOf(IOException.class, thrown.get());
            assertFalse(thrown.get() instanceof ClosedChannelException, "not taken for a deleted segment's: " + thrown.get());
            assertNotNull(log.fsyncFailure(), "recorded as a failed fsync");
            assertEquals(durable, log.durableOffset());
        }
        finally
        {
            try
            {
                logs.close();
            }
            catch (final IOException closeOfAFailedLog)
            {
                // its clean close may not flush a log whose fsync failed: what the test checks is above
            }
        }
    }

    /** A transaction of {@link #PID} and its ABORT marker; returns the transaction's first offset. */
    private long abortedTransaction(final PartitionLog log)
    {
        batches.producer(2, PID, (short)0, sequence, true, TransactionStateTest.T0);
        log.append(batches.buffer, 0, batches.length, result);
        assertEquals(AppendResult.OK, result.status, result.toString());
        sequence += 2;
        final long first = result.firstOffset;
        log.transactions().appendMarker(PID, (short)0, 0, false, false, result);
        assertEquals(AppendResult.OK, result.status, "the ABORT and its entry: " + result);
        return first;
    }

    private static List<String> aborted(final PartitionLog log)
    {
        final List<String> seen = new ArrayList<>();
        assertEquals(PartitionLog.READ_OK, log.transactions().collectAbortedTransactions(0, log.logEndOffset(), ByteBuffer.allocate(34),
            (p, f) -> seen.add(p + "@" + f)));
        return seen;
    }
}
